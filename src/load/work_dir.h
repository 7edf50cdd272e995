// Work directories: where a batch's files are put for DuckDB's readers, and the pool that
// hands them out again.
//
// Contract
// - WorkDirs::Take gives a directory under the pool's root to one holder (a WorkDir) until the
//   WorkDir is destroyed. Each Take returns a path never returned before by this pool (a kept
//   directory is renamed), so nothing keyed by path (a reader's cache) can mistake one batch's
//   file for another's.
// - Giving a directory back empties it for the next holder: symlinks and subdirectories are
//   removed; up to kKeptFiles regular files are kept, truncated to 0 bytes (their inodes, not
//   their bytes), the others removed. A holder may therefore find empty regular files of
//   earlier holders: it writes the files it uses from their start (common/file_rewrite.h, not
//   O_TRUNC, which would flush each one to disk on close) and removes a name before it links
//   one. Why: a file created anew costs an inode allocation, and ext4 without a
//   journal scans the inodes freed in the last seconds on every one; with a new directory per
//   batch of small files, a third of the server's CPU went there (perf, 20,000 objects).
// - At most kIdleDirs directories wait in the pool; one given back past that is removed. A
//   waiting directory that is gone (its root was removed) is passed over for a new one. A
//   directory that cannot be emptied is removed, not kept. The pool's last owner (its last
//   WorkDir, possibly) removes the directories waiting in it.
// - Thread-safety: Take may be called from any thread; a WorkDir may be destroyed on any thread,
//   after or before its pool's last other owner.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"
#include "sql/doris_table_functions.h"

namespace millrace::load {

class WorkDir;

class WorkDirs : public std::enable_shared_from_this<WorkDirs> {
 public:
  static constexpr size_t kIdleDirs = 4;
  static constexpr size_t kKeptFiles = 1024;

  // A pool for directories under `root` (created when first needed).
  static std::shared_ptr<WorkDirs> Under(std::string root);
  ~WorkDirs();  // removes the directories waiting in the pool

  const std::string& root() const { return root_; }
  Result<std::unique_ptr<WorkDir>> Take() EXCLUDES(mu_);
  // Directories waiting for a holder (for tests).
  size_t idle() const EXCLUDES(mu_);

 private:
  friend class WorkDir;
  WorkDirs(std::string root, uint64_t id) : root_(std::move(root)), id_(id) {}
  // A waiting directory under a new name; "" when none could be had.
  std::string Reuse() EXCLUDES(mu_);
  Result<std::string> CreateNew();
  void GiveBack(const std::string& path) EXCLUDES(mu_);

  const std::string root_;
  const uint64_t id_;  // names this pool's directories apart from another's under the root
  mutable Mutex mu_;
  std::vector<std::string> idle_ GUARDED_BY(mu_);
  std::atomic<uint64_t> next_name_{0};
};

class WorkDir final : public sql::StatementResources {
 public:
  ~WorkDir() override;  // gives the directory back to its pool
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  friend class WorkDirs;
  WorkDir(std::shared_ptr<WorkDirs> pool, std::string path)
      : pool_(std::move(pool)), path_(std::move(path)) {}
  const std::shared_ptr<WorkDirs> pool_;
  const std::string path_;
};

}  // namespace millrace::load
