#include "job/job_plan.h"

#include "engine/statement_plan.h"
#include "job/sink.h"

namespace millrace::job {

Result<std::shared_ptr<const JobPlan>> PlanBuilder::Build(
    const std::string& insert_sql, const std::string& database, bool creating,
    std::shared_ptr<s3::RequestStats> object_store) const {
  auto plan = std::make_shared<JobPlan>();
  MR_ASSIGN_OR_RETURN(plan->analysis, AnalyzeInsert(insert_sql));
  const InsertAnalysis& analysis = plan->analysis;
  const bool change_stream = analysis.source == load::SourceKind::kCdcStream;
  if (change_stream && !config_.make_change_source) {
    return Status::NotSupported("cdc_stream(...) jobs are not enabled in this server");
  }
  if (!change_stream && !config_.make_file_source) {
    return Status::NotSupported("file jobs (S3(), local()) are not enabled in this server");
  }
  load::FileFunctionOptions options;
  std::unique_ptr<source::FileSource> files;
  if (!change_stream) {
    MR_ASSIGN_OR_RETURN(options, load::ParseFileFunctionArgs(analysis.source, analysis.args));
    options.s3.request_stats = std::move(object_store);
    MR_ASSIGN_OR_RETURN(files, config_.make_source(options));
  }

  MR_ASSIGN_OR_RETURN(auto conn, config_.db->Connect());
  if (!analysis.to_database.empty()) {
    // FROM ... TO DATABASE: the job writes tables of that database (privileges are checked
    // on the database), made by the source where missing.
    MR_RETURN_IF_ERROR(UseDatabase(*conn, analysis.to_database));
    plan->target = engine::RelationName{analysis.to_database, ""};
    ChangeSourceRequest request{insert_sql, analysis,      analysis.to_database, plan->target,
                                config_.db, config_.clock, config_.fail_points,  creating};
    MR_ASSIGN_OR_RETURN(plan->source, config_.make_change_source(request));
    return std::shared_ptr<const JobPlan>(std::move(plan));
  }
  MR_RETURN_IF_ERROR(UseDatabase(*conn, database));
  // DuckDB's binder names the table the INSERT writes: privileges are checked on it.
  auto target = engine::PlanStatement(*conn, "SELECT * FROM " + analysis.target_table);
  if (!target.ok()) return target.status().WithContext("target table " + analysis.target_table);
  if (target->scans.size() != 1) {
    return Status::InvalidArgument("target " + analysis.target_table + " is not a table");
  }
  plan->target = target->scans.front();
  if (change_stream) {
    ChangeSourceRequest request{insert_sql,          analysis,   database,
                                plan->target,        config_.db, config_.clock,
                                config_.fail_points, creating};
    MR_ASSIGN_OR_RETURN(plan->source, config_.make_change_source(request));
    return std::shared_ptr<const JobPlan>(std::move(plan));
  }

  FileSourceRequest source;
  source.files = std::move(files);
  source.insert_sql = insert_sql;
  source.analysis = analysis;
  source.options = std::move(options);
  source.clock = config_.clock;
  source.catalog = config_.catalog;
  source.fail_points = config_.fail_points;
  source.work_root = config_.work_root;
  source.download_parallelism = config_.download_parallelism;
  source.last_stop_was_fault = config_.last_stop_was_fault;
  MR_ASSIGN_OR_RETURN(plan->source, config_.make_file_source(std::move(source)));
  return std::shared_ptr<const JobPlan>(std::move(plan));
}

}  // namespace millrace::job
