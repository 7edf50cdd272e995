// A task's bookkeeping in the catalog's tables (catalog_tables.h), in the caller's open
// transaction, on either engine (sql_db.h): what a sink's WriteProgress writes (job/sink.h)
// beside the batch's rows. The DuckDB sink runs it in the task's own transaction
// (duckdb_sink.h); a catalog in PostgreSQL runs it in a transaction of that database.
//
// Contract
// - WriteBookkeeping is the exactly-once gate. Progress::Part::kAll and kJobRow move the job's
//   row (offsets, task counter, statistics, runtime message) only if it is RUNNING, still at
//   `start` and its epoch is still `epoch`; kFiles only checks that the job is RUNNING at
//   `epoch` and writes nothing of its row. False, having written nothing, when the check fails
//   (the caller must roll back). Then kAll and kFiles record the ledger and the task record,
//   and kAll and kJobRow prune the job's task records to `task_history` and, when
//   `filtered_rows_kept` > 0, its filtered rows to about that many.
// - TaskFilteredRows: a task's filtered rows in file and line order, at most `limit`.
#pragma once

#include <cstdint>
#include <vector>

#include "catalog/catalog_sql.h"
#include "common/result.h"
#include "job/job_model.h"
#include "job/sink.h"

namespace millrace::catalog {

Result<bool> WriteBookkeeping(Connection& conn, const job::Progress& progress);

Result<std::vector<job::FilteredRow>> TaskFilteredRows(Connection& conn, int64_t job_id,
                                                       int64_t task_id, int64_t limit);

}  // namespace millrace::catalog
