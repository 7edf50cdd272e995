// AccessControl: Millrace's users and grants, held in memory and kept in the catalog.
//
// Contract
// - Users are named 'name'@'host', where host is '%' (any address) or one literal address
//   ("127.0.0.1", "localhost", which also matches the loopback addresses); a user name is
//   unique whatever its host, and compared case-sensitively, as MySQL does. A statement may
//   name a user without its host; with one, the host must be the user's.
// - `root` always exists (as 'root'@'%'), holds every privilege on *.*, and cannot be created,
//   altered, dropped, granted or revoked (MySQL error 1396 saying why); its password is the
//   one given at start (--password-env), never stored. No other user may be named root in any
//   case.
// - Passwords are kept only as mysql_native_password's SHA1(SHA1(password)) (password.h); a
//   password never appears in a log line, an error or a view.
// - Every change (CREATE/ALTER/DROP USER, SET PASSWORD, GRANT, REVOKE) is written to the
//   UserStore first and applied in memory only after the write succeeded, so a failed write
//   changes nothing. Changes are serialized; checks read the in-memory state and never wait
//   for a store write: a grant or revoke takes effect on the next statement of every open
//   session.
// - Errors are MySQL's, with their errno as detail (sql/mysql_errors.h): 1396 for a user that
//   exists (CREATE) or does not (ALTER, DROP), 1133 for SET PASSWORD of an unknown user, 1410
//   for GRANT to an unknown user, 1141 for REVOKE of a grant that does not exist, 1221 for
//   ADMIN_PRIV below *.*, 1203 for a user over its max_user_connections.
// - Has() answers from the grants at the three levels (privilege.h): a privilege on *.* or
//   db.* holds for every table of db; ADMIN_PRIV on *.* implies every privilege. ADMIN_PRIV
//   can only be granted on *.*.
// - Who may change users and grants (ADMIN_PRIV) is the statements' business
//   (user_statements.h), not this class's.
// - Thread-safety: every method may be called concurrently.
#pragma once

#include <cstdint>
#include <map>
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
inline constexpr std::string_view kAnyHost = "%";

// A user as a statement names it: 'name'@'host'; without a host, the user of that name.
struct UserIdentity {
  std::string name;
  std::optional<std::string> host;

  // 'name'@'host' ('%' when no host is given).
  std::string ToString() const;
};

// What CREATE USER, ALTER USER and SET PASSWORD set; an unset field is left as it is (ALTER)
// or takes its default (CREATE: no password, no TLS required, no connection limit).
struct UserChange {
  std::optional<std::string> password_hash;  // 20 bytes, or empty: no password
  std::optional<bool> require_ssl;
  std::optional<int64_t> max_user_connections;  // 0: no limit
};

// The fail point every check of what a user may do reaches, scoped by the user's name
// ("gate/bob"): the SQL statements' check (AccessGuard, every protocol) and the job
// statements' (job::JobAccess, the HTTP API and console included). Tests set it to prove each
// path goes through the gate.
inline constexpr std::string_view kGateFailPoint = "gate";

class AccessControl {
 public:
  // `store` is borrowed and must outlive this object; `root_password` may be empty.
  AccessControl(UserStore* store, std::string root_password);
  ~AccessControl();

  // Loads users and grants from the store, replacing what is held.
  Status Load() EXCLUDES(write_mu_, mu_);

  // Checks a mysql_native_password answer to `scramble` for `user` connecting from `host`
  // (`secure`: over TLS). Unknown users, a host that does not match and a wrong answer are all
  // PERMISSION_DENIED with MySQL's message ("Access denied for user 'u'@'h' (using password:
  // YES)"), detail MySQL 1045; a user created with REQUIRE SSL connecting without TLS is the
  // same error.
  Status Authenticate(std::string_view user, std::string_view host, std::string_view scramble,
                      std::string_view auth_response, bool secure) const EXCLUDES(mu_);
  // The same check for a client that sends the password itself (HTTP Basic, the login form),
  // with the same errors.
  Status CheckPassword(std::string_view user, std::string_view host, std::string_view password,
                       bool secure) const EXCLUDES(mu_);

  bool UserExists(std::string_view user) const EXCLUDES(mu_);
  // An opaque value that changes whenever `user` is dropped or made again, or its password,
  // host or REQUIRE SSL changes; empty when there is no such user. What a login remembered
  // past its check (an HTTP session) is compared with. Kept in memory only, never shown.
  std::string LoginStamp(std::string_view user) const EXCLUDES(mu_);
  // True when `user` holds `privilege` on `database`.`table` (table empty: on the database;
  // database empty: on the server, i.e. at *.*).
  bool Has(std::string_view user, Privilege privilege, std::string_view database,
           std::string_view table) const {
    return HasIn(user, privilege, "", database, table);
  }
  // The same for an object of an external catalog (`catalog` "": the embedded one); with an
  // empty database, on the catalog itself (*.* or ctl.*.*).
  bool HasIn(std::string_view user, Privilege privilege, std::string_view catalog,
             std::string_view database, std::string_view table) const EXCLUDES(mu_);
  // True when `user` holds any privilege on `database`.`table`, or, with an empty table, on the
  // database or any table in it (what SHOW DATABASES and SHOW TABLES list). With an empty
  // database: any privilege on *.*.
  bool HasAny(std::string_view user, std::string_view database, std::string_view table) const {
    return HasAnyIn(user, "", database, table);
  }
  // The same in an external catalog; with an empty database, any privilege in the catalog
  // (what SHOW CATALOGS lists).
  bool HasAnyIn(std::string_view user, std::string_view catalog, std::string_view database,
                std::string_view table) const EXCLUDES(mu_);
  bool IsAdmin(std::string_view user) const { return Has(user, Privilege::kAdmin, "", ""); }

  // The grants of `user` (root's is every privilege on *.*), global first, then by database
  // and table, for SHOW GRANTS. Empty for an unknown user.
  std::vector<Grant> GrantsOf(std::string_view user) const EXCLUDES(mu_);
  // The user named `user` (root with its password's hash), or nullopt.
  std::optional<UserRecord> FindUser(std::string_view user) const EXCLUDES(mu_);
  // Every user, root first, then by name.
  std::vector<UserRecord> Users() const EXCLUDES(mu_);

  // CREATE USER; with `if_not_exists`, an existing user is left as it is.
  Status CreateUser(const UserIdentity& user, const UserChange& change, bool if_not_exists)
      EXCLUDES(write_mu_, mu_);
  // ALTER USER; SET PASSWORD is an ALTER of the password only, with MySQL's error 1133 for an
  // unknown user (`operation` "ALTER USER" or "SET PASSWORD").
  Status AlterUser(const UserIdentity& user, const UserChange& change,
                   std::string_view operation = "ALTER USER") EXCLUDES(write_mu_, mu_);
  // DROP USER, with its grants; with `if_exists`, an unknown user is not an error.
  Status DropUser(const UserIdentity& user, bool if_exists) EXCLUDES(write_mu_, mu_);
  // GRANT `privileges` ON `object` TO `user`. Privileges already held are not an error.
  Status GrantPrivileges(const UserIdentity& user, const GrantObject& object,
                         PrivilegeSet privileges) EXCLUDES(write_mu_, mu_);
  // REVOKE `privileges` ON `object` FROM `user`; those the user does not hold are ignored, but
  // the user must hold a grant on the object.
  Status RevokePrivileges(const UserIdentity& user, const GrantObject& object,
                          PrivilegeSet privileges) EXCLUDES(write_mu_, mu_);

  // A connection of `user` starts: error 1203 when the user already has its
  // max_user_connections (the user's own, or when that is 0 the server's default, as MySQL's
  // global max_user_connections). Every successful call is paired with ReleaseConnection.
  Status AcquireConnection(std::string_view user) EXCLUDES(mu_);
  // The limit of a user whose own max_user_connections is 0 (--max-connections-per-user);
  // 0: none (the default until set).
  void SetDefaultConnectionLimit(int64_t limit) EXCLUDES(mu_);
  void ReleaseConnection(std::string_view user) EXCLUDES(mu_);

 private:
  struct UserState {
    UserRecord record;
    std::vector<Grant> grants;  // one per object, none empty
  };
  using UserMap = std::map<std::string, UserState, std::less<>>;

  // What a login of `user` from `host` is checked against; an unknown user (or a host that does
  // not match) gets a hash no password produces, so a refusal takes as long either way.
  struct Credential {
    std::string hash;
    bool known = false;
    bool require_ssl = false;
  };
  Credential CredentialOf(std::string_view user, std::string_view host) const EXCLUDES(mu_);

  // True for root; for another user, when `pred` holds for one of its grants.
  template <typename Pred>
  bool AnyGrant(std::string_view user, Pred pred) const EXCLUDES(mu_);
  // The user a statement names, when it exists (a given host must be the user's).
  const UserState* FindLocked(const UserIdentity& user) const REQUIRES(mu_);
  // The error for a statement that names root; OK for any other user.
  static Status RefuseRoot(const UserIdentity& user, std::string_view operation);

  UserStore* const store_;
  const std::string root_hash_;
  // Held by every change across its store write, so changes apply in the order they were
  // written; taken before mu_.
  Mutex write_mu_;
  mutable Mutex mu_;
  UserMap users_ GUARDED_BY(mu_);
  std::map<std::string, int64_t, std::less<>> connections_ GUARDED_BY(mu_);
  int64_t default_connection_limit_ GUARDED_BY(mu_) = 0;
};

}  // namespace millrace::access
