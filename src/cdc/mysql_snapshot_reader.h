// MysqlSnapshotReader: a MySQL or MariaDB table's rows in primary-key order, up to
// `parallelism` splits of `split_size` rows at once, each split on a connection of its own.
//
// Contract
// - Begin starts a consistent snapshot on the first connection (mysql_tables.h
//   ConsistentSnapshot) and returns its binlog position; until End or Close, that connection's
//   splits are read in it. MySQL and MariaDB cannot share a snapshot between connections: the
//   other connections' splits, and every split after End (a restart), read the table as it is
//   then, each in a statement of its own. The source's rule makes that right: the stream replays
//   every change after the snapshot's position and upserts are idempotent.
// - Read returns the rows after `after` (the text of the last row's key read before; empty:
//   from the first row), at most parallelism * split_size, in key order, every value as the
//   binlog decoder would give it (SnapshotSelect), and whether the table has no row after them.
//   With parallelism > 1 the split boundaries come first (SplitBoundsSelect, on the first
//   connection).
// - A connection that fails is closed (a held snapshot with it) and made again by the next Read;
//   the error names the table.
// - Thread-safety: one call at a time; Read runs its other splits on threads of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cdc/mysql_tables.h"
#include "cdc/snapshot_ranges.h"
#include "mysql/mysql_connection.h"

namespace millrace::cdc {

class MysqlSnapshotReader {
 public:
  MysqlSnapshotReader(mysql::ConnectParams params, int parallelism, int64_t split_size);
  ~MysqlSnapshotReader();

  Result<SnapshotPosition> Begin();
  // True while the snapshot Begin started is held.
  bool in_snapshot() const { return in_snapshot_; }
  Result<SnapshotRead> Read(const SourceTable& table, const std::vector<std::string>& after);
  // Ends the held snapshot (its transaction commits) and closes the connections.
  void Close();

 private:
  Status ReadRange(size_t i, const SourceTable& table, const KeyRange& range,
                   std::vector<change::Tuple>* rows, int64_t* bytes);

  const mysql::ConnectParams params_;
  const int parallelism_;
  const int64_t split_size_;
  SplitConnections<mysql::MysqlConnection> conns_;
  bool in_snapshot_ = false;  // conns_[0] holds it
};

}  // namespace millrace::cdc
