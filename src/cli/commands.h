// The `millrace` command line: subcommands, each with --help, exit status 0 on success and a
// one-line reason on stderr otherwise (SPEC section 6).
#pragma once

#include <string>
#include <vector>

namespace millrace::cli {

// Runs `millrace <args...>` (args excludes the program name) and returns the exit status.
int Main(const std::vector<std::string>& args);

int RunServe(const std::vector<std::string>& args);
int RunS3(const std::vector<std::string>& args);
int RunVersion(const std::vector<std::string>& args);

}  // namespace millrace::cli
