// PgSnapshotReader: a PostgreSQL table's rows in primary-key order, read in one snapshot, up to
// `parallelism` splits of `split_size` rows at once, each split on a connection of its own.
//
// Contract
// - Read returns the rows after `after` (the text of the last row's key read before; empty:
//   from the first row), at most parallelism * split_size of them, in key order, and whether
//   the table has no row after them (`done`).
// - One snapshot per Read: `snapshot` (an exported snapshot's name, "" for none) when it can
//   still be imported (`imported` says so), else a fresh one, taken by the first connection
//   and exported to the others for the length of the Read.
// - With parallelism > 1 the split boundaries come first, from one query over the keys (an
//   index-only scan of at most parallelism * split_size keys) in the same snapshot: every
//   split_size-th key after `after`. The splits between them are exact ranges; when fewer keys
//   remain, the last split is the rest of the table (at most split_size rows).
// - Each split is `COPY (SELECT ... WHERE (key) > (lower) AND (key) <= (upper) ORDER BY key)
//   TO STDOUT` in a REPEATABLE READ READ ONLY transaction. A connection that fails is closed
//   (and made again by the next Read); the error names the table.
// - Thread-safety: one Read at a time; Read runs its other splits on threads of its own and
//   joins them before it returns.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cdc/pg_tables.h"
#include "cdc/snapshot_ranges.h"
#include "change/change_value.h"
#include "common/result.h"
#include "pg/pg_connection.h"

namespace millrace::cdc {

class PgSnapshotReader {
 public:
  PgSnapshotReader(pg::ConnectParams params, int parallelism, int64_t split_size);
  ~PgSnapshotReader();

  Result<SnapshotRead> Read(const SourceTable& table, const std::vector<std::string>& after,
                            const std::string& snapshot);
  // Closes the connections (the snapshot is over; a later Read opens them again).
  void Close();

 private:
  using Range = KeyRange;

  // The SELECT of `range` (its columns in table order).
  std::string RangeSelect(const pg::PgConnection& conn, const SourceTable& table,
                          const Range& range) const;
  // Reads `range` on connection `i`, in `snapshot` (imported; "" when connection i already
  // has its transaction and snapshot), into `rows`; a failed connection is closed.
  Status ReadRange(size_t i, const SourceTable& table, const Range& range,
                   const std::string& snapshot, std::vector<change::Tuple>* rows, int64_t* bytes);
  Status ReadRangeOn(size_t i, const SourceTable& table, const Range& range,
                     const std::string& snapshot, std::vector<change::Tuple>* rows, int64_t* bytes);

  const pg::ConnectParams params_;
  const int parallelism_;
  const int64_t split_size_;
  SplitConnections<pg::PgConnection> conns_;
};

}  // namespace millrace::cdc
