// StdioFile: a C stdio stream owned by a unique_ptr, closed when it goes out of scope.
//
// Contract
// - OpenStdio(path, mode) is std::fopen's; the result is null when the file cannot be opened
//   (errno says why). A stream written through must be checked with ferror before it is
//   dropped: the close's own error is not reported.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

namespace millrace {

struct StdioCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using StdioFile = std::unique_ptr<std::FILE, StdioCloser>;

inline StdioFile OpenStdio(const std::string& path, const char* mode) {
  return StdioFile(std::fopen(path.c_str(), mode));
}

}  // namespace millrace
