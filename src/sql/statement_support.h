// Support for StatementHandlers (router.h) that parse their statement from its tokens and
// answer rows of their own: a cursor over the tokens, and constant result tables.
//
// Contract
// - Cursor walks the significant tokens of one statement after its leading keywords. Its
//   parse errors are MySQL syntax errors (1064) that quote the text where parsing stopped,
//   unless the statement holds a secret (Conceal()): then they name what was expected only.
// - ValuesTable renders rows of SQL literals as one SELECT with typed, named columns; run on
//   the session (Session::ExecuteDuckDb), it streams like any result.
// - AddStatement registers a handler whose body parses with a Cursor; ShowQuery answers a SHOW
//   listing from a base query, as MySQL filters it (LIKE on the first column, or WHERE).
// - Thread-safety: a Cursor belongs to one statement; ValuesTable is a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "sql/lexer.h"
#include "sql/session.h"

namespace millrace::sql {

class Cursor {
 public:
  Cursor(std::string_view sql, const std::vector<Token>& tokens, size_t start)
      : sql_(sql), tokens_(tokens), i_(start) {}
  Cursor(const StatementContext& ctx, size_t start) : Cursor(ctx.sql, ctx.tokens, start) {}

  bool Done() const { return i_ >= tokens_.size(); }
  const Token* Peek() const { return Done() ? nullptr : &tokens_[i_]; }

  bool Accept(std::string_view keyword);
  bool AcceptPunct(std::string_view punct);
  Status Expect(std::string_view keyword);
  Status ExpectPunct(std::string_view punct);

  Result<std::string> Identifier(std::string_view what);
  // An identifier or a quoted string (MySQL accepts both for names and patterns).
  Result<std::string> Name(std::string_view what);
  Result<std::string> String(std::string_view what);
  // A string in single or double quotes (Doris's property names and values).
  Result<std::string> Quoted(std::string_view what);
  // A non-negative integer literal.
  Result<int64_t> Integer(std::string_view what);

  // The statement text from the current token on.
  std::string_view Rest() const { return Done() ? "" : sql_.substr(tokens_[i_].begin); }
  // The text of tokens [from, current) of the statement.
  std::string_view TextSince(size_t from) const;
  size_t index() const { return i_; }
  void Skip() { ++i_; }
  std::string_view sql() const { return sql_; }

  // Parse errors stop quoting the statement's text.
  void Conceal() { conceal_ = true; }
  Status ExpectEnd() const;
  Status Expected(std::string_view what) const;

 private:
  std::string_view sql_;
  const std::vector<Token>& tokens_;
  size_t i_;
  bool conceal_ = false;
};

// PROPERTIES' list after the keyword: ( "key" = "value" [, ...] ), each in single or double
// quotes, in the order given; () is none.
using PropertyList = std::vector<std::pair<std::string, std::string>>;
Result<PropertyList> ParseProperties(Cursor& c);

// A table as a statement names it: [database.]table.
struct TableName {
  std::optional<std::string> database;
  std::string table;
};
Result<TableName> ParseTableName(Cursor& c);
// The canonical name of `name` (1049 when there is no such database), or of the session's
// current database (1046 when none is selected).
Result<std::string> ResolveDatabase(Session& session, const std::optional<std::string>& name);
// OK when `database`.`table` is a table or view (names compared case-insensitively); 1146
// otherwise.
Status CheckTableExists(Session& session, const std::string& database, const std::string& table);

struct ValuesColumn {
  std::string name;
  std::string_view type;  // DuckDB type of the column
};

// A constant table as SQL: each row holds SQL literals, one per column.
std::string ValuesTable(const std::vector<ValuesColumn>& columns,
                        const std::vector<std::vector<std::string>>& rows);

// The sql module's own statements: `body` parses what follows `keywords` with a Cursor.
using StatementBody = std::function<Result<StatementResult>(const StatementContext&, Cursor&)>;
void AddStatement(Router& router, std::vector<std::string> keywords, StatementBody body,
                  bool preserves_diagnostics = false);
// An answer without rows.
StatementResult Ok(int64_t affected_rows = 0);
// A SQL string literal and a quoted identifier.
std::string Quote(std::string_view s);
std::string Ident(std::string_view s);

// SHOW listings: a base query, filtered by LIKE (on the first column, case-insensitively as
// MySQL's default collation compares) or by a WHERE over the output columns.
struct ShowFilter {
  std::optional<std::string> like;
  std::string_view where;
};
// LIKE 'pattern' | WHERE condition | nothing, to the end of the statement.
Result<ShowFilter> ParseFilter(Cursor& c);
// Runs `base`, keeping `columns` (its output column names, in order), filtered and ordered.
Result<StatementResult> ShowQuery(Session& session, const std::string& base,
                                  const std::vector<std::string>& columns, const ShowFilter& filter,
                                  const std::string& order_by);
// A listing of constant rows, filtered as the statement's rest says.
Result<StatementResult> ShowValues(const StatementContext& ctx, Cursor& c,
                                   const std::vector<ValuesColumn>& columns,
                                   const std::vector<std::vector<std::string>>& rows);
// `schema_column` = schema AND `name_column` matches name case-insensitively, as SQL.
std::string CurrentCatalogTable(std::string_view schema_column, std::string_view schema,
                                std::string_view name_column, std::string_view name);

}  // namespace millrace::sql
