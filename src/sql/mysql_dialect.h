// The MySQL-only lexical forms of a client's statement, rewritten into DuckDB SQL before it
// is checked and run: `#` comments, backtick identifiers, @@system variables, MySQL's column
// names for literals, charset introducers (_binary'x'), LIMIT offset, count, CAST(x AS
// SIGNED|UNSIGNED), CONVERT(x, type) and the session functions (DATABASE(), USER(),
// CONNECTION_ID(), VERSION(), ...), answered from the session.
//
// Contract
// - TranslateForDuckDb copies everything it does not rewrite verbatim (the lexer's byte
//   ranges); an unknown @@variable is the session's error for it.
// - It reads only the DialectContext it is given, never the session itself.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "sql/session_info.h"
#include "sql/session_variables.h"

namespace millrace::sql {

// What the translation answers the session functions and @@variables from.
struct DialectContext {
  const SessionVariables& variables;
  const SessionInfo& info;
  const std::optional<std::string>& database;  // DATABASE(): NULL when none is selected
  std::string_view server_version;             // VERSION()
};

Result<std::string> TranslateForDuckDb(std::string_view statement, const DialectContext& context);

}  // namespace millrace::sql
