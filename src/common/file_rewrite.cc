#include "common/file_rewrite.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace millrace {
namespace {

Status IoError(const char* what, const std::string& path) {
  return Status::IoError(std::string(what) + " '" + path + "': " + std::strerror(errno));
}

}  // namespace

Result<std::unique_ptr<FileRewrite>> FileRewrite::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot create", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    Status error = IoError("cannot stat", path);
    ::close(fd);
    return error;
  }
  return std::unique_ptr<FileRewrite>(new FileRewrite(path, fd, static_cast<uint64_t>(st.st_size)));
}

FileRewrite::~FileRewrite() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(path_.c_str());  // not finished: what it holds is not a whole file
}

Status FileRewrite::Write(std::string_view bytes) {
  if (fd_ < 0) return Status::Internal("write to '" + path_ + "' after it was finished");
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("cannot write", path_);
    bytes.remove_prefix(static_cast<size_t>(n));
    written_ += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status FileRewrite::Finish() {
  if (fd_ < 0) return Status::Internal("'" + path_ + "' finished twice");
  Status status = Status::Ok();
  if (old_size_ > written_ && ::ftruncate(fd_, static_cast<off_t>(written_)) != 0) {
    status = IoError("cannot cut", path_);
  }
  if (::close(fd_) != 0 && status.ok()) status = IoError("cannot write", path_);
  fd_ = -1;
  if (!status.ok()) ::unlink(path_.c_str());
  return status;
}

}  // namespace millrace
