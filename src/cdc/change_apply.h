// ChangeApply: a run of one source table's changes written into its UNIQUE KEY target, in a
// sink's transaction (through its connection).
//
// Contract
// - Apply writes `changes` in order: an upsert's row replaces the target's row of its key, a
//   delete removes it, a truncate empties the target. Within a run the newest change of each
//   source key decides (reduced before writing when a key comes twice, so no key is written
//   twice); a run of upserts only, through a SELECT without a filter, is one INSERT ... ON
//   CONFLICT. A truncate is the transaction's EmptyTarget.
// - A target that keeps Doris's delete sign (TableDef::delete_sign_kept: a sink's staging table,
//   copied elsewhere) is written a key's newest change with its sign: 1 for a delete (its
//   non-key columns NULL), 0 for an upsert; nothing is deleted from it.
// - The job's SELECT maps source rows to target rows: `select_sql` reads the source as the
//   table kSourceName. The target holds exactly the mapped rows the SELECT's filter keeps: a
//   key whose newest change is a delete, or an upsert the filter drops, is deleted from the
//   target through the SELECT without its filter (`unfiltered_sql`; "" when the SELECT has no
//   filter), which maps the key; a deleted row's non-key columns are NULL there.
// - An UPDATE leaves a TOASTed value it did not change out of the stream: it is taken from the
//   old row when the source sent one (REPLICA IDENTITY FULL), else from an earlier change of
//   the key in this run, else from the target's row of the key (its column of the same name).
//   A target without such a column, or one that keeps the sign (a staging table, which holds no
//   earlier rows), is INVALID_ARGUMENT saying to set REPLICA IDENTITY FULL.
// - Values convert as their columns' TypeMapping says (change/change_value.h); a value that does
// not convert fails the run (the task).
// - `seen` (optional): a table of the target's key columns into which the keys of the rows
//   written are inserted too (a snapshot's: see SnapshotSync in change_batch.h).
// - The run's rows are staged in memory and read through __millrace_cdc_run (staged_run.h:
//   RegisterStagedRuns must have run on the connection's database); temporary tables (and a
//   view) named __millrace_cdc_* are created and dropped on the connection.
// - Thread-safety: one run at a time per connection.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/source_table.h"
#include "change/change_value.h"
#include "common/result.h"
#include "engine/database.h"
#include "job/sink.h"
#include "table/table_def.h"

namespace millrace::cdc {

inline constexpr std::string_view kSourceName = "__millrace_cdc_source";

struct Change {
  enum class Kind { kUpsert, kDelete, kTruncate };
  Kind kind = Kind::kUpsert;
  change::Tuple row;      // upsert: the new row; delete: the old key (other columns NULL)
  change::Tuple old_row;  // the whole old row, when the source sent it; else empty
  size_t table = 0;       // which of a source's tables it belongs to (ChangeApply ignores it)
  uint32_t shape = 0;     // which description of that table it was written with (likewise)
};

struct ApplyTarget {
  std::string table;                 // the target as the INSERT names it
  std::vector<std::string> columns;  // the target columns the SELECT's columns fill, in order
  table::TableDef def;               // the target's definition (UNIQUE)
  std::string select_sql;            // reads kSourceName
  std::string unfiltered_sql;        // select_sql without its WHERE; "" when it has none
};

// Checks on `conn` (a scratch connection: it leaves a temporary table there) that the job's
// SELECT (target->select_sql) binds over `source`'s columns and fills the target's columns,
// and sets target->unfiltered_sql. Errors name the SELECT and the source table.
Status CheckSelect(engine::Connection& conn, const SourceTable& source, ApplyTarget* target);

class ChangeApply {
 public:
  ChangeApply(const SourceTable* source, const ApplyTarget* target, std::string seen = "")
      : source_(source), target_(target), seen_(std::move(seen)) {}

  // Returns the number of changes applied.
  Result<int64_t> Apply(job::SinkTransaction& txn, const std::vector<Change>& changes) const;

 private:
  Status ApplyRun(engine::Connection& conn, const std::vector<Change>& changes, size_t begin,
                  size_t end) const;
  static Status DropStaging(engine::Connection& conn);
  const SourceTable* source_;  // not owned
  const ApplyTarget* target_;  // not owned
  const std::string seen_;     // "" : none
};

}  // namespace millrace::cdc
