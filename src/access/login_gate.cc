#include "access/login_gate.h"

#include <string>

#include "sql/mysql_errors.h"

namespace millrace::access {

template <typename Verify>
Status LoginGate::Check(std::string_view action, std::string_view user, std::string_view host,
                        Verify verify) {
  Status status = Status::Ok();
  if (const std::chrono::seconds wait = throttle_->Wait(host); wait.count() > 0) {
    status = sql::LoginThrottledError(user, host, wait.count());
    throttle_->RecordFailure(host);
  } else {
    status = verify();
    if (status.ok()) {
      throttle_->RecordSuccess(host);
    } else {
      throttle_->RecordFailure(host);
    }
  }
  audit_->Record(AuditEvent{0, std::string(user), std::string(host), "LOGIN", std::string(action),
                            "", status.ok() ? "" : status.message()});
  return status;
}

Status LoginGate::CheckScramble(std::string_view user, std::string_view host,
                                std::string_view scramble, std::string_view auth_response,
                                bool secure) {
  return Check("LOGIN", user, host,
               [&] { return access_->Authenticate(user, host, scramble, auth_response, secure); });
}

Status LoginGate::CheckPassword(std::string_view user, std::string_view host,
                                std::string_view password, bool secure) {
  return Check("HTTP LOGIN", user, host,
               [&] { return access_->CheckPassword(user, host, password, secure); });
}

}  // namespace millrace::access
