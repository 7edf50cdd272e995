#include "http/session_store.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "common/logging.h"

namespace millrace::http {

std::string Sha256(std::string_view id) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(id.data(), id.size(), digest, &size, EVP_sha256(), nullptr) != 1) {
    // Without SHA-256 no session can be checked safely; this only fails when OpenSSL is broken.
    MR_LOG(kError) << "SHA-256 failed; stopping";
    std::abort();
  }
  return std::string(reinterpret_cast<const char*>(digest), size);
}

SessionStore::SessionStore(Clock* clock, SessionStoreOptions options)
    : clock_(clock), options_(options) {}

template <typename Pred>
void SessionStore::DropLeastRecentlyUsedLocked(Pred pred) {
  auto oldest = sessions_.end();
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (pred(it->second) &&
        (oldest == sessions_.end() || it->second.last_used < oldest->second.last_used)) {
      oldest = it;
    }
  }
  if (oldest != sessions_.end()) sessions_.erase(oldest);
}

HttpSession SessionStore::Create(std::string user, std::string stamp) {
  HttpSession session{RandomToken(), std::move(user), RandomToken(), std::move(stamp)};
  const Clock::SteadyTime now = clock_->SteadyNow();
  MutexLock lock(&mu_);
  std::erase_if(sessions_, [&](const auto& item) {
    return now - item.second.last_used >= options_.idle_timeout;
  });
  const auto of_user = [&](const Entry& e) { return e.user == session.user; };
  while (static_cast<size_t>(std::count_if(sessions_.begin(), sessions_.end(), [&](auto& item) {
           return of_user(item.second);
         })) >= options_.max_per_user) {
    DropLeastRecentlyUsedLocked(of_user);
  }
  while (!sessions_.empty() && sessions_.size() >= options_.max_sessions) {
    DropLeastRecentlyUsedLocked([](const Entry&) { return true; });
  }
  sessions_[Sha256(session.id)] = Entry{session.user, session.csrf_token, session.stamp, now};
  return session;
}

std::optional<HttpSession> SessionStore::Find(std::string_view id) {
  const std::string key = Sha256(id);
  const Clock::SteadyTime now = clock_->SteadyNow();
  MutexLock lock(&mu_);
  auto it = sessions_.find(key);
  if (it == sessions_.end()) return std::nullopt;
  if (now - it->second.last_used >= options_.idle_timeout) {
    sessions_.erase(it);
    return std::nullopt;
  }
  it->second.last_used = now;
  return HttpSession{std::string(id), it->second.user, it->second.csrf_token, it->second.stamp};
}

void SessionStore::Drop(std::string_view id) {
  const std::string key = Sha256(id);
  MutexLock lock(&mu_);
  sessions_.erase(key);
}

size_t SessionStore::size() const {
  MutexLock lock(&mu_);
  return sessions_.size();
}

}  // namespace millrace::http
