#include "server/authenticator.h"

#include "access/password.h"
#include "sql/mysql_errors.h"

namespace millrace::server {
namespace {

class RootOnlyAuthenticator final : public Authenticator {
 public:
  explicit RootOnlyAuthenticator(std::string root_password)
      : root_hash_(access::NativePasswordHash(root_password)) {}

  Status Authenticate(std::string_view user, std::string_view host, std::string_view scramble,
                      std::string_view auth_response, bool secure) override {
    if (user == "root" && access::VerifyNativeResponse(root_hash_, scramble, auth_response)) {
      return Status::Ok();
    }
    return sql::AccessDeniedError(user, host, !auth_response.empty());
  }

 private:
  const std::string root_hash_;
};

}  // namespace

std::unique_ptr<Authenticator> RootOnly(std::string root_password) {
  return std::make_unique<RootOnlyAuthenticator>(std::move(root_password));
}

}  // namespace millrace::server
