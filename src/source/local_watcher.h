// LocalWatcher: inotify over the directory trees local sources read, so that a job is woken when
// a file lands rather than at its next poll. Events only wake: what a job loads is still what
// its listing returns (local_source.h: the settle rule and the offset included), so a lost or
// spurious event costs at most latency or one listing.
//
// Contract
// - Start makes the inotify instance and the thread that reads it; an error (inotify missing,
//   out of instances) names why. The destructor stops the thread.
// - Watch(root, descend) watches the directory `root` and the directories below it that
//   `descend` accepts (a source's glob could match below them), but hidden ('.' names) and
//   symlinked ones, and each such directory created or moved in later; the watch ends when the
//   returned handle is destroyed (a directory stays watched while another handle's root and
//   `descend` cover it). A root that does not exist is not watched (its source polls); a watch the
//   kernel refuses (fs.inotify.max_user_watches) is logged once and the source polls.
// - The listener (SetListener; events before it are dropped) is called on the watcher's thread,
//   without the watcher's lock, with the following; SetListener returns once no call of the
//   previous listener is in flight (its owner may go after SetListener(nullptr)):
//   - (path, false) for a file closed after writing (IN_CLOSE_WRITE) or moved into a watched
//     directory (IN_MOVED_TO);
//   - (path, true) for a directory created or moved in below a root and watched, once its watch
//     is added (files may have landed in it before: its jobs list);
//   - (root, true) for every watched root when the kernel's queue overflowed (IN_Q_OVERFLOW:
//     events were lost, so every job watching lists).
// - Landed(path, changed_ns): true when an event reported `path` closed after writing or moved
//   in no earlier than `changed_ns` (the later of its mtime and ctime, since the epoch): the
//   file is whole as its writer left it (local_source.h's settle rule takes it at once). Events
//   are remembered for kRemember.
// - SimulateOverflow makes the thread act as on IN_Q_OVERFLOW (the queue's size is a system
//   setting a test cannot lower).
// - Thread-safety: all methods may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"

namespace millrace::source {

class LocalWatcher {
 public:
  using Listener = std::function<void(const std::string& path, bool directory)>;
  // Whether a directory below a root is to be watched.
  using Descend = std::function<bool(const std::string& directory)>;

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

  void SetListener(Listener listener) EXCLUDES(listener_mu_);
  std::unique_ptr<Handle> Watch(const std::string& root, Descend descend) EXCLUDES(mu_);
  void SimulateOverflow();
  bool Landed(const std::string& path, int64_t changed_ns) const EXCLUDES(mu_);

  static constexpr std::chrono::seconds kRemember{60};

  // Directories watched now (for tests).
  size_t watched_directories() const EXCLUDES(mu_);

 private:
  LocalWatcher(int inotify_fd, int wake_fd) : inotify_fd_(inotify_fd), wake_fd_(wake_fd) {}

  void Run();
  // Watches `directory` and the directories below it that are to be (Wanted).
  void AddTree(const std::string& directory) REQUIRES(mu_);
  // A directory below a root that a handle's `descend` accepts.
  bool Wanted(const std::string& directory) const REQUIRES(mu_);
  void Unwatch(const std::string& root) EXCLUDES(mu_);
  // Reads and dispatches what inotify has; false once the watcher stops.
  bool Drain();
  void Notify(const std::vector<std::pair<std::string, bool>>& events) EXCLUDES(listener_mu_);

  const int inotify_fd_;
  const int wake_fd_;  // an eventfd: stop, or a simulated overflow
  std::thread thread_;

  // Held while the listener runs (see SetListener); taken before mu_, never inside it.
  Mutex listener_mu_;
  Listener listener_ GUARDED_BY(listener_mu_);
  mutable Mutex mu_;
  std::map<int, std::string> directories_ GUARDED_BY(mu_);  // watch descriptor -> path
  std::multimap<std::string, Descend> roots_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  bool overflow_ GUARDED_BY(mu_) = false;  // SimulateOverflow was called
  bool refused_logged_ GUARDED_BY(mu_) = false;
  // Files reported closed or moved in -> when (ns since the epoch), for Landed.
  std::unordered_map<std::string, int64_t> landed_ GUARDED_BY(mu_);
};

}  // namespace millrace::source
