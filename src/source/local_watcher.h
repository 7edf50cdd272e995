// LocalWatcher: inotify over the directory trees local sources read, so that a job is woken when
// a file lands rather than at its next poll. Events only wake: what a job loads is still what
// its listing returns (local_source.h: the settle rule and the offset included), so a lost or
// spurious event costs at most latency or one listing.
//
// Contract
// - Start makes the inotify instance and the thread that reads it; an error (inotify missing,
//   out of instances) names why. The destructor stops the thread.
// - Watch(root) watches the directory `root` and every directory below it but hidden ('.'
//   names) and symlinked ones, and each directory created or moved in below it later; the watch
//   ends when the returned handle is destroyed (a directory stays watched while another handle's
//   root covers it). A root that does not exist is not watched (its source polls); a watch the
//   kernel refuses (fs.inotify.max_user_watches) is logged once and the source polls.
// - The listener (SetListener; events before it are dropped) is called on the watcher's thread,
//   without the watcher's lock, with:
//   - (path, false) for a file closed after writing (IN_CLOSE_WRITE) or moved into a watched
//     directory (IN_MOVED_TO);
//   - (path, true) for a directory created or moved in below a root, once its watch is added
//     (files may have landed in it before: its jobs list);
//   - (root, true) for every watched root when the kernel's queue overflowed (IN_Q_OVERFLOW:
//     events were lost, so every job watching lists).
// - SimulateOverflow makes the thread act as on IN_Q_OVERFLOW (the queue's size is a system
//   setting a test cannot lower).
// - Thread-safety: all methods may be called from any thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"

namespace millrace::source {

class LocalWatcher {
 public:
  using Listener = std::function<void(const std::string& path, bool directory)>;

  // Ends its watch when destroyed; must not outlive the watcher.
  class Handle {
   public:
    Handle(LocalWatcher* watcher, std::string root) : watcher_(watcher), root_(std::move(root)) {}
    ~Handle() { watcher_->Unwatch(root_); }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;

   private:
    LocalWatcher* const watcher_;
    const std::string root_;
  };

  static Result<std::unique_ptr<LocalWatcher>> Start();
  ~LocalWatcher();
  LocalWatcher(const LocalWatcher&) = delete;
  LocalWatcher& operator=(const LocalWatcher&) = delete;

  void SetListener(Listener listener) EXCLUDES(mu_);
  std::unique_ptr<Handle> Watch(const std::string& root) EXCLUDES(mu_);
  void SimulateOverflow();

  // Directories watched now (for tests).
  size_t watched_directories() const EXCLUDES(mu_);

 private:
  LocalWatcher(int inotify_fd, int wake_fd) : inotify_fd_(inotify_fd), wake_fd_(wake_fd) {}

  void Run();
  // Watches `directory` and the directories below it (not hidden, not symlinked).
  void AddTree(const std::string& directory) REQUIRES(mu_);
  void Unwatch(const std::string& root) EXCLUDES(mu_);
  // Reads and dispatches what inotify has; false once the watcher stops.
  bool Drain();
  void Notify(const std::vector<std::pair<std::string, bool>>& events) EXCLUDES(mu_);

  const int inotify_fd_;
  const int wake_fd_;  // an eventfd: stop, or a simulated overflow
  std::thread thread_;

  mutable Mutex mu_;
  Listener listener_ GUARDED_BY(mu_);
  std::map<int, std::string> directories_ GUARDED_BY(mu_);  // watch descriptor -> path
  std::multiset<std::string> roots_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  bool overflow_ GUARDED_BY(mu_) = false;  // SimulateOverflow was called
  bool refused_logged_ GUARDED_BY(mu_) = false;
};

}  // namespace millrace::source
