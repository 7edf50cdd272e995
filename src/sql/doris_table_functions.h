// Doris-style table-function calls in SQL text: `name("key" = "value", ...)`.
//
// Users write table functions the Doris way (`S3("uri" = "s3://b/*.csv", "format" = "csv")`,
// `jobs("type" = "insert")`); DuckDB does not parse that syntax. Before a statement reaches
// DuckDB, the SQL layer finds every call of a registered name (case-insensitive, outside string
// literals, quoted identifiers and comments), parses its arguments, and asks the registered
// expander for the SQL that replaces the call.
//
// Contract
// - A call is a registered name (not preceded by '.') followed by '(' whose first argument
//   token is a quoted string; any other use of the name (a column, `jobs(type := 'x')` in
//   DuckDB's own syntax, an empty `name()`) is left to DuckDB.
// - Arguments: a comma-separated list of `"key" = value` pairs, where key is a double- or
//   single-quoted string and value a quoted string or a bare number (`"k" = 0.5`, `-1`).
//   Quotes inside a value are doubled ("a""b"); backslash escapes are resolved as in MySQL
//   and Doris string literals (`"\t"` is a tab, `"\\"` a backslash). Keys are lower-cased; a
//   repeated key, a missing `=`, a missing value or an unterminated call is INVALID_ARGUMENT
//   naming the function and the byte offset in the statement.
// - An expander validates the arguments (unknown keys are errors that name them) and returns
//   replacement SQL usable where a table stands (e.g. `jobs(type := 'insert')`, or
//   `(SELECT * FROM read_csv([...]))`), plus resources (downloaded files, temp dirs) that must
//   live until the statement has finished; the caller destroys them afterwards.
// - Thread-safety: an expander may be called concurrently from many sessions; the registry
//   may be modified while sessions use it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"
#include "engine/database.h"

namespace millrace::sql {

using DorisArgs = std::map<std::string, std::string, std::less<>>;

// Anything an expansion must keep alive until its statement completes.
class StatementResources {
 public:
  virtual ~StatementResources() = default;
};

struct Expansion {
  std::string sql;
  std::unique_ptr<StatementResources> resources;  // may be null
  // For checks (statement_guard.h): SQL with the columns of `sql` that reads nothing. Empty
  // when `sql` reads only through Millrace's own table functions and is checked as it is.
  std::string stand_in;
};

// A stand-in for `relation_sql` (a parenthesized SELECT): its column names and types, from
// DuckDB's DESCRIBE on `conn`, as a relation of no rows.
Result<std::string> StandInFor(engine::Connection& conn, std::string_view relation_sql);

class TableFunctionExpander {
 public:
  virtual ~TableFunctionExpander() = default;
  virtual Result<Expansion> Expand(const DorisArgs& args) = 0;
};

// Rewrites a DuckDB table function with VARCHAR named parameters: name("k" := 'v', ...).
// Argument validation is left to the table function's Bind (engine::TableFunction).
class NamedParameterExpander final : public TableFunctionExpander {
 public:
  explicit NamedParameterExpander(std::string duckdb_name) : duckdb_name_(std::move(duckdb_name)) {}
  Result<Expansion> Expand(const DorisArgs& args) override;

 private:
  std::string duckdb_name_;
};

// One Doris-style call found in a statement.
struct DorisCall {
  std::string name;  // lower-cased
  size_t begin = 0;  // offset of the name
  size_t end = 0;    // one past the closing ')'
  DorisArgs args;
};

// Finds the Doris-style calls of the functions for which `is_function(lower_name)` is true.
Result<std::vector<DorisCall>> FindDorisCalls(
    std::string_view sql, const std::function<bool(std::string_view)>& is_function);

// Name -> expander, matched case-insensitively.
class TableFunctionRegistry {
 public:
  void Register(std::string_view name, std::shared_ptr<TableFunctionExpander> expander)
      EXCLUDES(mu_);
  // nullptr when `name` is not registered.
  std::shared_ptr<TableFunctionExpander> Find(std::string_view name) const EXCLUDES(mu_);

  struct Rewritten {
    std::string sql;
    std::string check_sql;  // `sql` with each expansion's stand-in (Expansion::stand_in)
    std::vector<std::unique_ptr<StatementResources>> resources;
  };
  // Called with each call's name before it is expanded; an error stops the expansion.
  using BeforeCall = std::function<Status(std::string_view name)>;
  // Replaces every registered call in `sql` by its expansion; errors name the function.
  Result<Rewritten> Expand(std::string_view sql, const BeforeCall& before_call = nullptr) const
      EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<TableFunctionExpander>, std::less<>> expanders_
      GUARDED_BY(mu_);
};

}  // namespace millrace::sql
