// FileRewrite: writes a file anew from its start, for files that are rewritten in place (a
// work directory's kept files, load/work_dir.h).
//
// Contract
// - Open creates the file when missing and opens it for writing from byte 0 without cutting
//   it; Write appends in order; Finish cuts whatever an earlier holder left past the bytes
//   written and closes. After a Finish that succeeded the file holds exactly the bytes written.
// - Why not O_TRUNC: ext4 (auto_da_alloc) marks a file truncated to 0 bytes and, when it is
//   next closed, starts writing its new bytes to disk on the spot, so that a file "replaced by
//   truncate" is not found empty after a crash. A work file needs no such care, and on small
//   files that flush took ~7% of the server's CPU plus a disk write per file (perf, 20,000
//   objects of 2 KB). Cutting to the written length only when the file was longer never
//   truncates to 0 unless nothing was written.
// - A partial file never passes for a whole: a FileRewrite destroyed without a Finish, or whose
//   Finish failed, removes its file. Errors name the path.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

namespace millrace {

class FileRewrite {
 public:
  static Result<std::unique_ptr<FileRewrite>> Open(const std::string& path);
  ~FileRewrite();
  FileRewrite(const FileRewrite&) = delete;
  FileRewrite& operator=(const FileRewrite&) = delete;

  Status Write(std::string_view bytes);
  Status Finish();

 private:
  FileRewrite(std::string path, int fd, uint64_t old_size)
      : path_(std::move(path)), fd_(fd), old_size_(old_size) {}

  const std::string path_;
  int fd_;  // -1 once closed
  const uint64_t old_size_;
  uint64_t written_ = 0;
};

}  // namespace millrace
