#pragma once

// Where a test finds the tree's files, the npm packages and the built binaries. The absolute
// paths are compiled into test_paths.cc alone: a path on every test's command line would give
// each clone of the tree its own compile cache (ccache keys on the command line), so a second
// clone would rebuild every test instead of taking them from the cache.

#include <string>
#include <string_view>

namespace millrace::testing {

// `relative` under the source tree, e.g. SourcePath("docs/jobs.md").
std::string SourcePath(std::string_view relative);
// `relative` under third_party/npm/node_modules, e.g. NpmPath("s3rver/bin/s3rver.js").
std::string NpmPath(std::string_view relative);
// `relative` under the build directory, e.g. BinaryPath("tests/console/screenshots").
std::string BinaryPath(std::string_view relative);
// The built server binary.
std::string MillraceBinary();

}  // namespace millrace::testing
