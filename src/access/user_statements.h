// The statements on users and grants (user_statement.h has their syntax), answered by
// AccessControl on the SQL front end.
//
// Contract
// - CREATE/ALTER/DROP USER, GRANT, REVOKE, SHOW ALL GRANTS, SHOW USERS and SHOW GRANTS FOR
//   another user need ADMIN_PRIV: without it they fail with MySQL error 1227 (42000) "Access
//   denied; you need (at least one of) the ADMIN_PRIV privilege(s) for this operation". A user
//   may change its own password (SET PASSWORD, or ALTER USER that changes the password only)
//   and see its own grants without it.
// - SHOW GRANTS answers one row per user, with Doris's columns: UserIdentity ('name'@'host'),
//   Password ("Yes" when a password is set, "No" otherwise; never the password or its hash),
//   GlobalPrivs ("SELECT_PRIV,LOAD_PRIV"), DatabasePrivs ("db: SELECT_PRIV; db2: ..."),
//   TablePrivs ("db.t: LOAD_PRIV; ..."), NULL where there is none. SHOW ALL GRANTS: every
//   user, root first. SHOW USERS: columns User and Host.
// - The statements that may carry a password (CREATE USER, ALTER USER, SET PASSWORD) are
//   logged with it masked (StatementHandler::ForLog).
// - Thread-safety: the handlers may run concurrently; AccessControl serializes the changes.
#pragma once

#include "access/access_control.h"
#include "sql/session.h"

namespace millrace::access {

// Routes the statements on users and grants of every session of `router` to `access`, which
// must outlive the router's sessions.
void RegisterUserStatements(sql::Router* router, AccessControl* access);

}  // namespace millrace::access
