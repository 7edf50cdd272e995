// Doris's "num_as_string": JSON numbers read as their text, digit for digit.
//
// DuckDB's JSON reader parses every number into a double or a 64-bit integer before a type is
// chosen, so 12345678901234567890.123 reads as 12345678901234567168 even into a VARCHAR or
// DECIMAL(38,10) column. QuoteJsonNumbers rewrites a file so that each number is a string of
// the same digits ("12345678901234567890.123"), which DuckDB keeps as text and an INSERT then
// casts exactly into the target column's type.
//
// Contract
// - QuoteJsonNumbers copies `in` to `out` with every number outside a string wrapped in double
//   quotes; all other bytes (strings and their escapes, keys, whitespace, line ends, true,
//   false, null) are copied unchanged, so lines, documents and nesting stay as they were. It
//   reads in blocks (memory is constant) and does not validate the JSON: malformed input stays
//   malformed for DuckDB's reader to refuse. IO_ERROR naming the file when it cannot be read
//   or written. A number is a token that starts with '-' or a digit outside a string.
// - Thread-safety: a pure function of the files.
#pragma once

#include <string>

#include "common/result.h"

namespace millrace::load {

Status QuoteJsonNumbers(const std::string& in, const std::string& out);

}  // namespace millrace::load
