// Who may manage a job, whose rights a job runs with, and who sees it in the views.
//
// Model (docs/security.md)
// - No job loads into an internal database (access/internal_databases.h), whoever defines it.
// - CREATE JOB needs LOAD_PRIV on the target table, and ADMIN_PRIV when the job reads local
//   files (local() is an administrator's, as in Doris); so does ALTER JOB, which builds the job
//   anew. PAUSE, RESUME, DROP and RETRY need LOAD_PRIV on the job's table.
// - A job runs as its definer, the user who created it: before each turn the definer must
//   still exist and hold those privileges, or the job pauses with ACCESS_DENIED_ERR naming
//   what is missing (no automatic resume: a user who may manage the job resumes it once the
//   grant is back).
// - jobs(), tasks(), job_files() and filtered_rows() show a user the jobs on tables the user
//   may read (SELECT_PRIV); what a job read from its source (filtered rows, error texts) only
//   to its definer and administrators (MaySeeSourceData).
// - A table of an external catalog (catalog.schema.table) is covered by a privilege on it, its
//   schema or its catalog (ctl.db.tbl, ctl.db.*, ctl.*.*), or at *.*; never by a grant on an
//   embedded database.
// - With no AccessControl (tests, tools) every check passes.
// - Thread-safety: the functions read AccessControl, which is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "access/access_control.h"
#include "common/fail_point.h"
#include "engine/statement_plan.h"
#include "sql/router.h"

namespace millrace::job {

struct JobRecord;
struct TaskRecord;

struct JobPlan;

struct JobAccess {
  const access::AccessControl* control = nullptr;  // not owned; null: no checks
  // Not owned; may be null. access::kGateFailPoint is checked first in MayControl (and so in
  // MayDefine), for every caller: SQL, the HTTP API and the console.
  const FailPoints* fail_points = nullptr;
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
  // Before each turn of a job: its definer still exists and holds LOAD_PRIV (ADMIN_PRIV for
  // local files), and what its SELECT reads is still checked as the definer's (check_query).
  // Reads the catalog through DuckDB: called without the job's lock. UNAVAILABLE when the
  // check cannot be made yet (the server is starting): the caller tries again.
  Status DefinerMayRun(const std::string& definer, const JobPlan& plan, std::string_view insert_sql,
                       const std::string& database) const;
  // What the job's SELECT reads, checked for `who` (check_query); OK without one.
  Status MayRead(const sql::SessionInfo& who, const JobPlan& plan, std::string_view insert_sql,
                 const std::string& database) const;
  // Whether the caller may see what a job read from its source: its filtered rows (their
  // values) and the errors of its tasks and files, which quote the source's data. Seeing the
  // job (its target) is not enough: only the job's definer, who gave it its source and its
  // credentials, and administrators may.
  bool MaySeeSourceData(uint64_t connection_id, const std::string& definer) const;
  bool MaySeeSourceDataAs(const std::string& user, const std::string& definer) const;
  // Whether the caller on `connection_id` may see a job loading into `target`.
  bool MaySee(uint64_t connection_id, const engine::RelationName& target) const;
  // The same for `user` (the HTTP API's, by name).
  bool MaySeeAs(const std::string& user, const engine::RelationName& target) const;

 private:
  // The user whose rights the views check for the caller on `connection_id`; nullopt when no
  // check applies (no AccessControl, or a connection of Millrace's own, which sees everything).
  std::optional<std::string> CheckedUser(uint64_t connection_id) const;
};

// What a job's errors become for a caller who may not see its source data (MaySeeSourceData).
inline constexpr std::string_view kSourceDataHidden =
    "hidden: it may quote the job's source; the job's definer and administrators see it";
// Replaces the job's (or task's) error texts by kSourceDataHidden; codes and counts stay.
void HideSourceData(JobRecord* job);
void HideSourceData(TaskRecord* task);

}  // namespace millrace::job
