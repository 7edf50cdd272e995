// What Millrace reads of a PostgreSQL source's catalog: a table's columns, types and key, and
// whether the server and user can stream its changes.
//
// Contract
// - DescribeTable reads a table's live columns in attribute order with their type mappings
//   (pg/pg_types.h) and its primary key. A missing table is NOT_FOUND; a table without a
//   primary key is INVALID_ARGUMENT saying why one is needed (updates and deletes are applied
//   by key).
// - CheckReplication is FAILED_PRECONDITION when wal_level is not logical, naming the setting
//   and how to change it, and PERMISSION_DENIED when the user has neither REPLICATION nor
//   SUPERUSER.
// - Thread-safety: uses the given connection.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "pg/pg_connection.h"
#include "pg/pg_types.h"

namespace millrace::cdc {

struct SourceColumn {
  std::string name;
  pg::PgType type;
  pg::TypeMapping mapping;
  bool not_null = false;
};

struct SourceTable {
  uint32_t oid = 0;
  std::string schema;
  std::string name;
  std::vector<SourceColumn> columns;
  std::vector<size_t> key;  // indexes into columns, in the primary key's order

  // "schema.name", for messages.
  std::string Display() const { return schema + "." + name; }
  // The quoted name for SQL sent to PostgreSQL.
  std::string Quoted(const pg::PgConnection& conn) const;
  // The column named `name`, or -1.
  int Find(const std::string& name) const;
};

Result<SourceTable> DescribeTable(pg::PgConnection& conn, const std::string& schema,
                                  const std::string& table);
Status CheckReplication(pg::PgConnection& conn);

}  // namespace millrace::cdc
