#include "sql/statement_support.h"

#include <charconv>

#include "engine/database.h"
#include "sql/mysql_errors.h"

namespace millrace::sql {

bool Cursor::Accept(std::string_view keyword) {
  if (Done() || !IsKeyword(sql_, tokens_[i_], keyword)) return false;
  ++i_;
  return true;
}

bool Cursor::AcceptPunct(std::string_view punct) {
  if (Done() || tokens_[i_].kind != TokenKind::kPunct || tokens_[i_].Text(sql_) != punct) {
    return false;
  }
  ++i_;
  return true;
}

Status Cursor::Expect(std::string_view keyword) {
  return Accept(keyword) ? Status::Ok() : Expected(keyword);
}

Status Cursor::ExpectPunct(std::string_view punct) {
  return AcceptPunct(punct) ? Status::Ok() : Expected("'" + std::string(punct) + "'");
}

Result<std::string> Cursor::Identifier(std::string_view what) {
  if (Done() || !IsIdentifier(tokens_[i_]) || tokens_[i_].unterminated) return Expected(what);
  return IdentifierValue(sql_, tokens_[i_++]);
}

Result<std::string> Cursor::Name(std::string_view what) {
  if (!Done() && tokens_[i_].kind == TokenKind::kString && !tokens_[i_].unterminated) {
    return Unquote(sql_, tokens_[i_++]);
  }
  return Identifier(what);
}

Result<std::string> Cursor::String(std::string_view what) {
  if (Done() || tokens_[i_].kind != TokenKind::kString || tokens_[i_].unterminated) {
    return Expected(what);
  }
  return Unquote(sql_, tokens_[i_++]);
}

Result<int64_t> Cursor::Integer(std::string_view what) {
  if (Done() || tokens_[i_].kind != TokenKind::kNumber) return Expected(what);
  const std::string_view text = tokens_[i_].Text(sql_);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) {
    return Expected(what);
  }
  ++i_;
  return value;
}

std::string_view Cursor::TextSince(size_t from) const {
  if (from >= i_) return "";
  return sql_.substr(tokens_[from].begin, tokens_[i_ - 1].end - tokens_[from].begin);
}

Status Cursor::ExpectEnd() const {
  return Done() ? Status::Ok() : Expected("the end of the statement");
}

Status Cursor::Expected(std::string_view what) const {
  if (conceal_) return SyntaxError("expected " + std::string(what));
  std::string near(Rest().substr(0, 40));
  return SyntaxError("expected " + std::string(what) + " near '" + near + "'");
}

Result<TableName> ParseTableName(Cursor& c) {
  TableName name;
  MR_ASSIGN_OR_RETURN(name.table, c.Identifier("a table name"));
  if (c.AcceptPunct(".")) {
    name.database = std::move(name.table);
    MR_ASSIGN_OR_RETURN(name.table, c.Identifier("a table name"));
  }
  return name;
}

Result<std::string> ResolveDatabase(Session& session, const std::optional<std::string>& name) {
  if (!name) {
    if (!session.database()) return NoDatabaseSelectedError();
    return *session.database();
  }
  MR_ASSIGN_OR_RETURN(std::optional<std::string> canonical, session.FindDatabase(*name));
  if (!canonical) return UnknownDatabaseError(*name);
  return *canonical;
}

Status CheckTableExists(Session& session, const std::string& database, const std::string& table) {
  MR_ASSIGN_OR_RETURN(
      std::optional<std::string> count,
      session.QueryScalar("SELECT count(*) FROM information_schema.tables WHERE table_catalog = "
                          "current_database() AND table_schema = " +
                          engine::QuoteLiteral(database) + " AND lower(table_name) = lower(" +
                          engine::QuoteLiteral(table) + ")"));
  if (!count || *count == "0") return NoSuchTableError(database, table);
  return Status::Ok();
}

std::string ValuesTable(const std::vector<ValuesColumn>& columns,
                        const std::vector<std::vector<std::string>>& rows) {
  std::string sql = "SELECT ";
  for (size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) sql += ", ";
    sql += "CAST(" + (rows.empty() ? std::string("NULL") : "col" + std::to_string(i)) + " AS " +
           std::string(columns[i].type) + ") AS " + engine::QuoteIdentifier(columns[i].name);
  }
  if (rows.empty()) return sql + " WHERE false";
  sql += " FROM (VALUES ";
  for (size_t r = 0; r < rows.size(); ++r) {
    if (r > 0) sql += ", ";
    sql += "(";
    for (size_t i = 0; i < rows[r].size(); ++i)
      sql += (i > 0 ? ", " : "") + rows[r][i];
    sql += ")";
  }
  sql += ") AS v(";
  for (size_t i = 0; i < columns.size(); ++i)
    sql += (i > 0 ? ", col" : "col") + std::to_string(i);
  return sql + ")";
}

}  // namespace millrace::sql
