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

Result<std::string> Cursor::Quoted(std::string_view what) {
  if (Done() || tokens_[i_].unterminated ||
      (tokens_[i_].kind != TokenKind::kString && tokens_[i_].kind != TokenKind::kQuotedIdent)) {
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

namespace {

class BuiltinHandler final : public StatementHandler {
 public:
  BuiltinHandler(size_t keyword_count, StatementBody body, bool preserves_diagnostics)
      : keyword_count_(keyword_count),
        body_(std::move(body)),
        preserves_diagnostics_(preserves_diagnostics) {}

  Result<StatementResult> Execute(const StatementContext& ctx) override {
    Cursor cursor(ctx, keyword_count_);
    return body_(ctx, cursor);
  }
  bool PreservesDiagnostics() const override { return preserves_diagnostics_; }

 private:
  size_t keyword_count_;
  StatementBody body_;
  bool preserves_diagnostics_;
};

}  // namespace

void AddStatement(Router& router, std::vector<std::string> keywords, StatementBody body,
                  bool preserves_diagnostics) {
  const size_t count = keywords.size();
  router.RegisterStatement(std::move(keywords), std::make_shared<BuiltinHandler>(
                                                    count, std::move(body), preserves_diagnostics));
}

StatementResult Ok(int64_t affected_rows) {
  StatementResult result;
  result.affected_rows = affected_rows;
  return result;
}

std::string Quote(std::string_view s) {
  return engine::QuoteLiteral(s);
}
std::string Ident(std::string_view s) {
  return engine::QuoteIdentifier(s);
}

Result<PropertyList> ParseProperties(Cursor& c) {
  MR_RETURN_IF_ERROR(c.ExpectPunct("("));
  PropertyList properties;
  if (c.AcceptPunct(")")) return properties;
  do {
    MR_ASSIGN_OR_RETURN(std::string key, c.Quoted("a property name in quotes"));
    MR_RETURN_IF_ERROR(c.ExpectPunct("="));
    MR_ASSIGN_OR_RETURN(std::string value, c.Quoted("a property value in quotes"));
    properties.emplace_back(std::move(key), std::move(value));
  } while (c.AcceptPunct(","));
  MR_RETURN_IF_ERROR(c.ExpectPunct(")"));
  return properties;
}

Result<ShowFilter> ParseFilter(Cursor& c) {
  ShowFilter filter;
  if (c.Accept("LIKE")) {
    MR_ASSIGN_OR_RETURN(filter.like, c.String("a quoted LIKE pattern"));
    MR_RETURN_IF_ERROR(c.ExpectEnd());
  } else if (c.Accept("WHERE")) {
    filter.where = c.Rest();
    if (filter.where.empty()) return c.Expected("a condition after WHERE");
  } else {
    MR_RETURN_IF_ERROR(c.ExpectEnd());
  }
  return filter;
}

Result<StatementResult> ShowQuery(Session& session, const std::string& base,
                                  const std::vector<std::string>& columns, const ShowFilter& filter,
                                  const std::string& order_by) {
  std::string select;
  for (const std::string& column : columns) {
    if (!select.empty()) select += ", ";
    select += Ident(column);
  }
  std::string sql = "SELECT " + select + " FROM (" + base + ") AS _show";
  if (filter.like) {
    sql += " WHERE " + Ident(columns.front()) + " ILIKE " + Quote(*filter.like) + " ESCAPE '\\'";
  } else if (!filter.where.empty()) {
    // The condition is the client's text in SQL that runs unguarded: it must be one
    // expression, and pass the guard as a query over the listing's columns (a subquery of a
    // table the user may not read, or a function the sandbox refuses, is refused here).
    for (const Token& token : SignificantTokens(filter.where)) {
      if (token.kind == TokenKind::kPunct && token.Text(filter.where) == ";") {
        return SyntaxError("the WHERE of a SHOW statement is one condition, without ';'");
      }
    }
    std::string stub;
    for (const std::string& column : columns)
      stub += (stub.empty() ? "" : ", ") + std::string("NULL AS ") + Ident(column);
    MR_RETURN_IF_ERROR(session.CheckClientQuery(
        "SELECT * FROM (SELECT " + stub + ") AS _show WHERE (" + std::string(filter.where) + ")"));
    sql += " WHERE (" + std::string(filter.where) + ")";
  }
  sql += " ORDER BY " + order_by;
  return session.ExecuteDuckDb(sql);
}

Result<StatementResult> ShowValues(const StatementContext& ctx, Cursor& c,
                                   const std::vector<ValuesColumn>& columns,
                                   const std::vector<std::vector<std::string>>& rows) {
  MR_ASSIGN_OR_RETURN(ShowFilter filter, ParseFilter(c));
  std::vector<std::string> names;
  for (const ValuesColumn& column : columns)
    names.push_back(column.name);
  return ShowQuery(ctx.session, ValuesTable(columns, rows), names, filter, Ident(names.front()));
}

std::string CurrentCatalogTable(std::string_view schema_column, std::string_view schema,
                                std::string_view name_column, std::string_view name) {
  return std::string(schema_column) + " = " + Quote(schema) + " AND lower(" +
         std::string(name_column) + ") = lower(" + Quote(name) + ")";
}

}  // namespace millrace::sql
