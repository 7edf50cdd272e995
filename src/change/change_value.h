// The values of a change stream, whatever its source: a row as the text form of each value,
// and how a column's text becomes a DuckDB value (its type mapping).
//
// Contract
// - A Tuple holds one TupleValue per column: NULL, the value's text, or UNCHANGED (a value the
//   source did not send because the change did not touch it, e.g. PostgreSQL's TOASTed
//   values: the subscriber keeps what it has).
// - A TypeMapping names the DuckDB type a column's values take, the Doris type a created target
//   declares for it, and the form its text comes in:
//     kCast      text DuckDB casts to the type (numbers, dates, timestamps, UUIDs, JSON, ...)
//     kBytea     bytes as '\x' followed by hex digits
//     kInterval  PostgreSQL's interval text (IntervalStyle postgres)
//     kArray     a one-dimensional array in PostgreSQL's literal form ({a,"b c",NULL})
// - StageText(mapping, text) is the text to stage for a value: kArray becomes a JSON array of
//   strings and nulls (ArrayToJson), others stay as they are. ValueSql(mapping, expr) is the
//   DuckDB expression converting the staged VARCHAR `expr` to the mapped type.
// - Thread-safety: values and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace millrace::change {

struct TupleValue {
  enum class Kind : char { kNull = 'n', kUnchanged = 'u', kText = 't' };
  Kind kind = Kind::kNull;
  std::string text;
};
using Tuple = std::vector<TupleValue>;

enum class ValueForm { kCast, kBytea, kInterval, kArray };

struct TypeMapping {
  std::string duckdb_type;
  std::string doris_type;
  ValueForm form = ValueForm::kCast;
};

std::string ValueSql(const TypeMapping& mapping, std::string_view expr);
Result<std::string> StageText(const TypeMapping& mapping, std::string_view text);

// A one-dimensional array in PostgreSQL's text form as a JSON array of strings and nulls;
// INVALID_ARGUMENT for a malformed or multi-dimensional array.
Result<std::string> ArrayToJson(std::string_view text);

}  // namespace millrace::change
