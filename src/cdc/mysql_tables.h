// What Millrace reads of a MySQL or MariaDB source's catalog, and the SQL that copies a table's
// rows in the same text the binlog decoder gives them, so a snapshot and the change stream
// agree on every value.
//
// Contract
// - DescribeMysqlTable reads a table's columns from information_schema in ordinal order and
//   maps each as the binlog's TABLE_MAP would describe it (mysql::MapColumn), so a column has
//   the same mapping from either side; type_name is COLUMN_TYPE (e.g. "int(10) unsigned"),
//   type_id the binlog's type code. The primary key comes from the PRIMARY constraint. A
//   missing table is NOT_FOUND naming it; one without a primary key INVALID_ARGUMENT saying
//   why one is needed; a table of another engine than InnoDB (only InnoDB reads a consistent
//   snapshot), a character set the binlog decoder does not read, or an ENUM or SET key column
//   (its ORDER BY and its comparisons disagree), NOT_SUPPORTED naming it.
// - SnapshotSelect is a SELECT of the table's rows after `after` (the staged text of the last
//   key read; empty: from the first row), in key order, at most `limit`, whose every value is
//   the text binlog_rows.h gives the same value: binary strings as '\x' hex, BIT as an unsigned
//   integer, TIMESTAMP in UTC with '+00' (the session's time_zone is '+00:00',
//   mysql_connection.h), zero dates and a date with a zero month or day as NULL; others as the
//   server prints them. FLOAT comes through DOUBLE (the exact value where the binlog gives the
//   shortest text) and DOUBLE may spell its exponent without '+': the same value in DuckDB.
//   Key bounds are numbers for numeric keys (MySQL would compare a quoted one as a double).
// - DescribeTableMap and SameShape read the binlog's own description of a table (see below).
// - A ConsistentSnapshot opens a REPEATABLE READ transaction WITH CONSISTENT SNAPSHOT on `conn`
//   (rolled back when the position cannot be read) and returns
//   the binlog position it sees (MariaDB's binlog_snapshot_file / _position, and the GTID
//   position BINLOG_GTID_POS gives for it): every transaction committed at or before it is in
//   the snapshot, none after it. The caller reads, then commits.
// - Thread-safety: uses the given connection.
#pragma once

#include <string>
#include <vector>

#include "cdc/source_table.h"
#include "common/result.h"
#include "mysql/binlog_stream.h"
#include "mysql/mysql_connection.h"

namespace millrace::cdc {

Result<SourceTable> DescribeMysqlTable(mysql::MysqlConnection& conn, const std::string& schema,
                                       const std::string& table);

// `upper` (non-empty): the rows up to that key too, however many (`limit` is then unused).
std::string SnapshotSelect(const mysql::MysqlConnection& conn, const SourceTable& table,
                           const std::vector<std::string>& after, int64_t limit,
                           const std::vector<std::string>& upper = {});
// The split boundaries of a read after `after`: every split_size-th key, at most `count` of
// them, each key column's value as SnapshotSelect gives it.
std::string SplitBoundsSelect(const mysql::MysqlConnection& conn, const SourceTable& table,
                              const std::vector<std::string>& after, int64_t split_size, int count);

// A table as a TABLE_MAP event describes it (binlog_row_metadata = FULL gives column names,
// types and the primary key): the shape of the changes that follow it. A column's type_name is
// `known`'s for a column of the same name and type, else the DuckDB type it maps to.
SourceTable DescribeTableMap(const mysql::BinlogTable& table, const SourceTable& known);
// True when `table` has `shape`'s columns: names, types and mappings, in order.
bool SameShape(const mysql::BinlogTable& table, const SourceTable& shape);

struct SnapshotPosition {
  mysql::BinlogPosition position;
  std::string gtid;  // "" when the server gives none
};
Result<SnapshotPosition> ConsistentSnapshot(mysql::MysqlConnection& conn);
// The end of the server's binlog now (SHOW MASTER STATUS), with its GTID position.
Result<SnapshotPosition> BinlogEnd(mysql::MysqlConnection& conn);
// The GTID position of a binlog position (MariaDB's BINLOG_GTID_POS); "" on MySQL.
Result<std::string> GtidPositionOf(mysql::MysqlConnection& conn,
                                   const mysql::BinlogPosition& position);

}  // namespace millrace::cdc
