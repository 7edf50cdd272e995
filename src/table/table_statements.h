// Doris's table statements on the SQL router.
//
// Contract
// - CREATE TABLE in Doris's form (create_table.h) becomes a DuckDB table and its definition's
//   record (model_catalog.h), in one transaction (the session's own when one is open). The
//   client's privileges are checked on the DuckDB CREATE TABLE it becomes, like any DDL.
//   IF NOT EXISTS leaves an existing table and its record as they are. CREATE TABLE ... LIKE
//   copies a Doris table's definition (any privilege on the source is needed, as for SHOW
//   CREATE TABLE), or a plain table's columns. CREATE TABLE ... AS query makes a DUPLICATE table
//   (UNIQUE and AGGREGATE from a query are refused with 1235, for now). A CREATE TABLE in
//   DuckDB's own form goes to DuckDB as written.
// - SHOW CREATE TABLE t prints a Doris table as Doris does; DESC t shows a Doris table's
//   columns as Doris does (Field, Type, Null, Key, Default, Extra: Doris's type, Yes/No,
//   true/false for a key column, the default, a value column's aggregation). Any other table,
//   view or form goes to the handler registered before (sql/builtin_statements.h).
// - Call after the built-in statements are registered.
#pragma once

#include "sql/router.h"

namespace millrace::table {

void RegisterTableStatements(sql::Router* router);

}  // namespace millrace::table
