// ClientStatement: a statement a client prepared (COM_STMT_PREPARE) and executes with bound
// parameters (COM_STMT_EXECUTE), as many times as it likes.
//
// Contract
// - Session::Prepare takes one statement with `?` placeholders. One DuckDB answers (no handler
//   of Millrace's claims it and it calls no table function) is translated, checked by the
//   guard and prepared on the session's connection: parsed and planned once, its parameter
//   count and result columns known at prepare. Others (Millrace's own statements, table
//   functions) stay text: each execution puts the values, as SQL literals, in place of the
//   placeholders and runs the text as Session::Execute does; their result columns are known
//   only when they run. An empty statement, or several, is an error.
// - Session::ExecutePrepared binds exactly parameter_count() values and runs the statement. The
//   guard's checks run again first, so a privilege revoked since the prepare applies. Activity
//   (SHOW PROCESSLIST, KILL QUERY), the last error and the audit are recorded as Execute records
//   them.
// - A ClientStatement belongs to the session that prepared it and must not outlive it.
// - Thread-safety: the session's thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/database.h"

namespace millrace::sql {

// A bound parameter value as the client sent it.
struct ParamValue {
  enum class Kind { kNull, kInt, kUInt, kDouble, kText, kBytes };
  Kind kind = Kind::kNull;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string text;  // kText (also dates, times and decimals as text) and kBytes

  // The value as an SQL literal of the statements Millrace runs (bytes as unhex('...')).
  std::string Literal() const;
};

class ClientStatement {
 public:
  size_t parameter_count() const { return parameter_count_; }
  // The result columns known at prepare; empty when none or not known before it runs.
  const std::vector<engine::PreparedStatement::Column>& columns() const { return columns_; }

 private:
  friend class Session;
  std::string text_;       // as the client sent it
  std::string check_sql_;  // what the guard checks at each execution (DuckDB statements)
  std::unique_ptr<engine::PreparedStatement> prepared_;  // null: a text statement
  size_t parameter_count_ = 0;
  std::vector<engine::PreparedStatement::Column> columns_;
};

// `statement` with each `?` placeholder replaced by the next of `literals` (outside strings,
// identifiers and comments); INVALID_ARGUMENT when the counts differ.
Result<std::string> BindLiterals(std::string_view statement,
                                 const std::vector<std::string>& literals);
// The number of `?` placeholders of `statement`.
size_t CountPlaceholders(std::string_view statement);

}  // namespace millrace::sql
