// What a write into a table means under its model (table_def.h), as one DuckDB statement.
//
// Contract
// - ModelInsertSql returns the statement that writes the rows of `source` into `target`
//   (a table with definition `def`). `source` is a query whose columns are `columns` (names of
//   the table's columns, in the order given) and then `order_column`, which orders its rows
//   (a file's line number: later rows are newer).
//   - DUPLICATE: every row is inserted.
//   - UNIQUE: the newest row of each key is kept and replaces the table's row of that key
//     (INSERT ... ON CONFLICT DO UPDATE of the given value columns; a value column not given
//     keeps its value in an existing row and takes its default in a new one).
//   - AGGREGATE: the rows of each key fold with their column's function (SUM, MAX, MIN, the
//     newest for REPLACE, the newest non-NULL for REPLACE_IF_NOT_NULL), then fold with the
//     table's row of that key the same way. NULLs are ignored by SUM, MAX and MIN.
//   Reducing per key first matters: DuckDB's ON CONFLICT DO UPDATE that meets a key twice in
//   one statement keeps the first row, silently.
// - Every key column must be among `columns` (1105 naming the one missing): a row without its
//   key has nowhere to go.
// - UpsertClause is the ON CONFLICT clause ModelWriteSql ends a UNIQUE or AGGREGATE write with,
//   for an INSERT of `columns` whose rows hold no key twice (DuckDB's ON CONFLICT DO UPDATE keeps
//   the first row of a key met twice in one statement, and counts it once in the rows it
//   changed): a caller that writes rows unreduced compares that count with the rows it gave.
// - Doris's delete sign: when `columns` holds kDeleteSign (any case; not a column of the
//   table), a UNIQUE table's key whose newest row has the sign 1 is deleted, and the keys whose
//   newest row has it 0 or NULL are written as above. ModelWriteSql then returns two statements,
//   the DELETE first, to run in one transaction; the sign on another model is 1105. A table
//   that keeps the sign (TableDef::delete_sign_kept) has it as a column: the newest row of each
//   key is written with its sign, nothing is deleted.
// - Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "table/table_def.h"

namespace millrace::table {

inline constexpr std::string_view kDeleteSign = "__DORIS_DELETE_SIGN__";

// The statements writing `source` into `target` under def's model, in order (one, or with the
// delete sign two).
Result<std::vector<std::string>> ModelWriteSql(const TableDef& def, std::string_view target,
                                               const std::vector<std::string>& columns,
                                               std::string_view source,
                                               std::string_view order_column);
Result<std::string> UpsertClause(const TableDef& def, const std::vector<std::string>& columns);
// True when `column` names the delete sign.
bool IsDeleteSign(std::string_view column);

}  // namespace millrace::table
