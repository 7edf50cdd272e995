#include "cdc/change_batch.h"

#include <algorithm>
#include <utility>

#include "cdc/target_schema.h"
#include "engine/internal_schema.h"
#include "job/sink.h"

namespace millrace::cdc {

ChangeBatch::ChangeBatch(job::Offset start, job::Offset end, std::string first, std::string last,
                         std::vector<Change> changes, int64_t bytes,
                         const std::vector<TableBinding>* tables, Shapes shapes, bool sync_targets,
                         bool make_targets, std::optional<SnapshotSync> snapshot)
    : SourceBatch(std::move(start), std::move(end), std::move(first), std::move(last),
                  static_cast<int64_t>(changes.size()), bytes),
      changes_(std::move(changes)),
      tables_(tables),
      shapes_(std::move(shapes)),
      sync_targets_(sync_targets),
      make_targets_(make_targets),
      snapshot_(snapshot) {}

std::string ChangeBatch::SeenTable(int64_t job_id, size_t table) {
  return std::string(engine::kInternalSchema) + ".cdc_seen_" + std::to_string(job_id) + "_" +
         std::to_string(table);
}

Status ChangeBatch::EndSnapshot(engine::Connection& conn, size_t t, const std::string& seen) const {
  const ApplyTarget& target = (*tables_)[t].target;
  std::string match;
  for (const std::string& k : target.def.keys) {
    const std::string c = engine::QuoteIdentifier(k);
    match +=
        (match.empty() ? "" : " AND ") + std::string("s.") + c + " IS NOT DISTINCT FROM t." + c;
  }
  MR_RETURN_IF_ERROR(conn.Execute("DELETE FROM " + target.table +
                                  " AS t WHERE NOT EXISTS (SELECT 1 FROM " + seen + " AS s WHERE " +
                                  match + ")"));
  return conn.Execute("DROP TABLE " + seen);
}

Result<job::LoadedBatch> ChangeBatch::Load(job::Sink& sink, const job::TaskContext& task,
                                           int attempt) {
  MR_ASSIGN_OR_RETURN(std::unique_ptr<job::SinkTransaction> txn, sink.Begin(task.database));
  engine::Connection& conn = txn->connection();
  // The sink copies the target's rows elsewhere (an external table): its staging table holds
  // only this transaction's rows, so a snapshot cannot compare keys with it.
  const bool copied_elsewhere = txn->TargetModel().has_value();
  if (make_targets_) {
    for (const TableBinding& binding : *tables_) {
      if (binding.create) MR_RETURN_IF_ERROR(EnsureTarget(conn, binding.target.def));
    }
  }
  // Tables are independent: each one's changes in their order, one table after the other.
  std::vector<std::vector<size_t>> per_table(tables_->size());
  for (size_t i = 0; i < changes_.size(); ++i)
    per_table[changes_[i].table].push_back(i);
  std::string seen;
  if (snapshot_ && copied_elsewhere) {
    // The table's first split empties the target in the transaction that writes its rows.
    if (snapshot_->first) {
      MR_RETURN_IF_ERROR(txn->EmptyTarget((*tables_)[snapshot_->table].target.table));
    }
  } else if (snapshot_) {
    seen = SeenTable(task.job_id, snapshot_->table);
    if (snapshot_->first) {
      std::string keys;
      for (const std::string& k : (*tables_)[snapshot_->table].target.def.keys)
        keys += (keys.empty() ? "" : ", ") + engine::QuoteIdentifier(k);
      MR_RETURN_IF_ERROR(conn.Execute("CREATE OR REPLACE TABLE " + seen + " AS SELECT " + keys +
                                      " FROM " + (*tables_)[snapshot_->table].target.table +
                                      " WHERE false"));
    }
  }
  int64_t applied = 0;
  for (size_t t = 0; t < per_table.size(); ++t) {
    MR_ASSIGN_OR_RETURN(
        const int64_t n,
        ApplyTable(*txn, t, per_table[t], snapshot_ && snapshot_->table == t ? seen : ""));
    applied += n;
  }
  if (!seen.empty() && snapshot_->last)
    MR_RETURN_IF_ERROR(EndSnapshot(conn, snapshot_->table, seen));
  job::LoadedBatch loaded;
  loaded.txn = std::move(txn);
  loaded.stats.scanned_rows = applied;
  loaded.stats.load_bytes = bytes();
  return loaded;
}

Result<int64_t> ChangeBatch::ApplyTable(job::SinkTransaction& txn, size_t t,
                                        const std::vector<size_t>& indices,
                                        const std::string& seen) const {
  if (indices.empty()) return 0;
  engine::Connection& conn = txn.connection();
  const TableBinding& binding = (*tables_)[t];
  auto shape_of = [&](size_t i) {
    const uint32_t shape = changes_[i].shape;
    return shape == 0 ? &binding.table : shapes_[t][shape].get();
  };
  const bool sync = sync_targets_ && std::any_of(indices.begin(), indices.end(),
                                                 [&](size_t i) { return changes_[i].shape != 0; });
  AlteredTarget altered;
  if (sync) {
    std::vector<const SourceTable*> shapes;
    for (size_t i : indices) {
      if (std::find(shapes.begin(), shapes.end(), shape_of(i)) == shapes.end())
        shapes.push_back(shape_of(i));
    }
    MR_ASSIGN_OR_RETURN(altered, AlterTarget(conn, binding.target.def, shapes));
  }
  // The batch's changes are applied as they are when they form one run (one table, one
  // shape: the common case); other runs are copied out (a retried Load needs them again).
  const bool whole = indices.size() == changes_.size() &&
                     std::all_of(indices.begin(), indices.end(), [&](size_t i) {
                       return changes_[i].shape == changes_[indices.front()].shape;
                     });
  int64_t applied = 0;
  for (size_t begin = 0, end = 0; begin < indices.size(); begin = end) {
    const uint32_t shape = changes_[indices[begin]].shape;
    std::vector<Change> copied;
    for (end = begin; end < indices.size() && changes_[indices[end]].shape == shape; ++end) {
      if (!whole) copied.push_back(changes_[indices[end]]);
    }
    const std::vector<Change>& run = whole ? changes_ : copied;
    const SourceTable* source = shape_of(indices[begin]);
    ApplyTarget target = binding.target;
    if (sync) {
      // Columns this description brings get their missing value before its first change.
      std::vector<std::string> fill;
      std::erase_if(altered.added, [&](const std::string& name) {
        if (source->Find(name) < 0) return false;
        fill.push_back(name);
        return true;
      });
      MR_RETURN_IF_ERROR(Backfill(conn, altered.def, *source, fill));
      MR_RETURN_IF_ERROR(BindByName(*source, altered.def, &target));
    }
    MR_ASSIGN_OR_RETURN(const int64_t n, ChangeApply(source, &target, seen).Apply(txn, run));
    applied += n;
  }
  return applied;
}

}  // namespace millrace::cdc
