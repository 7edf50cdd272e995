// JobStatements: CREATE, ALTER (and ALTER ... RETRY), PAUSE, RESUME and DROP JOB.
//
// Contract
// - Execute runs one parsed statement and returns a one-line message for the log, or an error
//   naming the problem: unknown job, duplicate name, bad property or statement, a job in the
//   wrong state (only a PAUSED job is altered or resumed; a FINISHED or STOPPED one is not
//   paused), an ALTER that changes nothing or changes what cannot change (target table, source
//   kind, uri).
// - A statement that changes a job takes the job's lock, bumps its epoch (so a running task
//   cannot commit), interrupts the running task and waits until it has stopped, then writes the
//   job's row; PAUSE and DROP therefore return once no task of the job runs. Statements on
//   different jobs do not wait for each other.
// - Thread-safety: Execute may be called concurrently.
#pragma once

#include <chrono>
#include <string>

#include "common/clock.h"
#include "job/job_access.h"
#include "job/job_plan.h"
#include "job/job_registry.h"
#include "job/job_statement.h"
#include "job/job_store.h"
#include "job/scheduler.h"

namespace millrace::job {

struct JobStatementsConfig {
  Clock* clock = nullptr;                 // not owned
  JobStore* catalog = nullptr;            // not owned
  JobRegistry* registry = nullptr;        // not owned
  Scheduler* scheduler = nullptr;         // not owned
  const PlanBuilder* plans = nullptr;     // not owned
  const JobAccess* access = nullptr;      // not owned; null: no privilege checks
  std::chrono::seconds paused_check{60};  // TaskPolicy::paused_check
  ParamTables change_stream_params;       // for masking (MaskSecrets)
};

class JobStatements {
 public:
  explicit JobStatements(JobStatementsConfig config) : config_(config) {}

  // `database`: the client's current database, where a new job resolves unqualified names.
  // `who`: the client, who needs the privileges of job_access.h and defines a new job.
  Result<std::string> Execute(const JobStatement& statement, const std::string& database,
                              const sql::SessionInfo& who);
  // SHOW CREATE JOB name: the CREATE JOB statement that recreates the job, its secrets as
  // placeholders (PlaceholderSecrets); needs what PAUSE JOB needs.
  Result<std::string> ShowCreate(const std::string& name, const sql::SessionInfo& who);

  // Bumps the job's epoch so its running task cannot commit, interrupts the task and waits
  // until it has ended. Returns the epoch before.
  static int64_t StopTask(Job& job) REQUIRES(job.mu);

 private:
  Result<std::string> Create(const CreateJobStatement& stmt, const std::string& database,
                             const sql::SessionInfo& who);
  Result<std::string> Control(const ControlJobStatement& stmt, const sql::SessionInfo& who);
  // Control under the job's lock; a DROP hands out the dropped plan and record, whose source
  // then releases what it holds upstream without the lock.
  Result<std::string> ControlLocked(const ControlJobStatement& stmt, const sql::SessionInfo& who,
                                    std::shared_ptr<const JobPlan>* dropped, JobRecord* record);
  Result<std::string> Alter(const AlterJobStatement& stmt, const sql::SessionInfo& who);
  Result<std::string> Retry(const AlterJobStatement& stmt, const sql::SessionInfo& who);
  Status MayDefine(const sql::SessionInfo& who, const JobPlan& plan, std::string_view insert_sql,
                   const std::string& database) const {
    return config_.access == nullptr ? Status::Ok()
                                     : config_.access->MayDefine(who, plan, insert_sql, database);
  }
  Status MayControl(const sql::SessionInfo& who, const JobPlan* plan) const {
    return config_.access == nullptr ? Status::Ok() : config_.access->MayControl(who, plan);
  }
  // A statement that stopped the job's task but could not write the job's row leaves the job
  // as it was: the task has ended, so its epoch and state are restored and a RUNNING job is
  // scheduled again. Returns `cause`.
  Status Undo(Job& job, int64_t epoch, JobState state, Status cause) REQUIRES(job.mu);

  const JobStatementsConfig config_;
};

}  // namespace millrace::job
