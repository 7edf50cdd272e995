#include "job/job_dry_run.h"

#include <memory>

#include "job/sink.h"

namespace millrace::job {
namespace {

// The dry run's job and task: ids no real job has (they count from 1), under which the load
// records its filtered rows in its own transaction.
constexpr int64_t kDryRunJobId = 0;
constexpr int64_t kDryRunTaskId = 0;

}  // namespace

Result<std::vector<DryRunLine>> JobDryRun::Run(const CreateJobStatement& stmt,
                                               const std::string& database,
                                               const sql::SessionInfo& who) const {
  // CREATE JOB's checks, in its order (JobStatements::Create).
  if (config_.registry->Find(stmt.name) != nullptr) {
    return Status::AlreadyExists("job " + stmt.name + " already exists");
  }
  MR_ASSIGN_OR_RETURN(JobProperties properties, JobProperties::Parse(stmt.properties));
  MR_ASSIGN_OR_RETURN(InsertAnalysis analysis, AnalyzeInsert(stmt.insert_sql));
  if (analysis.source == load::SourceKind::kCdcStream || !analysis.to_database.empty()) {
    // Refused before the plan is built: building a change stream's source opens it upstream.
    return Status::NotSupported("EXPLAIN CREATE JOB covers file jobs (S3(), local()); job " +
                                stmt.name + " reads a change stream");
  }
  MR_ASSIGN_OR_RETURN(std::shared_ptr<const JobPlan> plan,
                      config_.plans->Build(stmt.insert_sql, database, /*creating=*/true));
  if (config_.access != nullptr) {
    MR_RETURN_IF_ERROR(config_.access->MayDefine(who, *plan, stmt.insert_sql, database));
  }

  // The job as CREATE JOB records it, before its first task.
  JobRecord record;
  record.id = kDryRunJobId;
  record.name = stmt.name;
  record.database = database;
  record.properties = properties;
  record.insert_sql = stmt.insert_sql;
  record.current_offset = Offset::FileName(properties.offset);
  record.reconcile_floor = properties.offset;

  // A job writing an external table stages its rows where its own sink would.
  MR_ASSIGN_OR_RETURN(std::unique_ptr<Sink> sink, plan->own_sink != nullptr
                                                      ? plan->own_sink->MakeOne(record)
                                                      : config_.make_sink());
  DryRunContext context;
  context.db = config_.db;
  // Named so that the load's log lines are not taken for a job's.
  context.task = TaskContext{kDryRunJobId, kDryRunTaskId, stmt.name + " (EXPLAIN)", database,
                             MicrosSinceEpoch(config_.clock->WallNow())};
  context.rows_shown = kRowsShown;
  context.filtered_shown = kFilteredShown;
  return plan->source->DryRun(record, *sink, context);
}

}  // namespace millrace::job
