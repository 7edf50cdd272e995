#include "access/user_statement.h"

#include <algorithm>
#include <array>

#include "access/password.h"
#include "common/strings.h"
#include "sql/mysql_errors.h"
#include "sql/statement_support.h"

namespace millrace::access {
namespace {

using sql::Cursor;
using sql::Token;
using sql::TokenKind;

// name[@host], or CURRENT_USER[()] (nullopt: the session's user).
Result<std::optional<UserIdentity>> ParseUser(Cursor& c) {
  if (c.Accept("CURRENT_USER")) {
    if (c.AcceptPunct("(")) MR_RETURN_IF_ERROR(c.ExpectPunct(")"));
    return std::optional<UserIdentity>();
  }
  UserIdentity user;
  MR_ASSIGN_OR_RETURN(user.name, c.Name("a user name"));
  const Token* next = c.Peek();
  if (next != nullptr && next->kind == TokenKind::kVariable) {
    // name@localhost: the lexer reads "@localhost" as a variable.
    const std::string_view text = next->Text(c.sql());
    if (text.size() > 1 && text[1] != '@') {
      user.host = std::string(text.substr(1));
      c.Skip();
    }
  } else if (c.AcceptPunct("@")) {
    MR_ASSIGN_OR_RETURN(user.host, c.Name("a host after '@'"));
  }
  return std::optional<UserIdentity>(std::move(user));
}

// 'secret' (single- or double-quoted).
Result<std::string> ParseSecret(Cursor& c) {
  const Token* t = c.Peek();
  if (t != nullptr && t->kind == TokenKind::kQuotedIdent && !t->unterminated) {
    c.Skip();
    return sql::Unquote(c.sql(), *t);
  }
  return c.String("a quoted password");
}

// The hash of IDENTIFIED BY PASSWORD '*HEX'.
Result<std::string> ParseHash(Cursor& c) {
  MR_ASSIGN_OR_RETURN(std::string text, ParseSecret(c));
  Result<std::string> hash = ParseNativeHashText(text);
  if (!hash.ok()) return sql::PasswordFormatError();
  return hash;
}

// After IDENTIFIED: BY [PASSWORD] 'x' | WITH plugin [BY 'pw' | AS 'hash'].
Result<std::string> ParseIdentified(Cursor& c) {
  if (c.Accept("WITH")) {
    MR_ASSIGN_OR_RETURN(std::string plugin, c.Name("an authentication plugin"));
    if (!EqualsIgnoreCase(plugin, "mysql_native_password")) {
      return Status::NotSupported("Millrace authenticates with mysql_native_password only, not " +
                                  plugin)
          .WithDetail({ErrorDomain::kMySql, sql::kErNotSupportedYet, 0});
    }
    if (c.Accept("AS")) return ParseHash(c);
  }
  MR_RETURN_IF_ERROR(c.Expect("BY"));
  if (c.Accept("PASSWORD")) return ParseHash(c);
  MR_ASSIGN_OR_RETURN(std::string password, ParseSecret(c));
  return NativePasswordHash(password);
}

// [IDENTIFIED ...] [REQUIRE SSL|NONE] [WITH MAX_USER_CONNECTIONS n], in any order.
Status ParseUserOptions(Cursor& c, UserChange* change) {
  while (!c.Done()) {
    if (!change->password_hash && c.Accept("IDENTIFIED")) {
      MR_ASSIGN_OR_RETURN(change->password_hash, ParseIdentified(c));
    } else if (!change->require_ssl && c.Accept("REQUIRE")) {
      if (c.Accept("SSL")) {
        change->require_ssl = true;
      } else if (c.Accept("NONE")) {
        change->require_ssl = false;
      } else {
        return c.Expected("SSL or NONE after REQUIRE");
      }
    } else if (!change->max_user_connections && c.Accept("WITH")) {
      MR_RETURN_IF_ERROR(c.Expect("MAX_USER_CONNECTIONS"));
      MR_ASSIGN_OR_RETURN(change->max_user_connections, c.Integer("a number of connections"));
    } else {
      return c.Expected("IDENTIFIED, REQUIRE or WITH MAX_USER_CONNECTIONS");
    }
  }
  return Status::Ok();
}

// privilege [, privilege ...], up to ON.
Result<PrivilegeSet> ParsePrivileges(Cursor& c) {
  PrivilegeSet set;
  do {
    std::string name;
    while (!c.Done() && c.Peek()->kind == TokenKind::kWord &&
           !sql::IsKeyword(c.sql(), *c.Peek(), "ON")) {
      if (!name.empty()) name += ' ';
      name += c.Peek()->Text(c.sql());
      c.Skip();
    }
    if (name.empty()) return c.Expected("a privilege");
    std::optional<PrivilegeSet> privileges = ParsePrivilegeName(name);
    if (!privileges) {
      return sql::SyntaxError("unknown privilege " + name +
                              "; Millrace's are SELECT_PRIV, LOAD_PRIV, ALTER_PRIV, CREATE_PRIV, "
                              "DROP_PRIV and ADMIN_PRIV (or MySQL's names for them)");
    }
    set.Add(*privileges);
  } while (c.AcceptPunct(","));
  return set;
}

// *.* | *.*.* | db.* | db.tbl | * | tbl | ctl.*.* | ctl.db.* | ctl.db.tbl
Status ParseObject(Cursor& c, UserStatement* stmt) {
  if (c.AcceptPunct("*")) {
    if (c.AcceptPunct(".")) {
      MR_RETURN_IF_ERROR(c.ExpectPunct("*"));
      if (c.AcceptPunct(".")) MR_RETURN_IF_ERROR(c.ExpectPunct("*"));
      stmt->object = GrantObject{};  // *.* (every catalog)
    } else {
      stmt->in_current_database = true;
    }
    return Status::Ok();
  }
  MR_ASSIGN_OR_RETURN(std::string first, c.Identifier("*.*, db.*, db.tbl, ctl.db.tbl or tbl"));
  if (!c.AcceptPunct(".")) {
    stmt->in_current_database = true;
    stmt->object.table = std::move(first);
    return Status::Ok();
  }
  if (c.AcceptPunct("*")) {
    if (!c.AcceptPunct(".")) {
      stmt->object.database = std::move(first);  // db.*
      return Status::Ok();
    }
    MR_RETURN_IF_ERROR(c.ExpectPunct("*"));  // ctl.*.*
    if (EqualsIgnoreCase(first, kInternalCatalog)) {
      return sql::SyntaxError(
          "a grant ON internal.*.* is not kept: grant ON *.* (every catalog) or ON db.* (one "
          "database)");
    }
    stmt->object.catalog = std::move(first);
    return Status::Ok();
  }
  MR_ASSIGN_OR_RETURN(std::string second, c.Identifier("a table name or *"));
  if (!c.AcceptPunct(".")) {
    stmt->object.database = std::move(first);  // db.tbl
    stmt->object.table = std::move(second);
    return Status::Ok();
  }
  // ctl.db.* or ctl.db.tbl; internal.db.tbl is db.tbl.
  if (!EqualsIgnoreCase(first, kInternalCatalog)) stmt->object.catalog = std::move(first);
  stmt->object.database = std::move(second);
  if (c.AcceptPunct("*")) return Status::Ok();
  MR_ASSIGN_OR_RETURN(stmt->object.table, c.Identifier("a table name or *"));
  return Status::Ok();
}

Result<UserStatement> ParseGrant(Cursor& c, UserStatementKind kind) {
  UserStatement stmt;
  stmt.kind = kind;
  MR_ASSIGN_OR_RETURN(stmt.privileges, ParsePrivileges(c));
  MR_RETURN_IF_ERROR(c.Expect("ON"));
  MR_RETURN_IF_ERROR(ParseObject(c, &stmt));
  MR_RETURN_IF_ERROR(c.Expect(kind == UserStatementKind::kGrant ? "TO" : "FROM"));
  MR_ASSIGN_OR_RETURN(stmt.user, ParseUser(c));
  MR_RETURN_IF_ERROR(c.ExpectEnd());
  return stmt;
}

Result<UserStatement> ParseUserChange(Cursor& c, UserStatementKind kind) {
  UserStatement stmt;
  stmt.kind = kind;
  if (c.Accept("IF")) {
    if (kind == UserStatementKind::kCreateUser) MR_RETURN_IF_ERROR(c.Expect("NOT"));
    MR_RETURN_IF_ERROR(c.Expect("EXISTS"));
    stmt.if_exists = true;
  }
  MR_ASSIGN_OR_RETURN(stmt.user, ParseUser(c));
  if (kind == UserStatementKind::kDropUser) {
    MR_RETURN_IF_ERROR(c.ExpectEnd());
    return stmt;
  }
  MR_RETURN_IF_ERROR(ParseUserOptions(c, &stmt.change));
  return stmt;
}

Result<UserStatement> ParseSetPassword(Cursor& c) {
  UserStatement stmt;
  stmt.kind = UserStatementKind::kSetPassword;
  if (c.Accept("FOR")) {
    MR_ASSIGN_OR_RETURN(stmt.user, ParseUser(c));
  }
  MR_RETURN_IF_ERROR(c.ExpectPunct("="));
  std::string password;
  if (c.Accept("PASSWORD")) {
    MR_RETURN_IF_ERROR(c.ExpectPunct("("));
    MR_ASSIGN_OR_RETURN(password, ParseSecret(c));
    MR_RETURN_IF_ERROR(c.ExpectPunct(")"));
  } else {
    MR_ASSIGN_OR_RETURN(password, ParseSecret(c));
  }
  MR_RETURN_IF_ERROR(c.ExpectEnd());
  stmt.change.password_hash = NativePasswordHash(password);
  return stmt;
}

Result<UserStatement> ParseShow(Cursor& c) {
  UserStatement stmt;
  if (c.Accept("USERS")) {
    stmt.kind = UserStatementKind::kShowUsers;
  } else if (c.Accept("ALL")) {
    MR_RETURN_IF_ERROR(c.Expect("GRANTS"));
    stmt.kind = UserStatementKind::kShowAllGrants;
  } else {
    MR_RETURN_IF_ERROR(c.Expect("GRANTS"));
    stmt.kind = UserStatementKind::kShowGrants;
    if (c.Accept("FOR")) {
      MR_ASSIGN_OR_RETURN(stmt.user, ParseUser(c));
    }
  }
  MR_RETURN_IF_ERROR(c.ExpectEnd());
  return stmt;
}

}  // namespace

Result<UserStatement> ParseUserStatement(std::string_view sql, const std::vector<Token>& tokens) {
  Cursor c(sql, tokens, 0);
  c.Conceal();
  if (c.Accept("CREATE")) {
    MR_RETURN_IF_ERROR(c.Expect("USER"));
    return ParseUserChange(c, UserStatementKind::kCreateUser);
  }
  if (c.Accept("ALTER")) {
    MR_RETURN_IF_ERROR(c.Expect("USER"));
    MR_ASSIGN_OR_RETURN(UserStatement stmt, ParseUserChange(c, UserStatementKind::kAlterUser));
    const UserChange& change = stmt.change;
    if (!change.password_hash && !change.require_ssl && !change.max_user_connections) {
      return c.Expected("IDENTIFIED, REQUIRE or WITH MAX_USER_CONNECTIONS");
    }
    return stmt;
  }
  if (c.Accept("DROP")) {
    MR_RETURN_IF_ERROR(c.Expect("USER"));
    return ParseUserChange(c, UserStatementKind::kDropUser);
  }
  if (c.Accept("SET")) {
    MR_RETURN_IF_ERROR(c.Expect("PASSWORD"));
    return ParseSetPassword(c);
  }
  if (c.Accept("GRANT")) return ParseGrant(c, UserStatementKind::kGrant);
  if (c.Accept("REVOKE")) return ParseGrant(c, UserStatementKind::kRevoke);
  if (c.Accept("SHOW")) return ParseShow(c);
  return c.Expected("a statement on users or grants");
}

std::string MaskUserStatement(std::string_view sql, const std::vector<Token>& tokens) {
  // Words that may follow the secret and are worth keeping in the log.
  static constexpr std::array<std::string_view, 9> kKept = {
      "IDENTIFIED",          "BY", "WITH", "AS", "PASSWORD", "REQUIRE", "SSL", "NONE",
      "MAX_USER_CONNECTIONS"};
  std::string out;
  bool masking = false;
  bool after_limit = false;
  for (const Token& token : tokens) {
    const std::string_view text = token.Text(sql);
    std::string_view shown = text;
    const bool keyword = token.kind == TokenKind::kWord &&
                         std::any_of(kKept.begin(), kKept.end(),
                                     [&](std::string_view k) { return EqualsIgnoreCase(text, k); });
    if (masking && token.kind != TokenKind::kPunct && !keyword &&
        !(after_limit && token.kind == TokenKind::kNumber)) {
      shown = "****";
    }
    if (sql::IsKeyword(sql, token, "IDENTIFIED") || sql::IsKeyword(sql, token, "PASSWORD") ||
        (token.kind == TokenKind::kPunct && (text == "=" || text == "("))) {
      masking = true;
    }
    after_limit = sql::IsKeyword(sql, token, "MAX_USER_CONNECTIONS");
    if (!out.empty()) out += ' ';
    out += shown;
  }
  return out;
}

}  // namespace millrace::access
