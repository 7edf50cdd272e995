// JobService: the streaming-job engine — catalog, scheduler, tasks, views (SPEC sections 3, 4).
//
// Contract
// - Start() creates the catalog if needed, loads every job in the state it was left in (a task
//   cut off by a crash left nothing behind: its transaction never committed) and starts the
//   scheduler. Jobs that were RUNNING carry on.
// - Execute() runs one job statement (job_statement.h) and returns what the client is told, or
//   an error that names the problem (unknown job, duplicate name, bad property, a job that is
//   not PAUSED for ALTER, ...).
// - Scheduling: at most one task per job at a time, up to `workers` jobs in parallel. After a
//   batch that did not drain the source, the next task starts at once; a poll that finds
//   nothing waits max_interval.
// - A task lists the next batch after the job's offset, downloads it, and in ONE DuckDB
//   transaction inserts its rows, advances the offset (only if the job still expects this task
//   and this start offset), records its files in the ledger and writes the task record.
//   Everything commits or nothing does. Downloads overlap the load, and a task of small files
//   reads the next batch ahead (docs/jobs.md, "How a task runs"); a read ahead is only used by
//   the next task of the same epoch at the same offset.
// - Crash windows, each a fail point (config.fail_points, MILLRACE_FAIL_POINTS) covered by
//   tests/job/job_crash_test.cc: "task.after_download" (the batch's first file is fetched,
//   nothing inserted), "task.before_commit" (rows, offset, ledger and task record written in
//   the open transaction), "task.after_commit".
// - Failures: a failing task is retried `task_retries` times, then the job is PAUSED with
//   ErrorMsg {"code","msg"}; a paused job resumes itself after min(2^n * 10 s, 300 s), up to 10
//   times, except after a manual pause. PAUSE and DROP cancel the running task; they return
//   once it has stopped.
// - Views: jobs(type := 'insert') and tasks(type := 'insert') are engine table functions with
//   exactly the Doris columns; job_files(job := 'name') is the ledger.
// - Thread-safety: all public methods may be called concurrently.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/fail_point.h"
#include "common/result.h"
#include "engine/database.h"
#include "load/file_table_function.h"
#include "sql/doris_table_functions.h"

namespace millrace::job {

struct JobServiceConfig {
  engine::Database* db = nullptr;  // not owned
  Clock* clock = nullptr;          // not owned
  std::string work_root;           // downloads go to work directories under it
  load::SourceFactory make_source;
  const FailPoints* fail_points = nullptr;  // may be null
  int workers = 2;
  // Most downloads of a task at once (small files; large ones go one at a time, see
  // load::FetchOptions::max_bytes_in_flight).
  int download_parallelism = 8;
  int task_retries = 3;
  std::chrono::milliseconds retry_backoff{500};
  int task_history = 100;
  std::chrono::seconds auto_resume_base{10};
  std::chrono::seconds auto_resume_cap{300};
  int auto_resume_limit = 10;
};

class JobService {
 public:
  static Result<std::unique_ptr<JobService>> Start(JobServiceConfig config);
  ~JobService();  // stops the scheduler; running tasks are cancelled (nothing is half-committed)

  // Runs CREATE/PAUSE/RESUME/DROP/ALTER JOB; returns a one-line message for the client.
  // `database` is the client's current database (DuckDB schema; "" for the default): a job
  // created there resolves the unqualified names of its INSERT in it.
  Result<std::string> Execute(std::string_view statement, const std::string& database = "");

  // Registers jobs() and tasks() with the database, and job_files() with the SQL layer.
  Status RegisterViews(sql::TableFunctionRegistry* registry);

  class Impl;

 private:
  explicit JobService(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace millrace::job
