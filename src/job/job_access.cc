#include "job/job_access.h"

#include "access/internal_databases.h"
#include "common/strings.h"
#include "job/job_registry.h"
#include "sql/mysql_errors.h"

namespace millrace::job {
namespace {

using access::Privilege;

bool ReadsLocalFiles(const JobPlan& plan) {
  return plan.analysis.source == load::SourceKind::kLocal;
}

// A privilege on a job's target (a table of an external catalog: ctl.db.tbl as Doris names it).
bool HasOnTarget(const access::AccessControl& control, const std::string& user, Privilege privilege,
                 const engine::RelationName& target) {
  return control.HasIn(user, privilege, target.catalog, target.schema, target.name);
}

// "schema" or "catalog.schema", as an access error names the target's database.
std::string TargetDatabase(const engine::RelationName& target) {
  return target.catalog.empty() ? target.schema : target.catalog + "." + target.schema;
}

}  // namespace

Status JobAccess::MayDefine(const sql::SessionInfo& who, const JobPlan& plan,
                            std::string_view insert_sql, const std::string& database) const {
  // The job catalog and the views of metadata are the server's, whoever defines the job.
  if (plan.target.catalog.empty() && access::IsInternalDatabase(plan.target.schema)) {
    return sql::DatabaseAccessDeniedError(plan.target.schema);
  }
  MR_RETURN_IF_ERROR(MayControl(who, &plan));
  if (control != nullptr && ReadsLocalFiles(plan) && !control->IsAdmin(who.user)) {
    return sql::SpecificAccessDeniedError(access::PrivilegeName(Privilege::kAdmin));
  }
  return MayRead(who, plan, insert_sql, database);
}

Status JobAccess::MayRead(const sql::SessionInfo& who, const JobPlan& plan,
                          std::string_view insert_sql, const std::string& database) const {
  const InsertAnalysis& a = plan.analysis;
  // FROM ... TO DATABASE has no SELECT of the user's.
  if (!check_query || !a.to_database.empty()) return Status::Ok();
  // The call's stand-in: a name the statement does not hold, so that no relation of the
  // user's text is taken for the source.
  const std::string lower = ToLower(insert_sql);
  std::string source = "job_source";
  while (lower.find(source) != std::string::npos)
    source += "_";
  const std::string select =
      std::string(insert_sql.substr(a.select_begin, a.call_begin - a.select_begin)) + source +
      std::string(insert_sql.substr(a.call_end));
  return check_query(who, database, select, source);
}

Status JobAccess::MayControl(const sql::SessionInfo& who, const JobPlan* plan) const {
  if (fail_points != nullptr) {
    MR_RETURN_IF_ERROR(fail_points->Check(access::kGateFailPoint, who.user));
  }
  if (control == nullptr) return Status::Ok();
  if (plan == nullptr) {
    if (control->IsAdmin(who.user)) return Status::Ok();
    return sql::SpecificAccessDeniedError(access::PrivilegeName(Privilege::kAdmin));
  }
  const engine::RelationName& target = plan->target;
  if (HasOnTarget(*control, who.user, Privilege::kLoad, target)) return Status::Ok();
  return sql::TableAccessDeniedError(access::PrivilegeName(Privilege::kLoad), who.user, who.host,
                                     TargetDatabase(target), target.name);
}

Status JobAccess::DefinerMayRun(const std::string& definer, const JobPlan& plan,
                                std::string_view insert_sql, const std::string& database) const {
  if (control == nullptr) return Status::Ok();
  const engine::RelationName& target = plan.target;
  std::string missing;
  if (!control->UserExists(definer)) {
    return Status::PermissionDenied("the job's definer '" + definer +
                                    "' no longer exists; recreate the job as another user");
  }
  if (!HasOnTarget(*control, definer, Privilege::kLoad, target)) {
    missing = "LOAD_PRIV on " + TargetDatabase(target) + "." + target.name;
  } else if (ReadsLocalFiles(plan) && !control->IsAdmin(definer)) {
    missing = "ADMIN_PRIV, which reading local files needs";
  }
  if (missing.empty()) {
    const Status reads =
        MayRead(sql::SessionInfo{.user = definer, .host = "%"}, plan, insert_sql, database);
    // Undecided (the server is still starting): not a denial.
    if (reads.ok() || reads.code() == StatusCode::kUnavailable) return reads;
    return Status::PermissionDenied("the job's definer '" + definer +
                                    "' may no longer run its SELECT (" + reads.message() +
                                    "); grant it again and RESUME the job");
  }
  return Status::PermissionDenied("the job's definer '" + definer + "' no longer holds " + missing +
                                  "; grant it again and RESUME the job");
}

std::optional<std::string> JobAccess::CheckedUser(uint64_t connection_id) const {
  if (control == nullptr || !connection_user) return std::nullopt;
  return connection_user(connection_id);
}

bool JobAccess::MaySeeSourceData(uint64_t connection_id, const std::string& definer) const {
  const std::optional<std::string> user = CheckedUser(connection_id);
  return !user || MaySeeSourceDataAs(*user, definer);
}

bool JobAccess::MaySeeSourceDataAs(const std::string& user, const std::string& definer) const {
  if (control == nullptr) return true;
  return user == definer || control->IsAdmin(user);
}

void HideSourceData(JobRecord* job) {
  if (!job->error_msg.empty()) job->error_msg = std::string(kSourceDataHidden);
}

void HideSourceData(TaskRecord* task) {
  if (!task->error_msg.empty()) task->error_msg = std::string(kSourceDataHidden);
  if (!task->first_error_msg.empty()) task->first_error_msg = std::string(kSourceDataHidden);
}

bool JobAccess::MaySee(uint64_t connection_id, const engine::RelationName& target) const {
  const std::optional<std::string> user = CheckedUser(connection_id);
  return !user || MaySeeAs(*user, target);
}

bool JobAccess::MaySeeAs(const std::string& user, const engine::RelationName& target) const {
  if (control == nullptr) return true;
  return HasOnTarget(*control, user, Privilege::kSelect, target);
}

}  // namespace millrace::job
