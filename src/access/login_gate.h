// LoginGate: every password check of the MySQL and HTTP ports, in one place: the throttle of
// failed logins (login_throttle.h), the check against the users (access_control.h) and the
// audit log's LOGIN event (audit_log.h).
//
// Contract
// - A login from an address that must wait is refused with MySQL's 1045 saying how long to wait
//   (sql::LoginThrottledError, code RESOURCE_EXHAUSTED), without checking the password; it
//   counts as one more failure and is audited like any refusal. Otherwise the password is checked
//   (the same errors as AccessControl) and the outcome is counted by the throttle.
// - Every attempt, refused or not, is one event of kind LOGIN (action "LOGIN" on the MySQL port,
//   "HTTP LOGIN" on the HTTP port) with the user, the address and, for a refusal, the error's
//   message (which never holds the password).
// - All pointers are borrowed and must outlive the gate. Thread-safety: as its parts, which are
//   all thread-safe.
#pragma once

#include <chrono>
#include <string_view>

#include "access/access_control.h"
#include "access/audit_log.h"
#include "access/login_throttle.h"
#include "common/status.h"

namespace millrace::access {

class LoginGate {
 public:
  LoginGate(AccessControl* access, LoginThrottle* throttle, AuditLog* audit)
      : access_(access), throttle_(throttle), audit_(audit) {}

  // A mysql_native_password answer to `scramble` (the MySQL port).
  Status CheckScramble(std::string_view user, std::string_view host, std::string_view scramble,
                       std::string_view auth_response, bool secure);
  // A password sent as it is (HTTP Basic, the login form).
  Status CheckPassword(std::string_view user, std::string_view host, std::string_view password,
                       bool secure);
  // How long `host` must still wait before its next login (zero: it may try now).
  std::chrono::seconds RetryAfter(std::string_view host) { return throttle_->Wait(host); }

 private:
  template <typename Verify>
  Status Check(std::string_view action, std::string_view user, std::string_view host,
               Verify verify);

  AccessControl* const access_;
  LoginThrottle* const throttle_;
  AuditLog* const audit_;
};

}  // namespace millrace::access
