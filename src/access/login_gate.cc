#include "access/login_gate.h"

#include <string>

#include "sql/mysql_errors.h"

namespace millrace::access {

template <typename Verify>
LoginOutcome LoginGate::Check(std::string_view action, std::string_view user, std::string_view host,
                              Verify verify) {
  const LoginAttempt attempt = throttle_->Begin(host, user);
  if (attempt.wait.count() > 0) {
    LoginOutcome refused{sql::LoginThrottledError(user, host, attempt.wait.count()), attempt.wait};
    if (attempt.first_refusal) {
      audit_->Record(AuditEvent{
          0, std::string(user), std::string(host), "LOGIN", std::string(action), "",
          refused.status.message() + " (further refusals while it waits are not recorded)"});
    }
    return refused;
  }
  Status status = verify();
  if (status.ok()) throttle_->Succeeded(host, user);
  audit_->Record(AuditEvent{0, std::string(user), std::string(host), "LOGIN", std::string(action),
                            "", status.ok() ? "" : status.message()});
  return LoginOutcome{std::move(status), std::chrono::seconds(0)};
}

LoginOutcome LoginGate::CheckScramble(std::string_view user, std::string_view host,
                                      std::string_view scramble, std::string_view auth_response,
                                      bool secure) {
  return Check("LOGIN", user, host,
               [&] { return access_->Authenticate(user, host, scramble, auth_response, secure); });
}

LoginOutcome LoginGate::CheckPassword(std::string_view user, std::string_view host,
                                      std::string_view password, bool secure) {
  return Check("HTTP LOGIN", user, host,
               [&] { return access_->CheckPassword(user, host, password, secure); });
}

}  // namespace millrace::access
