#include "catalog/bookkeeping.h"

#include <set>
#include <string>

#include "catalog/catalog_tables.h"

namespace millrace::catalog {
namespace {

using job::FilteredRow;
using job::JobRecord;
using job::Offset;
using job::Progress;
using job::TaskRecord;

// The move of the job's row (see the contract in the header). On success the row holds `j`'s
// offsets, counters and statistics.
Result<bool> AdvanceOffset(Connection& conn, const JobRecord& j, const Offset& start,
                           int64_t epoch) {
  // What a task moves: the offsets, the task counter and statistics, the runtime message.
  static const std::set<std::string> kMoved = {
      "current_offset",       "end_offset",   "succeed_tasks", "scanned_rows",
      "load_bytes",           "file_number",  "file_size",     "filtered_rows",
      "last_success_time_us", "next_task_id", "runtime_msg"};
  const auto moved = [](const Column<JobRecord>& c) { return kMoved.count(c.name) > 0; };
  // Built once: every task's commit runs it.
  static const std::string kSql =
      JobsTable().Update(moved) +
      " WHERE id = ? AND state = 'RUNNING' AND epoch = ? AND current_offset = ?";
  MR_ASSIGN_OR_RETURN(auto stmt, Statement::Prepare(conn, kSql));
  JobsTable().WriteSome(j, stmt, moved);
  stmt.Int(j.id).Int(epoch).Str(start.ToJson());
  MR_ASSIGN_OR_RETURN(int64_t changed, stmt.Run());
  return changed == 1;
}

// Whether the stored job is RUNNING at `epoch`: read, not written, so that concurrent tasks'
// transactions never write the same row (Progress::Part::kFiles).
Result<bool> ExpectsTasks(Connection& conn, int64_t job_id, int64_t epoch) {
  MR_ASSIGN_OR_RETURN(auto stmt, Statement::Prepare(conn,
                                                    "SELECT id FROM __millrace.jobs WHERE id = ? "
                                                    "AND state = 'RUNNING' AND epoch = ?"));
  bool found = false;
  MR_RETURN_IF_ERROR(stmt.Int(job_id)
                         .Int(epoch)
                         .ForEach([&](const SqlRow&) {
                           found = true;
                           return Status::Ok();
                         })
                         .status());
  return found;
}

Status InsertTask(Connection& conn, const TaskRecord& t) {
  return TasksTable().InsertRow(conn, t);
}

Status PruneTasks(Connection& conn, int64_t job_id, int keep) {
  MR_ASSIGN_OR_RETURN(
      auto stmt,
      Statement::Prepare(conn,
                         "DELETE FROM __millrace.tasks WHERE job_id = ? AND task_id <= "
                         "(SELECT max(task_id) FROM __millrace.tasks WHERE job_id = ?) - ?"));
  return stmt.Int(job_id).Int(job_id).Int(keep).Run().status();
}

Status PruneFilteredRows(Connection& conn, int64_t job_id, int64_t keep) {
  MR_ASSIGN_OR_RETURN(
      auto stmt,
      Statement::Prepare(conn,
                         "DELETE FROM __millrace.filtered_rows WHERE job_id = ? AND task_id < "
                         "(SELECT coalesce(min(task_id), 0) FROM (SELECT task_id FROM "
                         "__millrace.filtered_rows WHERE job_id = ? ORDER BY task_id DESC "
                         "LIMIT ?) AS kept)"));
  return stmt.Int(job_id).Int(job_id).Int(keep).Run().status();
}

}  // namespace

Result<bool> WriteBookkeeping(Connection& conn, const Progress& p) {
  const bool files = p.part != Progress::Part::kJobRow;
  const bool job_row = p.part != Progress::Part::kFiles;
  MR_ASSIGN_OR_RETURN(bool expected, job_row ? AdvanceOffset(conn, p.job, p.start, p.epoch)
                                             : ExpectsTasks(conn, p.job.id, p.epoch));
  if (!expected) return false;
  if (files) {
    MR_RETURN_IF_ERROR(InsertLedger(conn, p.ledger));
    MR_RETURN_IF_ERROR(InsertTask(conn, p.task));
  }
  if (job_row) {
    MR_RETURN_IF_ERROR(PruneTasks(conn, p.job.id, p.task_history));
    if (p.filtered_rows_kept > 0) {
      MR_RETURN_IF_ERROR(PruneFilteredRows(conn, p.job.id, p.filtered_rows_kept));
    }
  }
  return true;
}

Result<std::vector<FilteredRow>> TaskFilteredRows(Connection& conn, int64_t job_id, int64_t task_id,
                                                  int64_t limit) {
  const auto& table = FilteredRowsTable();
  MR_ASSIGN_OR_RETURN(
      auto stmt,
      Statement::Prepare(conn, table.Select() + " WHERE job_id = ? AND task_id = ? ORDER BY "
                                                "file, line LIMIT ?"));
  stmt.Int(job_id).Int(task_id).Int(limit);
  return table.ReadAll(stmt);
}

}  // namespace millrace::catalog
