// HttpAuthenticator: who may use the HTTP port beyond /api/health. `cli` gives the server one
// backed by Millrace's users (access::LoginGate), so both ports share one throttle of failed
// logins and one audit log.
//
// Contract
// - CheckPassword checks a password sent as it is (HTTP Basic, the login form) for `user` from
//   `host` (`secure`: over TLS). A refusal carries the error to show (it never repeats the
//   password) and, when the address must wait before trying again, how long (> 0): the server
//   answers 429 with Retry-After then, 401 otherwise.
// - LoginStamp is an opaque value that changes whenever `user` is dropped or made again, or its
//   password, host or REQUIRE SSL changes (empty: no such user). A session or a remembered
//   Basic login keeps the stamp of its check, and ends on the next request that finds another.
// - Thread-safety: the server calls both from its worker threads concurrently.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "common/status.h"

namespace millrace::http {

struct HttpLoginResult {
  Status status = Status::Ok();
  std::chrono::seconds retry_after{0};  // > 0: refused until then, unchecked
};

class HttpAuthenticator {
 public:
  virtual ~HttpAuthenticator() = default;
  virtual HttpLoginResult CheckPassword(std::string_view user, std::string_view password,
                                        std::string_view host, bool secure) = 0;
  virtual std::string LoginStamp(std::string_view user) = 0;
};

}  // namespace millrace::http
