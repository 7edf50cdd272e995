#include "access/user_statements.h"

#include "access/user_statement.h"
#include "common/logging.h"
#include "engine/database.h"
#include "sql/mysql_errors.h"
#include "sql/statement_support.h"

namespace millrace::access {
namespace {

using sql::StatementResult;

std::string Literal(std::string_view text) {
  return engine::QuoteLiteral(text);
}
std::string LiteralOrNull(const std::string& text) {
  return text.empty() ? std::string("NULL") : Literal(text);
}

// The row of SHOW GRANTS for `user`.
std::vector<std::string> GrantsRow(const UserRecord& user, const std::vector<Grant>& grants) {
  std::string global;
  std::string catalogs;
  std::string databases;
  std::string tables;
  for (const Grant& grant : grants) {
    const std::string names = PrivilegeNames(grant.privileges);
    const GrantObject& o = grant.object;
    if (o.global()) {
      global = names;
      continue;
    }
    // Names as granted: db, db.tbl; an external catalog's ctl, ctl.db, ctl.db.tbl.
    const std::string object = (o.catalog.empty() ? "" : o.catalog + ".") + o.database +
                               (o.table.empty() ? "" : "." + o.table);
    std::string& list = o.database.empty() ? catalogs : o.table.empty() ? databases : tables;
    list += (list.empty() ? "" : "; ") + (o.database.empty() ? o.catalog : object) + ": " + names;
  }
  const UserIdentity identity{user.name, user.host};
  return {Literal(identity.ToString()), Literal(user.password_hash.empty() ? "No" : "Yes"),
          LiteralOrNull(global),        LiteralOrNull(catalogs),
          LiteralOrNull(databases),     LiteralOrNull(tables)};
}

// Rows in the order given: an ordinal column sorts them and is dropped.
Result<StatementResult> Rows(sql::Session& session, std::vector<sql::ValuesColumn> columns,
                             std::vector<std::vector<std::string>> rows) {
  columns.push_back({"_order", "INTEGER"});
  for (size_t i = 0; i < rows.size(); ++i)
    rows[i].push_back(std::to_string(i));
  return session.ExecuteDuckDb("SELECT * EXCLUDE (_order) FROM (" +
                               sql::ValuesTable(columns, rows) + ") ORDER BY _order");
}

const std::vector<sql::ValuesColumn> kGrantsColumns = {
    {"UserIdentity", "VARCHAR"}, {"Password", "VARCHAR"},      {"GlobalPrivs", "VARCHAR"},
    {"CatalogPrivs", "VARCHAR"}, {"DatabasePrivs", "VARCHAR"}, {"TablePrivs", "VARCHAR"}};

class UserStatementHandler final : public sql::StatementHandler {
 public:
  UserStatementHandler(AccessControl* access, bool holds_secrets)
      : access_(access), holds_secrets_(holds_secrets) {}

  Result<StatementResult> Execute(const sql::StatementContext& ctx) override {
    MR_ASSIGN_OR_RETURN(UserStatement stmt, ParseUserStatement(ctx.sql, ctx.tokens));
    const std::string& me = ctx.session.info().user;
    // The user the statement names; CURRENT_USER and no user at all are the session's.
    const UserIdentity target = stmt.user.value_or(UserIdentity{me, std::nullopt});
    const bool self = target.name == me;
    switch (stmt.kind) {
      case UserStatementKind::kCreateUser:
        MR_RETURN_IF_ERROR(RequireAdmin(me));
        MR_RETURN_IF_ERROR(access_->CreateUser(target, stmt.change, stmt.if_exists));
        return StatementResult();
      case UserStatementKind::kAlterUser: {
        const bool password_only = !stmt.change.require_ssl && !stmt.change.max_user_connections;
        if (!(self && password_only)) MR_RETURN_IF_ERROR(RequireAdmin(me));
        if (stmt.if_exists && !access_->UserExists(target.name)) return StatementResult();
        MR_RETURN_IF_ERROR(access_->AlterUser(target, stmt.change));
        return StatementResult();
      }
      case UserStatementKind::kDropUser: {
        MR_RETURN_IF_ERROR(RequireAdmin(me));
        const bool existed = access_->UserExists(target.name);
        MR_RETURN_IF_ERROR(access_->DropUser(target, stmt.if_exists));
        // The dropped user's sessions end (as KILL CONNECTION ends them): a session must not
        // outlive its user, nor take on the grants of a new user of the same name.
        if (existed) EndSessionsOf(ctx.session.router(), target.name);
        return StatementResult();
      }
      case UserStatementKind::kSetPassword:
        if (!self) MR_RETURN_IF_ERROR(RequireAdmin(me));
        MR_RETURN_IF_ERROR(access_->AlterUser(target, stmt.change, "SET PASSWORD"));
        return StatementResult();
      case UserStatementKind::kGrant:
      case UserStatementKind::kRevoke: {
        MR_RETURN_IF_ERROR(RequireAdmin(me));
        if (stmt.in_current_database) {
          if (!ctx.session.database()) return sql::NoDatabaseSelectedError();
          stmt.object.database = *ctx.session.database();
        }
        MR_RETURN_IF_ERROR(stmt.kind == UserStatementKind::kGrant
                               ? access_->GrantPrivileges(target, stmt.object, stmt.privileges)
                               : access_->RevokePrivileges(target, stmt.object, stmt.privileges));
        return StatementResult();
      }
      case UserStatementKind::kShowGrants:
        if (!self) MR_RETURN_IF_ERROR(RequireAdmin(me));
        return ShowGrants(ctx.session, target);
      case UserStatementKind::kShowAllGrants:
        MR_RETURN_IF_ERROR(RequireAdmin(me));
        return ShowAllGrants(ctx.session);
      case UserStatementKind::kShowUsers:
        MR_RETURN_IF_ERROR(RequireAdmin(me));
        return ShowUsers(ctx.session);
    }
    return Status::Internal("unhandled statement on users");
  }

  std::string ForLog(std::string_view sql, const std::vector<sql::Token>& tokens) const override {
    return holds_secrets_ ? MaskUserStatement(sql, tokens) : std::string(sql);
  }

 private:
  static void EndSessionsOf(sql::Router& router, const std::string& user) {
    for (const sql::ProcessInfo& process : router.Processes()) {
      if (process.user != user) continue;
      // A session that ended meanwhile is no longer there to end (1094): nothing to do.
      router.Kill(process.id, /*end_session=*/true).IgnoreError();
      MR_LOG(kInfo) << "connection " << process.id << " of dropped user " << user << " is closed";
    }
  }

  Status RequireAdmin(const std::string& user) const {
    if (access_->IsAdmin(user)) return Status::Ok();
    return sql::SpecificAccessDeniedError(PrivilegeName(Privilege::kAdmin));
  }

  Result<StatementResult> ShowGrants(sql::Session& session, const UserIdentity& target) const {
    std::optional<UserRecord> user = access_->FindUser(target.name);
    if (!user || (target.host && !EqualsIgnoreCase(*target.host, user->host))) {
      return sql::NonexistingGrantError(target.name, target.host.value_or(std::string(kAnyHost)));
    }
    return Rows(session, kGrantsColumns, {GrantsRow(*user, access_->GrantsOf(user->name))});
  }

  Result<StatementResult> ShowAllGrants(sql::Session& session) const {
    std::vector<std::vector<std::string>> rows;
    for (const UserRecord& user : access_->Users())
      rows.push_back(GrantsRow(user, access_->GrantsOf(user.name)));
    return Rows(session, kGrantsColumns, std::move(rows));
  }

  Result<StatementResult> ShowUsers(sql::Session& session) const {
    std::vector<std::vector<std::string>> rows;
    for (const UserRecord& user : access_->Users())
      rows.push_back({Literal(user.name), Literal(user.host)});
    return Rows(session, {{"User", "VARCHAR"}, {"Host", "VARCHAR"}}, std::move(rows));
  }

  AccessControl* const access_;
  const bool holds_secrets_;
};

}  // namespace

void RegisterUserStatements(sql::Router* router, AccessControl* access) {
  auto with_secrets = std::make_shared<UserStatementHandler>(access, true);
  auto plain = std::make_shared<UserStatementHandler>(access, false);
  router->RegisterStatement({"CREATE", "USER"}, with_secrets);
  router->RegisterStatement({"ALTER", "USER"}, with_secrets);
  router->RegisterStatement({"SET", "PASSWORD"}, with_secrets);
  router->RegisterStatement({"DROP", "USER"}, plain);
  router->RegisterStatement({"GRANT"}, plain);
  router->RegisterStatement({"REVOKE"}, plain);
  router->RegisterStatement({"SHOW", "GRANTS"}, plain);
  router->RegisterStatement({"SHOW", "ALL", "GRANTS"}, plain);
  router->RegisterStatement({"SHOW", "USERS"}, plain);
}

}  // namespace millrace::access
