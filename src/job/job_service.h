// JobService: the streaming-job engine (SPEC sections 3, 4) — a small facade that builds the job
// layer's parts and runs its workers.
//
// The parts, one concern each (their headers hold their contracts):
// - job_statements.h: CREATE/ALTER/PAUSE/RESUME/DROP JOB and ALTER JOB ... RETRY.
// - job_dry_run.h: EXPLAIN CREATE JOB, a new job's first task up to its commit, rolled back.
// - job_registry.h: the live jobs, a lock per job, published snapshots for the views.
// - scheduler.h: due times; which job a free worker takes; the auto-resume delay.
// - task_runner.h: a job's turn — tasks, retries, the pause after the last retry.
// - job_source.h: where a job's data comes from, behind one offset interface; file jobs
//   (src/files/) and change streams (src/cdc/) are built through the factories the service
//   is given.
// - sink.h and commit_gate.h: rows, offset, ledger and task record in one transaction, with
//   the job's epoch checked inside it.
// - job_store.h: jobs, task history and ledgers. The service is given a store and a sink
//   factory (JobServiceConfig); the server wires the embedded DuckDB ones (src/catalog/).
//
// Contract
// - Start() takes an open store (its schema created or migrated), loads every job in the state it
// was
//   left in (a task cut off by a crash left nothing behind: its transaction never committed)
//   and starts `workers` workers. Jobs that were RUNNING carry on; a job whose stored
//   definition no longer works (its source or target is gone) stays PAUSED with
//   CANNOT_RESUME_ERR and the reason.
// - Execute() runs one job statement and returns a one-line message for the log (the client is
//   answered OK), or an error that names the problem.
// - At most one task per job at a time, up to `workers` jobs in parallel. Exactly once: see
//   commit_gate.h. Crash windows, each a fail point (config.fail_points, MILLRACE_FAIL_POINTS,
//   scoped by job name) covered by tests/job/job_crash_test.cc: "task.after_download",
//   "task.before_commit", "task.after_commit".
// - VerifyJob never waits for a running task and writes nothing (job_verify.h).
// - ExplainCreateJob creates nothing: the dry run's load is rolled back (job_dry_run.h).
// - Views: jobs(type := 'insert') and tasks(type := 'insert') read the registry's snapshots
//   and never wait for a running task or commit; job_files(job := 'name') and
//   filtered_rows(job := 'name') read the catalog.
// - The destructor stops the workers; running tasks are cancelled (nothing is half-committed).
// - Thread-safety: all public methods may be called concurrently.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/fail_point.h"
#include "common/metrics.h"
#include "common/result.h"
#include "engine/database.h"
#include "job/job_access.h"
#include "job/job_api.h"
#include "job/job_dry_run.h"
#include "job/job_metrics.h"
#include "job/job_plan.h"
#include "job/job_statement.h"
#include "job/job_store.h"
#include "job/job_verify.h"
#include "job/sink.h"
#include "job/task_policy.h"
#include "load/file_table_function.h"
#include "sql/doris_table_functions.h"

namespace millrace::job {

struct JobServiceConfig {
  engine::Database* db = nullptr;  // not owned
  // Where jobs, tasks and ledgers are kept (not owned; open); and the sinks the workers and dry
  // runs commit through. The server wires catalog::DuckDbCatalog's job store and
  // catalog::DuckDbSink.
  JobStore* store = nullptr;
  SinkFactory make_sink;
  // The store's views that clients read in SQL (job_files(), filtered_rows()), by name: the
  // server wires catalog::CatalogViews(); RegisterViews registers them.
  std::vector<std::pair<std::string, std::shared_ptr<sql::TableFunctionExpander>>> views;
  // True: job_files() and filtered_rows() read the store's pages instead (ledger_views.h), for
  // a catalog whose tables are not in the embedded database (cluster mode); `views` is empty.
  bool ledger_views_from_store = false;
  // True (cluster mode): a job's turns run only while this server holds its lease, between
  // Adopt and Relinquish (pgcatalog/lease_keeper.h decides); the other jobs are only shown.
  bool leased = false;
  Clock* clock = nullptr;  // not owned
  std::string work_root;   // downloads go to work directories under it
  // Where a fault of this process is recorded for the next one (common/fault_record.h): read
  // and removed by Start, which then installs the recorder. "" for none (a crash then counts as
  // a kill: files/crash_suspects.h).
  std::string fault_record;
  load::SourceFactory make_source;
  FileSourceFactory make_file_source;      // S3()/local() jobs (src/files/); empty: refused
  ChangeSourceFactory make_change_source;  // cdc_stream(...) jobs; empty: refused
  // Tables of external catalogs as targets (the PostgreSQL sink); empty: none.
  ExternalTargetFactory make_external_target;
  // Non-empty: jobs may only write tables of external catalogs, and this says why (cluster
  // mode: PlanBuilderConfig::embedded_targets_refused).
  std::string embedded_targets_refused;
  // Their calls' parameter tables, whose secrets are masked (cdc::ChangeStreamParamTables).
  ParamTables change_stream_params;
  const FailPoints* fail_points = nullptr;  // may be null
  int workers = 2;
  // Most downloads of a task at once (small files; large ones go one at a time, see
  // load::FetchOptions::max_bytes_in_flight).
  int download_parallelism = 8;
  TaskPolicy tasks;  // retries, task history, automatic resumes
  JobAccess access;  // privileges (job_access.h); default: no checks
};

class JobService {
 public:
  static Result<std::unique_ptr<JobService>> Start(JobServiceConfig config);
  ~JobService();

  // `database` is the client's current database (DuckDB schema; "" for the default): a job
  // created there resolves the unqualified names of its INSERT in it. `who` is the client
  // (job_access.h): the definer of a job it creates.
  Result<std::string> Execute(std::string_view statement, const std::string& database = "",
                              const sql::SessionInfo& who = {});
  // The same for a statement already parsed (the console's PAUSE, RESUME and RETRY).
  Result<std::string> Execute(const JobStatement& statement, const std::string& database,
                              const sql::SessionInfo& who);

  // Wakes the jobs whose source wants news of `path` (JobSource::WantsEvent): each is due now
  // (Scheduler::Wake). Returns how many. Any thread.
  int Wake(const std::string& path, bool directory);
  // For objects an S3 event notification reports ("s3://bucket/key"): wakes the jobs whose
  // s3.event_secret is `secret` (compared in constant time) and whose source covers each.
  // `authenticated` is false, and nothing woken, when no job has that secret.
  struct ObjectWakeups {
    bool authenticated = false;
    int matched = 0;    // objects that woke a job
    int unmatched = 0;  // objects no job of the secret reads
  };
  ObjectWakeups WakeForObjects(const std::vector<std::string>& locations, std::string_view secret);

  // Cluster mode (JobServiceConfig::leased).
  // Adopt: this server now holds the job's lease, taken at `lease_epoch`. The job's row is read
  // again (taking the lease moved its epoch), its plan built and its turns scheduled as its
  // state says; its first turn fences the earlier holder out of its sink (Sink::Fence).
  // NOT_FOUND when the store has no such job; then, or on another error, the job is not run
  // here.
  Status Adopt(int64_t job_id, int64_t lease_epoch);
  // The lease is lost or given up: the job's running tasks are stopped (their commits would be
  // refused anyway) and its turns no longer run here. Returns once none runs.
  void Relinquish(int64_t job_id);
  // Reads the store's jobs again: jobs made or dropped on other servers appear in or leave the
  // views, the jobs this server does not run are shown as stored, and one it runs whose stored
  // epoch moved past its own within its lease's block (a statement on another server: PAUSE,
  // RESUME, ALTER) is read again as Adopt does, and obeyed; one whose epoch left that block
  // (another server took the lease) is relinquished. Returns the store's job ids.
  Result<std::vector<int64_t>> Follow();

  // What the jobs API reads (job_api.h); valid while the service lives.
  JobApiContext ApiContext();

  // SHOW CREATE JOB: the statement that recreates job `name`, secrets as placeholders
  // (JobStatements::ShowCreate).
  Result<std::string> ShowCreateJob(const std::string& name, const sql::SessionInfo& who = {});
  // A job's INSERT with its call's secrets masked (MaskSecrets), for logs.
  std::string MaskSecrets(std::string_view insert_sql, const InsertAnalysis& analysis) const;
  // EXPLAIN CREATE JOB: what the first task of the job `create_statement` (a CREATE JOB
  // statement) defines would do, creating nothing (JobDryRun::Run, job_dry_run.h).
  Result<std::vector<DryRunLine>> ExplainCreateJob(std::string_view create_statement,
                                                   const std::string& database = "",
                                                   const sql::SessionInfo& who = {});
  // VERIFY JOB name LIMIT examples: the job's source compared with what it recorded
  // (JobVerifier::Verify, job_verify.h).
  Result<std::vector<VerifyRow>> VerifyJob(const std::string& name, int64_t examples = 100,
                                           const sql::SessionInfo& who = {});

  // Registers jobs() and tasks() with the database, and job_files() and filtered_rows() with
  // the SQL layer.
  Status RegisterViews(sql::TableFunctionRegistry* registry);
  // Adds the jobs' metrics (job_metrics.h) to `metrics`, which must not render after this
  // service is destroyed; `prices` estimate the object-store requests' cost.
  void RegisterMetrics(MetricsRegistry* metrics, const ObjectStorePrices& prices = {});

  class Impl;

 private:
  explicit JobService(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace millrace::job
