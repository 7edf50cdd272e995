// Clang thread-safety annotations (-Wthread-safety) and an annotated mutex.
//
// libstdc++'s std::mutex carries no capability attributes, so lock-protected members are
// declared against millrace::Mutex, which does. On compilers without the analysis the macros
// expand to nothing.
#pragma once

#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define MR_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define MR_THREAD_ANNOTATION_(x)
#endif

#define CAPABILITY(x) MR_THREAD_ANNOTATION_(capability(x))
#define SCOPED_CAPABILITY MR_THREAD_ANNOTATION_(scoped_lockable)
#define GUARDED_BY(x) MR_THREAD_ANNOTATION_(guarded_by(x))
#define PT_GUARDED_BY(x) MR_THREAD_ANNOTATION_(pt_guarded_by(x))
#define REQUIRES(...) MR_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) MR_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) MR_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define RELEASE(...) MR_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define NO_THREAD_SAFETY_ANALYSIS MR_THREAD_ANNOTATION_(no_thread_safety_analysis)

namespace millrace {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

  // For condition variables: the underlying standard mutex.
  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// Waits on a condition variable with a Mutex the caller already holds (via MutexLock).
// The analysis cannot see through the adopt/release dance, hence the opt-out.
template <typename Pred>
void WaitOn(std::condition_variable& cv, Mutex* mu, Pred pred) NO_THREAD_SAFETY_ANALYSIS {
  std::unique_lock<std::mutex> lock(mu->native(), std::adopt_lock);
  cv.wait(lock, pred);
  lock.release();
}

template <typename Pred, typename Duration>
bool WaitOnFor(std::condition_variable& cv, Mutex* mu, Duration timeout,
               Pred pred) NO_THREAD_SAFETY_ANALYSIS {
  std::unique_lock<std::mutex> lock(mu->native(), std::adopt_lock);
  bool satisfied = cv.wait_for(lock, timeout, pred);
  lock.release();
  return satisfied;
}

}  // namespace millrace
