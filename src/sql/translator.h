// The MySQL-only lexical forms of a client's statement, rewritten into DuckDB SQL before it
// is checked and run: `#` comments, backtick identifiers, @@system variables, MySQL's column
// names for literals, charset introducers (_binary'x'), LIMIT offset, count, CAST(x AS
// SIGNED|UNSIGNED), CONVERT(x, type) and the session functions (DATABASE(), USER(),
// CONNECTION_ID(), VERSION(), ...), answered from the session.
//
// Contract
// - TranslateForDuckDb copies everything it does not rewrite verbatim (the lexer's byte
//   ranges); an unknown @@variable is the session's error for it.
// - Thread-safety: reads the session; called on the session's thread.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace millrace::sql {

class Session;

Result<std::string> TranslateForDuckDb(std::string_view statement, Session& session);

}  // namespace millrace::sql
