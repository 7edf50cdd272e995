#include "load/work_dir.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/file_rewrite.h"

namespace millrace::load {
namespace {

// Cuts a kept file to 0 bytes through a descriptor closed at once (a FileRewrite of nothing):
// ext4 marks a file cut to 0 for a flush to disk at its next close (common/file_rewrite.h says
// why that matters), and the close here, with nothing to flush, is that close. Cut by path, the
// next holder's close would write its bytes to disk on the spot.
bool Cut(const std::filesystem::path& file) {
  auto rewrite = FileRewrite::Open(file.string());
  return rewrite.ok() && (*rewrite)->Finish().ok();
}

// Empties `path` as the contract says; false when something could not be removed or truncated.
bool Empty(const std::string& path) {
  std::error_code ec;
  size_t kept = 0;
  std::vector<std::filesystem::path> doomed;
  for (auto it = std::filesystem::directory_iterator(path, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const auto status = it->symlink_status(ec);
    if (ec) return false;
    if (std::filesystem::is_regular_file(status) && kept < WorkDirs::kKeptFiles) {
      ++kept;
      if (it->file_size(ec) > 0 && !ec && !Cut(it->path())) return false;
      if (ec) return false;
      continue;
    }
    doomed.push_back(it->path());
  }
  if (ec) return false;
  for (const auto& entry : doomed) {
    std::filesystem::remove_all(entry, ec);
    if (ec) return false;
  }
  return true;
}

}  // namespace

std::shared_ptr<WorkDirs> WorkDirs::Under(std::string root) {
  static std::atomic<uint64_t> pools{0};
  return std::shared_ptr<WorkDirs>(new WorkDirs(std::move(root), pools.fetch_add(1)));
}

WorkDirs::~WorkDirs() {
  MutexLock lock(&mu_);
  for (const std::string& path : idle_) {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);  // best effort: a leftover is cleaned at start-up
  }
}

size_t WorkDirs::idle() const {
  MutexLock lock(&mu_);
  return idle_.size();
}

Result<std::unique_ptr<WorkDir>> WorkDirs::Take() {
  std::string path = Reuse();
  if (path.empty()) {
    MR_ASSIGN_OR_RETURN(path, CreateNew());
  }
  return std::unique_ptr<WorkDir>(new WorkDir(shared_from_this(), std::move(path)));
}

std::string WorkDirs::Reuse() {
  std::string old_path;
  {
    MutexLock lock(&mu_);
    if (idle_.empty()) return "";
    old_path = std::move(idle_.back());
    idle_.pop_back();
  }
  // A new name for every holder (see the contract); each pool names its own ("reused-<pool>-")
  // apart from mkdtemp's ("batch-"), and never over an existing one.
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::string new_path =
        root_ + "/reused-" + std::to_string(id_) + "-" + std::to_string(next_name_.fetch_add(1));
    if (::renameat2(AT_FDCWD, old_path.c_str(), AT_FDCWD, new_path.c_str(), RENAME_NOREPLACE) ==
        0) {
      return new_path;
    }
    if (errno != EEXIST) break;  // gone (its root removed): a new one is made
  }
  std::error_code ec;
  std::filesystem::remove_all(old_path, ec);
  return "";
}

Result<std::string> WorkDirs::CreateNew() {
  std::error_code ec;
  std::filesystem::create_directories(root_, ec);
  if (ec) return Status::IoError("cannot create work directory '" + root_ + "': " + ec.message());
  std::string templ = root_ + "/batch-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    return Status::IoError("cannot create a work directory under '" + root_ +
                           "': " + std::strerror(errno));
  }
  return templ;
}

void WorkDirs::GiveBack(const std::string& path) {
  bool keep = Empty(path);
  if (keep) {
    MutexLock lock(&mu_);
    keep = idle_.size() < kIdleDirs;
    if (keep) idle_.push_back(path);
  }
  if (!keep) {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);  // best effort: a leftover is cleaned at start-up
  }
}

WorkDir::~WorkDir() {
  pool_->GiveBack(path_);
}

}  // namespace millrace::load
