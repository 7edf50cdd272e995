// The job catalog: jobs, their properties, task history and file ledger, kept in DuckDB tables
// (schema __millrace) in the same database file as the users' tables, so a task's rows and
// its bookkeeping commit in one transaction.
//
// Contract
// - Every function runs on the connection it is given and inside whatever transaction that
//   connection has open; none begins or commits on its own except Init.
// - AdvanceOffset is the exactly-once gate: it moves the job's offset and statistics only if the
//   job is RUNNING, still at `start_offset`, and its epoch is still `epoch`; it returns false
//   otherwise (the task must then roll back). Concurrent writers of the same job row conflict in
//   DuckDB, so at most one of them commits.
// - The stored definition holds the job's credentials, because the job needs them to run after
//   a restart; the SQL layer refuses user statements that name the __millrace schema, and views
//   show only masked text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/database.h"
#include "job/job_model.h"

namespace millrace::job::catalog {

inline constexpr const char* kSchema = "__millrace";

// Creates the schema and tables if missing.
Status Init(engine::Connection& conn);

struct StoredJob {
  JobRecord record;
  std::string insert_sql;  // the job's INSERT ... SELECT, credentials included
};

Result<std::vector<StoredJob>> LoadJobs(engine::Connection& conn);
// Newest `limit` tasks of a job, oldest first.
Result<std::vector<TaskRecord>> LoadTasks(engine::Connection& conn, int64_t job_id, int limit);
Result<int64_t> NextJobId(engine::Connection& conn);

Status InsertJob(engine::Connection& conn, const JobRecord& job, const std::string& insert_sql);
// Writes every mutable column of the job (state, epoch, offsets, counters, errors) and its
// properties; `insert_sql` replaces the stored statement when not empty.
Status SaveJob(engine::Connection& conn, const JobRecord& job, const std::string& insert_sql = "");
Status DeleteJob(engine::Connection& conn, int64_t job_id);

// See the contract above. On success the row holds `job`'s offsets, counters and statistics.
Result<bool> AdvanceOffset(engine::Connection& conn, const JobRecord& job,
                           const std::string& start_offset, int64_t epoch);

Status InsertTask(engine::Connection& conn, const TaskRecord& task);
// Keeps the newest `keep` tasks of the job.
Status PruneTasks(engine::Connection& conn, int64_t job_id, int keep);

// Keeps about the newest `keep` filtered rows of the job (whole tasks are dropped).
Status PruneFilteredRows(engine::Connection& conn, int64_t job_id, int64_t keep);

// Records files in the ledger; an existing row of the same key is replaced.
Status InsertLedger(engine::Connection& conn, const std::vector<LedgerEntry>& entries);
// The job's ledger rows in `state` ("" for all), by key.
Result<std::vector<LedgerEntry>> LedgerEntries(engine::Connection& conn, int64_t job_id,
                                               const std::string& state);
Status SetLedgerState(engine::Connection& conn, int64_t job_id, const std::string& key,
                      FileState state, const std::string& error);
}  // namespace millrace::job::catalog
