// Who may manage a job, whose rights a job runs with, and who sees it in the views.
//
// Model (docs/security.md)
// - CREATE JOB needs LOAD_PRIV on the target table, and ADMIN_PRIV when the job reads local
//   files (local() is an administrator's, as in Doris); so does ALTER JOB, which builds the job
//   anew. PAUSE, RESUME, DROP and RETRY need LOAD_PRIV on the job's table.
// - A job runs as its definer, the user who created it: before each turn the definer must
//   still exist and hold those privileges, or the job pauses with ACCESS_DENIED_ERR naming
//   what is missing (no automatic resume: a user who may manage the job resumes it once the
//   grant is back).
// - jobs(), tasks(), job_files() and filtered_rows() show a user the jobs on tables the user
//   may read (SELECT_PRIV).
// - With no AccessControl (tests, tools) every check passes.
// - Thread-safety: the functions read AccessControl, which is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "access/access_control.h"
#include "engine/statement_plan.h"
#include "sql/router.h"

namespace millrace::job {

struct JobPlan;

struct JobAccess {
  const access::AccessControl* control = nullptr;  // not owned; null: no checks
  // The user behind a DuckDB connection (sql::Router::SessionUser), for the views; null or
  // nullopt: a connection of Millrace's own, which sees every job.
  std::function<std::optional<std::string>(uint64_t connection_id)> connection_user;

  // Checks the SELECT of a job `who` defines in `database`, with the relation named `source`
  // standing for its S3(), local() or cdc_stream() call (access::AccessGuard::CheckJobQuery);
  // empty: no check (tests, tools).
  std::function<Status(const sql::SessionInfo& who, const std::string& database,
                       std::string_view select, std::string_view source)>
      check_query;

  // CREATE JOB, ALTER JOB (which builds the job anew) and EXPLAIN CREATE JOB, for the job's
  // statement `insert_sql` resolved in `database`: LOAD_PRIV on the target, ADMIN_PRIV for
  // local files, and what the SELECT reads checked for `who` (check_query).
  Status MayDefine(const sql::SessionInfo& who, const JobPlan& plan, std::string_view insert_sql,
                   const std::string& database) const;
  // PAUSE, RESUME, DROP and RETRY: LOAD_PRIV on the job's table; ADMIN_PRIV for a job whose
  // stored definition no longer builds (`plan` null).
  Status MayControl(const sql::SessionInfo& who, const JobPlan* plan) const;
  Status DefinerMayRun(const std::string& definer, const JobPlan& plan) const;
  // Whether the caller on `connection_id` may see a job loading into `target`.
  bool MaySee(uint64_t connection_id, const engine::RelationName& target) const;
  // The same for `user` (the HTTP API's, by name).
  bool MaySeeAs(const std::string& user, const engine::RelationName& target) const;
};

}  // namespace millrace::job
