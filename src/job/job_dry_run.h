// EXPLAIN CREATE JOB ...: what a file job's first task would do, without creating the job
// (docs/jobs.md, "EXPLAIN CREATE JOB").
//
// Contract
// - The statement is checked as CREATE JOB checks it, with the same errors, in the same order:
//   the job's name (a job of that name exists: ALREADY_EXISTS), its properties
//   (JobProperties::Parse), its body and plan (PlanBuilder::Build: the call's parameters, the
//   source, the target table), the client's privileges (JobAccess::MayDefine: what CREATE JOB
//   needs). A change stream (cdc_stream(...), FROM ... TO DATABASE) is NOT_SUPPORTED before
//   anything is built or opened: dry runs cover file jobs.
// - Then the job's first task runs up to its commit with the task's own parts
//   (JobSource::DryRun; for files FileJobSource::LoadFirstBatch: the listing after the `offset`
//   property within the batch limits, the downloads, the load rounds and their filtering) in a
//   transaction that is rolled back. Nothing stays: no job, ledger entry, offset, task record,
//   filtered row, row of the target table, or file in the work directory. The cost is the task's:
//   the first batch is downloaded and loaded (then read again for the Column and Row lines).
// - The answer is lines (Section, Item, Detail), in this order:
//     Task      batch        the batch's files and bytes, whether more files wait after it and
//                            files still being written; or "no files to load yet: ..." (then the
//                            only line: CREATE JOB would succeed and wait for files)
//     Task      outcome      what the task would do: rows loaded and filtered, files
//                            quarantined; or "would fail: CODE: message" (JobErrorName)
//     File      key          one per file of the batch, in key order: its size, and its rows or
//                            why it was quarantined
//     Column    name         the type: the reader's columns (S3()/local() over the batch's
//                            loaded files, as a fast load reads them)
//     Row       1..10        a row as the job's SELECT produces it, as a JSON object
//     Filtered  key line N   column, reason and value of a filtered row, as filtered_rows()
//                            records it; at most kFilteredShown, then a "more" line with how
//                            many more
//   A reader or SELECT that fails over the files is one line of its section, Item "error".
// - A listing that fails is an error (GET_REMOTE_DATA_ERROR), as the task's Poll would fail.
// - Thread-safety: Run may be called concurrently; each call uses a connection of its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "engine/database.h"
#include "job/job_access.h"
#include "job/job_plan.h"
#include "job/job_registry.h"
#include "job/job_source.h"
#include "job/job_statement.h"
#include "job/sink.h"

namespace millrace::job {

struct JobDryRunConfig {
  engine::Database* db = nullptr;         // not owned
  Clock* clock = nullptr;                 // not owned
  const JobRegistry* registry = nullptr;  // not owned; the names taken
  const PlanBuilder* plans = nullptr;     // not owned
  const JobAccess* access = nullptr;      // not owned; null: no privilege checks
  SinkFactory make_sink;                  // the trial load's transaction, rolled back
};

class JobDryRun {
 public:
  static constexpr int64_t kRowsShown = 10;
  static constexpr int64_t kFilteredShown = 100;

  explicit JobDryRun(JobDryRunConfig config) : config_(config) {}

  // `database` and `who` as for CREATE JOB (JobStatements::Execute).
  Result<std::vector<DryRunLine>> Run(const CreateJobStatement& statement,
                                      const std::string& database,
                                      const sql::SessionInfo& who) const;

 private:
  const JobDryRunConfig config_;
};

}  // namespace millrace::job
