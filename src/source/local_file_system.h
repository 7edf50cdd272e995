// LocalFileSystem: the few filesystem calls a LocalSource makes, behind an interface so tests
// can inject the failures a real disk produces rarely (EIO mid-read) around the real calls.
//
// Contract
// - Errors are Status values naming the path: ENOENT/ENOTDIR -> NOT_FOUND,
//   EACCES/EPERM -> PERMISSION_DENIED, anything else -> IO_ERROR with strerror's text.
// - Thread-safety: the default (POSIX) file system is stateless and may be used concurrently;
//   a ReadableFile belongs to one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"

namespace millrace::source {

struct FileStat {
  bool is_directory = false;
  bool is_regular = false;
  uint64_t size = 0;
  int64_t mtime_ns = 0;  // since the epoch
  int64_t ctime_ns = 0;  // inode change time: cannot be set back by the writer
  uint64_t inode = 0;

  // Same file in the same state: a writer that touched it changed one of these.
  bool SameVersion(const FileStat& other) const {
    return size == other.size && mtime_ns == other.mtime_ns && ctime_ns == other.ctime_ns &&
           inode == other.inode;
  }
};

struct DirectoryEntry {
  std::string name;
  bool is_symlink = false;  // symlinked directories are not descended into (no cycles)
};

class ReadableFile {
 public:
  virtual ~ReadableFile() = default;
  virtual Result<FileStat> Stat() = 0;
  // Reads up to `n` bytes; 0 at end of file.
  virtual Result<size_t> Read(char* buffer, size_t n) = 0;
  // A path that opens this very file while it stays open, whatever its own path names by then
  // (/proc/self/fd/N); "" where there is none (a test's file system).
  virtual std::string PinnedPath() const { return ""; }
};

class LocalFileSystem {
 public:
  virtual ~LocalFileSystem() = default;
  // Entries of `path` except "." and "..", in no particular order.
  virtual Result<std::vector<DirectoryEntry>> ListDirectory(const std::string& path) = 0;
  // Follows symlinks.
  virtual Result<FileStat> Stat(const std::string& path) = 0;
  virtual Result<std::unique_ptr<ReadableFile>> OpenForRead(const std::string& path) = 0;
  // The canonical absolute path of an existing `path`: symlinks, "." and ".." resolved.
  virtual Result<std::string> Resolve(const std::string& path) = 0;
  // A symbolic link at `link_path` to `target`, replacing a file of that name. NOT_SUPPORTED
  // where the file system cannot (a test's file system).
  virtual Status Symlink(const std::string& target, const std::string& link_path) {
    return Status::NotSupported("cannot link " + target);
  }

  // The real file system (POSIX calls). Stateless; lives for the whole process.
  static LocalFileSystem* Posix();
};

// The Status for a failed call on `path`, from errno's value.
Status ErrnoStatus(int error, const std::string& what, const std::string& path);

}  // namespace millrace::source
