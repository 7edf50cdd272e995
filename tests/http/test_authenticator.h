// A fixed set of users for the HTTP server's tests (the real one, over Millrace's users, is
// tested end to end in tests/access/http_e2e_test.cc).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "http/http_auth.h"

namespace millrace::http {

class TestAuthenticator final : public HttpAuthenticator {
 public:
  HttpLoginResult CheckPassword(std::string_view user, std::string_view password,
                                std::string_view host, bool secure) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++checks_;
    if (retry_after_.count() > 0) {
      return {Status::ResourceExhausted("too many failed logins from " + std::string(host)),
              retry_after_};
    }
    auto it = users_.find(std::string(user));
    if (it == users_.end() || it->second != password) {
      return {Status::PermissionDenied("Access denied for user '" + std::string(user) + "'"), {}};
    }
    return {};
  }
  std::string LoginStamp(std::string_view user) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = stamps_.find(std::string(user));
    return it == stamps_.end() ? "" : it->second;
  }

  // Creates the user, or changes its password.
  void SetUser(const std::string& user, const std::string& password) {
    std::lock_guard<std::mutex> lock(mu_);
    users_[user] = password;
    stamps_[user] = std::to_string(++generation_);
  }
  void DropUser(const std::string& user) {
    std::lock_guard<std::mutex> lock(mu_);
    users_.erase(user);
    stamps_.erase(user);
  }
  void Throttle(std::chrono::seconds retry_after) {
    std::lock_guard<std::mutex> lock(mu_);
    retry_after_ = retry_after;
  }
  int checks() {
    std::lock_guard<std::mutex> lock(mu_);
    return checks_;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::string> users_;
  std::map<std::string, std::string> stamps_;
  int generation_ = 0;
  std::chrono::seconds retry_after_{0};
  int checks_ = 0;
};

}  // namespace millrace::http
