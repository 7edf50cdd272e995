// One row image of a ROWS event decoded into a tuple of change values: each present column's
// value, by its type, as the text binlog_rows.h's contract lists.
//
// Contract
// - DecodeImage reads one row image at the Reader (the NULL bitmap over the present columns,
//   then their values) and advances past it; a column the image leaves out (its bit clear in
//   `present`, which holds a bit for each of the table's columns) is UNCHANGED.
// - Malformed bytes (cut short, a value out of its type's range, a binary JSON document Millrace
//   cannot read) are DATA_LOSS naming the column, its type and the table; a column type Millrace
//   does not decode is NOT_SUPPORTED.
// - ColumnLabel names a column (its name, else its number from 1) and its type, for errors.
// - Thread-safety: pure functions (DecodeImage uses the caller's Reader).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "change/change_value.h"
#include "common/result.h"
#include "mysql/binlog_rows.h"
#include "mysql/byte_reader.h"

namespace millrace::mysql {

// "column <name> (<type>)"; `index` counts from 0.
std::string ColumnLabel(const BinlogColumn& column, size_t index);

// One row image: the NULL bitmap over the present columns, then their values.
Result<change::Tuple> DecodeImage(const BinlogTable& table, std::string_view present, Reader& r);

}  // namespace millrace::mysql
