// What Millrace reads of a PostgreSQL source's catalog: a table's columns, types and key, and
// whether the server and user can stream its changes.
//
// Contract
// - DescribeTable reads a table's live columns in attribute order with their type mappings
//   (pg/pg_types.h) and its primary key. A missing table is NOT_FOUND; unless the key is
//   optional (a sink's target: none makes it DUPLICATE), a table without a primary key is
//   INVALID_ARGUMENT saying why one is needed (updates and deletes are applied by key).
// - DescribeRelation describes the table from a Relation message of the stream (below).
// - CheckReplication is FAILED_PRECONDITION when wal_level is not logical, naming the setting
//   and how to change it, and PERMISSION_DENIED when the user has neither REPLICATION nor
//   SUPERUSER.
// - Thread-safety: uses the given connection.
#pragma once

#include <string>

#include "cdc/source_table.h"
#include "common/result.h"
#include "pg/pg_connection.h"
#include "pg/pg_types.h"
#include "pg/pgoutput.h"

namespace millrace::cdc {

// The quoted schema.name of `table` for SQL sent to PostgreSQL.
std::string QuotedName(const pg::PgConnection& conn, const SourceTable& table);

enum class KeyRule { kRequired, kOptional };
Result<SourceTable> DescribeTable(pg::PgConnection& conn, const std::string& schema,
                                  const std::string& table, KeyRule key = KeyRule::kRequired);
// The table as a Relation message of the change stream describes it (which may be behind the
// catalog): its columns in the message's order, their types looked up by OID (a domain by its
// base type), the missing values of the columns that have one, and the key of `known` (the
// same table, described before). A key column the message lacks is FAILED_PRECONDITION.
Result<SourceTable> DescribeRelation(pg::PgConnection& conn, const SourceTable& known,
                                     const pg::RelationMessage& relation);
Status CheckReplication(pg::PgConnection& conn);

}  // namespace millrace::cdc
