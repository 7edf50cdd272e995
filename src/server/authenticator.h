// Authenticator: who may log in on the MySQL port. The server asks it once per connection,
// after the handshake; `cli` gives the server one backed by the users and grants
// (access::AccessControl), and without one the server lets in root alone (RootOnly below).
//
// Contract
// - Authenticate checks a mysql_native_password answer to `scramble` for `user` connecting
//   from `host` (`secure`: over TLS). A refusal is an error whose detail is the MySQL errno the
//   client receives (1045, "Access denied for user 'u'@'h' (using password: YES)"), worded
//   without the password or the answer, so the server may log it as it is.
// - Admit is asked once Authenticate succeeded; the session holds the returned Login until the
//   connection closes (a place to count a user's connections). An error refuses the login with
//   its errno (1203, too many connections for the user).
// - Thread-safety: sessions call both concurrently.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

namespace millrace::server {

class Authenticator {
 public:
  // Held by a session from its login to its end.
  class Login {
   public:
    virtual ~Login() = default;
  };

  virtual ~Authenticator() = default;
  virtual Status Authenticate(std::string_view user, std::string_view host,
                              std::string_view scramble, std::string_view auth_response,
                              bool secure) = 0;
  // Null: nothing to hold.
  virtual Result<std::unique_ptr<Login>> Admit(std::string_view user) {
    return std::unique_ptr<Login>();
  }
};

// root with `root_password` (empty: no password), and nobody else.
std::unique_ptr<Authenticator> RootOnly(std::string root_password);

}  // namespace millrace::server
