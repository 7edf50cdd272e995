// Support for StatementHandlers (router.h) that parse their statement from its tokens and
// answer rows of their own: a cursor over the tokens, and constant result tables.
//
// Contract
// - Cursor walks the significant tokens of one statement after its leading keywords. Its
//   parse errors are MySQL syntax errors (1064) that quote the text where parsing stopped,
//   unless the statement holds a secret (Conceal()): then they name what was expected only.
// - ValuesTable renders rows of SQL literals as one SELECT with typed, named columns; run on
//   the session (Session::ExecuteDuckDb), it streams like any result.
// - Thread-safety: a Cursor belongs to one statement; ValuesTable is a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "sql/lexer.h"
#include "sql/router.h"

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

}  // namespace millrace::sql
