// AccessControl: Millrace's users and grants, held in memory and kept in the catalog.
//
// Contract
// - Users are named 'name'@'host', where host is '%' (any address) or one literal address
//   ("127.0.0.1", "localhost"); a user name is unique whatever its host. `root` always exists,
//   holds every privilege on *.*, cannot be dropped, altered or revoked, and its password is
//   the one given at start (--password-env), never stored.
// - Passwords are kept only as mysql_native_password's SHA1(SHA1(password)) (password.h); a
//   password never appears in a log line, an error or a view.
// - Every change (CREATE/ALTER/DROP USER, SET PASSWORD, GRANT, REVOKE) is written to the
//   UserStore first and applied in memory only after the write succeeded, so a failed write
//   changes nothing. Checks read the in-memory state: a grant or revoke takes effect on the
//   next statement of every open session.
// - Has() answers from the grants at the three levels (grant.h): a privilege on *.* or db.*
//   holds for every table of db; ADMIN_PRIV on *.* implies every privilege.
// - Thread-safety: every method may be called concurrently.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "access/privilege.h"
#include "access/user_store.h"
#include "common/result.h"
#include "common/thread_annotations.h"

namespace millrace::access {

inline constexpr std::string_view kRootUser = "root";

class AccessControl {
 public:
  // `store` is borrowed and must outlive this object; `root_password` may be empty.
  AccessControl(UserStore* store, std::string root_password);

  // Loads users and grants from the store.
  Status Load();

  // Checks a mysql_native_password answer to `scramble` for `user` connecting from `host`
  // (`secure`: over TLS). Unknown users, a host that does not match and a wrong answer are all
  // PERMISSION_DENIED with MySQL's message ("Access denied for user 'u'@'h' (using password:
  // YES)"), detail MySQL 1045; a user created with REQUIRE SSL connecting without TLS is the
  // same error.
  Status Authenticate(std::string_view user, std::string_view host, std::string_view scramble,
                      std::string_view auth_response, bool secure) const;

  bool UserExists(std::string_view user) const;
  // True when `user` holds `privilege` on `database`.`table` (table empty: on the database).
  bool Has(std::string_view user, Privilege privilege, std::string_view database,
           std::string_view table) const;
  // True when `user` holds any privilege on `database`.`table`, or, with an empty table, on the
  // database or any table in it (what SHOW DATABASES and SHOW TABLES list).
  bool HasAny(std::string_view user, std::string_view database, std::string_view table) const;
  bool IsAdmin(std::string_view user) const { return Has(user, Privilege::kAdmin, "", ""); }

  // The grants of `user` (root's is ADMIN on *.*), for SHOW GRANTS.
  std::vector<Grant> GrantsOf(std::string_view user) const;
};

}  // namespace millrace::access
