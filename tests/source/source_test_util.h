// Helpers shared by the source tests (and the S3 fault tests, which download files too).
#pragma once

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "source/file_source.h"

namespace millrace::source {

inline std::vector<std::string> Keys(const Listing& listing) {
  std::vector<std::string> keys;
  for (const FileInfo& f : listing.files)
    keys.push_back(f.key);
  return keys;
}

// The whole file as bytes; "" when it cannot be read.
inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace millrace::source
