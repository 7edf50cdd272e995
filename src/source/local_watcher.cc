#include "source/local_watcher.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/logging.h"

namespace millrace::source {
namespace {

// A root may be a symlink to a directory; the directories below are never followed (AddTree).
constexpr uint32_t kDirectoryMask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_ONLYDIR;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool Hidden(const std::string& name) {
  return !name.empty() && name.front() == '.';
}

// True when `path` is `root` or below it.
bool Under(const std::string& path, const std::string& root) {
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

}  // namespace

Result<std::unique_ptr<LocalWatcher>> LocalWatcher::Start() {
  const int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return Status::Unavailable(std::string("inotify: ") + std::strerror(errno));
  const int wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake < 0) {
    const int error = errno;
    close(fd);
    return Status::Unavailable(std::string("eventfd: ") + std::strerror(error));
  }
  std::unique_ptr<LocalWatcher> watcher(new LocalWatcher(fd, wake));
  watcher->thread_ = std::thread([w = watcher.get()] { w->Run(); });
  return watcher;
}

LocalWatcher::~LocalWatcher() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  const uint64_t one = 1;
  if (write(wake_fd_, &one, sizeof(one)) < 0) {
    // The eventfd cannot be full; the thread also sees stopping_ at its next event.
  }
  if (thread_.joinable()) thread_.join();
  close(inotify_fd_);
  close(wake_fd_);
}

void LocalWatcher::SetListener(Listener listener) {
  MutexLock lock(&listener_mu_);
  listener_ = std::move(listener);
}

std::unique_ptr<LocalWatcher::Handle> LocalWatcher::Watch(const std::string& root,
                                                          Descend descend) {
  MutexLock lock(&mu_);
  roots_.emplace(root, std::move(descend));
  AddTree(root);
  return std::make_unique<Handle>(this, root);
}

void LocalWatcher::AddTree(const std::string& directory) {
  // Under mu_ across the system call: an event of the new watch must find its path in
  // directories_ when the thread reads it.
  const int wd = inotify_add_watch(inotify_fd_, directory.c_str(), kDirectoryMask);
  if (wd < 0) {
    if (errno != ENOENT && errno != ENOTDIR && !refused_logged_) {
      refused_logged_ = true;
      MR_LOG(kWarning) << "cannot watch " << directory << " (" << std::strerror(errno)
                       << "); its jobs find new files by polling";
    }
    return;
  }
  directories_[wd] = directory;
  std::error_code error;
  for (std::filesystem::directory_iterator it(directory, error), end; !error && it != end;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::error_code type_error;
    if (Hidden(name) || it->is_symlink(type_error) || !it->is_directory(type_error)) continue;
    if (Wanted(it->path().string())) AddTree(it->path().string());
  }
}

bool LocalWatcher::Wanted(const std::string& directory) const {
  return std::any_of(roots_.begin(), roots_.end(), [&](const auto& root) {
    return Under(directory, root.first) &&
           (directory == root.first || root.second == nullptr || root.second(directory));
  });
}

void LocalWatcher::Unwatch(const std::string& root) {
  MutexLock lock(&mu_);
  if (auto it = roots_.find(root); it != roots_.end()) roots_.erase(it);
  for (auto it = directories_.begin(); it != directories_.end();) {
    if (Wanted(it->second)) {
      ++it;
      continue;
    }
    inotify_rm_watch(inotify_fd_, it->first);
    it = directories_.erase(it);
  }
}

void LocalWatcher::SimulateOverflow() {
  {
    MutexLock lock(&mu_);
    overflow_ = true;
  }
  const uint64_t one = 1;
  if (write(wake_fd_, &one, sizeof(one)) < 0) {
    // As in the destructor.
  }
}

bool LocalWatcher::Landed(const std::string& path, int64_t changed_ns) const {
  MutexLock lock(&mu_);
  auto it = landed_.find(path);
  return it != landed_.end() && it->second >= changed_ns;
}

size_t LocalWatcher::watched_directories() const {
  MutexLock lock(&mu_);
  return directories_.size();
}

void LocalWatcher::Run() {
  pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  while (true) {
    if (poll(fds, 2, -1) < 0 && errno != EINTR) {
      MR_LOG(kError) << "watching local directories stopped: " << std::strerror(errno)
                     << "; jobs find new files by polling";
      return;
    }
    if ((fds[1].revents & POLLIN) != 0) {
      uint64_t count = 0;
      if (read(wake_fd_, &count, sizeof(count)) < 0) {
        // Nothing to read: a spurious wake-up.
      }
    }
    if (!Drain()) return;
  }
}

bool LocalWatcher::Drain() {
  std::vector<std::pair<std::string, bool>> events;
  bool overflow = false;
  alignas(inotify_event) char buffer[64 * 1024];
  while (true) {
    const ssize_t n = read(inotify_fd_, buffer, sizeof(buffer));
    if (n <= 0) break;  // EAGAIN: all read
    MutexLock lock(&mu_);
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      if ((event->mask & IN_Q_OVERFLOW) != 0) {
        overflow = true;
        continue;
      }
      auto dir = directories_.find(event->wd);
      if (dir == directories_.end()) continue;  // a watch removed meanwhile
      if ((event->mask & IN_IGNORED) != 0) {
        directories_.erase(dir);  // its directory is gone
        continue;
      }
      if (event->len == 0) continue;
      const std::string name(event->name);
      const std::string path = dir->second + "/" + name;
      if ((event->mask & IN_ISDIR) != 0) {
        if ((event->mask & (IN_CREATE | IN_MOVED_TO)) != 0 && !Hidden(name) && Wanted(path)) {
          AddTree(path);
          events.emplace_back(path, true);
        }
      } else if ((event->mask & (IN_CLOSE_WRITE | IN_MOVED_TO)) != 0) {
        landed_[path] = NowNs();
        events.emplace_back(path, false);
      }
    }
  }
  {
    MutexLock lock(&mu_);
    if (stopping_) return false;
    // Forget what no listing needs any more (a file settles by time within kRemember).
    if (landed_.size() > 4096) {
      const int64_t oldest =
          NowNs() - std::chrono::duration_cast<std::chrono::nanoseconds>(kRemember).count();
      std::erase_if(landed_, [&](const auto& entry) { return entry.second < oldest; });
    }
    overflow = overflow || overflow_;
    overflow_ = false;
    if (overflow) {
      // Events were lost: every root is listed again.
      for (const auto& root : roots_)
        events.emplace_back(root.first, true);
    }
  }
  Notify(events);
  return true;
}

void LocalWatcher::Notify(const std::vector<std::pair<std::string, bool>>& events) {
  if (events.empty()) return;
  MutexLock lock(&listener_mu_);
  if (!listener_) return;
  for (const auto& [path, directory] : events)
    listener_(path, directory);
}

}  // namespace millrace::source
