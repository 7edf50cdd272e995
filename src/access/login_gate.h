// LoginGate: every password check of the MySQL and HTTP ports, in one place: the throttle of
// failed logins (login_throttle.h), the check against the users (access_control.h) and the
// audit log's LOGIN events (audit_log.h).
//
// Contract
// - A login the throttle makes wait is refused with MySQL's 1045 saying how long to wait
//   (sql::LoginThrottledError, code RESOURCE_EXHAUSTED), without checking the password, and
//   LoginOutcome::retry_after says how long. Otherwise the password is checked (the same
//   errors as AccessControl) and the throttle learns the outcome.
// - Audit: every checked attempt is one event of kind LOGIN (action "LOGIN" on the MySQL port,
//   "HTTP LOGIN" on the HTTP port) with the user, the address and, for a refusal, the error's
//   message (which never holds the password). Of the refusals while an address waits, only
//   the first since the last checked attempt there is recorded (saying that later ones are
//   not), so a flood of attempts cannot push the rest of the log out.
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

struct LoginOutcome {
  Status status = Status::Ok();
  std::chrono::seconds retry_after{0};  // > 0: refused unchecked, to try again after this
};

class LoginGate {
 public:
  LoginGate(AccessControl* access, LoginThrottle* throttle, AuditLog* audit)
      : access_(access), throttle_(throttle), audit_(audit) {}

  // A mysql_native_password answer to `scramble` (the MySQL port).
  LoginOutcome CheckScramble(std::string_view user, std::string_view host,
                             std::string_view scramble, std::string_view auth_response,
                             bool secure);
  // A password sent as it is (HTTP Basic, the login form).
  LoginOutcome CheckPassword(std::string_view user, std::string_view host,
                             std::string_view password, bool secure);

 private:
  template <typename Verify>
  LoginOutcome Check(std::string_view action, std::string_view user, std::string_view host,
                     Verify verify);

  AccessControl* const access_;
  LoginThrottle* const throttle_;
  AuditLog* const audit_;
};

}  // namespace millrace::access
