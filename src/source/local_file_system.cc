#include "source/local_file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace millrace::source {
namespace {

FileStat FromStat(const struct stat& st) {
  FileStat out;
  out.is_directory = S_ISDIR(st.st_mode);
  out.is_regular = S_ISREG(st.st_mode);
  out.size = static_cast<uint64_t>(st.st_size);
  out.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  out.ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
  out.inode = static_cast<uint64_t>(st.st_ino);
  return out;
}

class PosixReadableFile final : public ReadableFile {
 public:
  PosixReadableFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixReadableFile() override { ::close(fd_); }
  PosixReadableFile(const PosixReadableFile&) = delete;
  PosixReadableFile& operator=(const PosixReadableFile&) = delete;

  Result<FileStat> Stat() override {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return ErrnoStatus(errno, "cannot stat", path_);
    return FromStat(st);
  }

  std::string PinnedPath() const override { return "/proc/self/fd/" + std::to_string(fd_); }

  Result<size_t> Read(char* buffer, size_t n) override {
    while (true) {
      const ssize_t got = ::read(fd_, buffer, n);
      if (got >= 0) return static_cast<size_t>(got);
      if (errno != EINTR) return ErrnoStatus(errno, "cannot read", path_);
    }
  }

 private:
  const int fd_;
  const std::string path_;
};

class PosixFileSystem final : public LocalFileSystem {
 public:
  Result<std::vector<DirectoryEntry>> ListDirectory(const std::string& path) override {
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) return ErrnoStatus(errno, "cannot list directory", path);
    std::vector<DirectoryEntry> entries;
    while (true) {
      errno = 0;
      const struct dirent* entry = ::readdir(dir);
      if (entry == nullptr) break;
      const std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      bool is_symlink = entry->d_type == DT_LNK;
      if (entry->d_type == DT_UNKNOWN) {  // some file systems do not fill d_type
        struct stat st {};
        const std::string full = path + "/" + std::string(name);
        is_symlink = ::lstat(full.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
      }
      entries.push_back({std::string(name), is_symlink});
    }
    const int error = errno;
    ::closedir(dir);
    if (error != 0) return ErrnoStatus(error, "cannot list directory", path);
    return entries;
  }

  Result<FileStat> Stat(const std::string& path) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(errno, "cannot stat", path);
    return FromStat(st);
  }

  Result<std::unique_ptr<ReadableFile>> OpenForRead(const std::string& path) override {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return ErrnoStatus(errno, "cannot open", path);
    auto file = std::make_unique<PosixReadableFile>(fd, path);
    struct stat st {};
    if (::fstat(fd, &st) != 0) return ErrnoStatus(errno, "cannot stat", path);
    if (!S_ISREG(st.st_mode)) {
      return Status::InvalidArgument(path + " is not a regular file (a FIFO, socket or device)");
    }
    if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
      return ErrnoStatus(errno, "cannot read", path);
    }
    return std::unique_ptr<ReadableFile>(std::move(file));
  }

  Result<std::string> Resolve(const std::string& path) override {
    std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr),
                                                         &std::free);
    if (resolved == nullptr) return ErrnoStatus(errno, "cannot resolve", path);
    return std::string(resolved.get());
  }

  Status Symlink(const std::string& target, const std::string& link_path) override {
    if (::symlink(target.c_str(), link_path.c_str()) == 0) return Status::Ok();
    // A work directory may hold an emptied file of an earlier batch under the name
    // (load/work_dir.h).
    if (errno == EEXIST && ::unlink(link_path.c_str()) == 0 &&
        ::symlink(target.c_str(), link_path.c_str()) == 0) {
      return Status::Ok();
    }
    return ErrnoStatus(errno, "cannot link", link_path);
  }
};

}  // namespace

LocalFileSystem* LocalFileSystem::Posix() {
  static PosixFileSystem file_system;
  return &file_system;
}

Status ErrnoStatus(int error, const std::string& what, const std::string& path) {
  std::string message = what + " " + path + ": " + std::strerror(error);
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return Status::NotFound(std::move(message));
    case EACCES:
    case EPERM:
      return Status::PermissionDenied(std::move(message));
    default:
      return Status::IoError(std::move(message));
  }
}

}  // namespace millrace::source
