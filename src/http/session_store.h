// SessionStore: the HTTP port's login sessions (the web console's cookie).
//
// Contract
// - Create makes a session for `user` (with the LoginStamp of its login, http_auth.h) with two
//   fresh random tokens (32 bytes from OpenSSL's
//   RAND_bytes, hex): the session id the cookie carries and the CSRF token every state-changing
//   request of the session must repeat. Only a SHA-256 of the id is kept, so neither a map
//   lookup's timing nor a memory dump gives a live id away.
// - Find returns the session of an id and counts the request as use; a session unused for
//   `idle_timeout` (injected Clock) is gone, as is one dropped by Drop.
// - At most `max_sessions` live at once, and `max_per_user` of one user; past either, the
//   least recently used (of the user) is dropped.
// - Thread-safety: every method may be called concurrently.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/random_token.h"
#include "common/thread_annotations.h"

namespace millrace::http {

struct HttpSession {
  std::string id;  // what the cookie carries; only set by Create
  std::string user;
  std::string csrf_token;
  std::string stamp;  // the user's LoginStamp when it logged in
};

struct SessionStoreOptions {
  std::chrono::seconds idle_timeout{30 * 60};
  size_t max_sessions = 10'000;
  size_t max_per_user = 100;
};

class SessionStore {
 public:
  SessionStore(Clock* clock, SessionStoreOptions options);

  HttpSession Create(std::string user, std::string stamp) EXCLUDES(mu_);
  std::optional<HttpSession> Find(std::string_view id) EXCLUDES(mu_);
  void Drop(std::string_view id) EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);

 private:
  struct Entry {
    std::string user;
    std::string csrf_token;
    std::string stamp;
    Clock::SteadyTime last_used;
  };
  // Drops the least recently used session for which `pred` holds.
  template <typename Pred>
  void DropLeastRecentlyUsedLocked(Pred pred) REQUIRES(mu_);

  Clock* const clock_;
  const SessionStoreOptions options_;
  mutable Mutex mu_;
  std::map<std::string, Entry, std::less<>> sessions_ GUARDED_BY(mu_);  // by SHA-256 of the id
};

// SHA-256 of `data` (32 raw bytes).
std::string Sha256(std::string_view data);
// RandomToken and TokensEqual: common/random_token.h.

}  // namespace millrace::http
