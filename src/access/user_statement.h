// The statements on users and grants, parsed (user_statements.h runs them).
//
//   CREATE USER [IF NOT EXISTS] user [IDENTIFIED BY [PASSWORD] 'secret'] [REQUIRE SSL | NONE]
//       [WITH MAX_USER_CONNECTIONS n]
//   ALTER USER [IF EXISTS] user [IDENTIFIED BY [PASSWORD] 'secret'] [REQUIRE SSL | NONE]
//       [WITH MAX_USER_CONNECTIONS n]
//   DROP USER [IF EXISTS] user
//   SET PASSWORD [FOR user] = 'secret' | PASSWORD('secret')
//   GRANT privilege [, ...] ON object TO user
//   REVOKE privilege [, ...] ON object FROM user
//   SHOW GRANTS [FOR user] | SHOW ALL GRANTS | SHOW USERS
//
// Contract
// - user is name[@host]; each part a 'single-quoted', "double-quoted" or `backquoted` name or
//   a bare word (name@localhost); CURRENT_USER or CURRENT_USER() is the session's user.
// - IDENTIFIED BY 'pw' (also IDENTIFIED WITH mysql_native_password BY 'pw') gives the password,
//   kept only as its hash from here on; IDENTIFIED BY PASSWORD '*HEX' (or WITH
//   mysql_native_password AS '*HEX') gives the hash itself. Any other plugin is NOT_SUPPORTED.
// - object is *.* (or *.*.*), db.*, db.tbl, * and tbl in the session's database, or an
//   external catalog's ctl.*.*, ctl.db.*, ctl.db.tbl (internal.db.tbl is db.tbl;
//   internal.*.* is refused).
// - privilege is a Doris name or a MySQL alias (privilege.h, ParsePrivilegeName); multi-word
//   aliases (ALL PRIVILEGES, CREATE VIEW, GRANT OPTION) as words.
// - Errors are MySQL syntax errors (1064) that never quote the statement after IDENTIFIED,
//   PASSWORD or '=' (ForLog masks the same part for the log).
// - Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "access/access_control.h"
#include "access/privilege.h"
#include "common/result.h"
#include "sql/lexer.h"

namespace millrace::access {

enum class UserStatementKind {
  kCreateUser,
  kAlterUser,
  kDropUser,
  kSetPassword,
  kGrant,
  kRevoke,
  kShowGrants,
  kShowAllGrants,
  kShowUsers,
};

struct UserStatement {
  UserStatementKind kind = UserStatementKind::kShowUsers;
  // The user named; nullopt: the session's own (SET PASSWORD, SHOW GRANTS, CURRENT_USER).
  std::optional<UserIdentity> user;
  bool if_exists = false;  // IF EXISTS (ALTER, DROP) or IF NOT EXISTS (CREATE)
  UserChange change;       // CREATE, ALTER, SET PASSWORD
  // GRANT, REVOKE. With in_current_database, object.database is to be the session's database
  // (the statement said `*` or `tbl`).
  GrantObject object;
  bool in_current_database = false;
  PrivilegeSet privileges;
};

// `sql` is one statement; `tokens` its significant tokens.
Result<UserStatement> ParseUserStatement(std::string_view sql,
                                         const std::vector<sql::Token>& tokens);

// The statement for a log line: from IDENTIFIED, PASSWORD or '=' on, every name, string and
// number (but the connection limit) is "****". Works on malformed statements too.
std::string MaskUserStatement(std::string_view sql, const std::vector<sql::Token>& tokens);

}  // namespace millrace::access
