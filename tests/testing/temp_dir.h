// Test support: a temporary directory removed with its contents when the object dies.
#pragma once

#include <string>

namespace millrace::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Resident set size of this process, in bytes (from /proc/self/statm).
size_t CurrentRssBytes();

}  // namespace millrace::testing
