// Doris's table statements on the SQL router.
//
// Contract
// - CREATE TABLE in Doris's form (create_table.h) becomes a DuckDB table and its definition's
//   record (model_catalog.h), in one transaction (the client's own when one is open). The
//   client's privileges are checked on the DuckDB CREATE TABLE it becomes, like any DDL.
//   IF NOT EXISTS leaves an existing table and its record as they are. CREATE TABLE ... LIKE
//   copies a Doris table's definition (any privilege on the source is needed, as for SHOW
//   CREATE TABLE), or a plain table's columns. CREATE TABLE ... AS query makes a DUPLICATE or
//   UNIQUE table (the query's rows written by the model); AGGREGATE from a query is 1235. A
//   CREATE TABLE in DuckDB's own form, or one the Doris parser refuses and DuckDB takes, goes
//   to DuckDB as written.
// - DROP TABLE forgets the dropped tables' definitions in the transaction that drops them.
// - INSERT into a UNIQUE or AGGREGATE table writes by the model (model_write.h), read with
//   Doris's delete sign; INSERT ... WITH LABEL records its label once its rows are written
//   (load_labels.h); SHOW LOAD lists the labels on tables the user may see. Other INSERTs, and
//   DuckDB's own forms (ON CONFLICT, RETURNING, BY NAME, ...), go to DuckDB as written. Nothing
//   about a table's model is told to a user without a privilege on it.
// - SHOW CREATE TABLE t prints a Doris table as Doris does; DESC t shows a Doris table's
//   columns as Doris does (Field, Type, Null, Key, Default, Extra: Doris's type, Yes/No,
//   true/false for a key column, the default, a value column's aggregation). Any other table,
//   view or form goes to the handler registered before (sql/builtin_statements.h).
// - Call after the built-in statements are registered.
#pragma once

#include "sql/session.h"

namespace millrace::table {

void RegisterTableStatements(sql::Router* router);

}  // namespace millrace::table
