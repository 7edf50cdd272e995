#include "job/job_plan.h"

#include <algorithm>

#include "engine/statement_plan.h"
#include "job/sink.h"
#include "table/model_catalog.h"
#include "table/model_write.h"

namespace millrace::job {
namespace {

// DuckDB's binder names the table the INSERT writes: privileges are checked on it.
Status CheckTarget(engine::Connection& conn, const InsertAnalysis& analysis, JobPlan* plan) {
  auto target = engine::PlanStatement(conn, "SELECT * FROM " + analysis.target_table);
  if (!target.ok()) return target.status().WithContext("target table " + analysis.target_table);
  if (target->scans.size() != 1) {
    return Status::InvalidArgument("target " + analysis.target_table + " is not a table");
  }
  plan->target = target->scans.front();
  return Status::Ok();
}

}  // namespace

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
    MR_RETURN_IF_ERROR(RefuseEmbeddedTarget("database " + analysis.to_database));
    MR_RETURN_IF_ERROR(UseDatabase(*conn, analysis.to_database));
    plan->target = engine::RelationName{analysis.to_database, ""};
    ChangeSourceRequest request{insert_sql, analysis,      analysis.to_database, plan->target,
                                config_.db, config_.clock, config_.fail_points,  creating};
    MR_ASSIGN_OR_RETURN(plan->source, config_.make_change_source(request));
    return std::shared_ptr<const JobPlan>(std::move(plan));
  }
  MR_RETURN_IF_ERROR(UseDatabase(*conn, database));
  std::string load_sql = insert_sql;
  InsertAnalysis load_analysis = analysis;
  std::optional<ExternalRoute> external;
  if (analysis.target_parts.size() == 3 && config_.make_external_target) {
    const bool delete_sign =
        std::any_of(analysis.columns.begin(), analysis.columns.end(),
                    [](const std::string& c) { return table::IsDeleteSign(c); });
    // A change stream's target is described at every Build, as its source is: its SELECT is
    // checked against the staging table.
    MR_ASSIGN_OR_RETURN(
        external, config_.make_external_target(ExternalTargetRequest{
                      analysis.target_parts[0], analysis.target_parts[1], analysis.target_parts[2],
                      creating || change_stream, delete_sign, change_stream}));
  }
  if (external) {
    plan->target = external->target;
    plan->own_sink = std::make_shared<JobSinkSlot>(std::move(external->make_sink));
    // The source loads into the staging table, which the sink copies from.
    load_sql = insert_sql.substr(0, analysis.target_begin) + external->staging_table +
               insert_sql.substr(analysis.target_begin + analysis.target_table.size());
    MR_ASSIGN_OR_RETURN(load_analysis, AnalyzeInsert(load_sql));
  } else {
    MR_RETURN_IF_ERROR(RefuseEmbeddedTarget("table " + analysis.target_table));
    MR_RETURN_IF_ERROR(CheckTarget(*conn, analysis, plan.get()));
  }
  if (change_stream) {
    ChangeSourceRequest request{insert_sql,          analysis,   database,
                                plan->target,        config_.db, config_.clock,
                                config_.fail_points, creating,   external ? &*external : nullptr};
    MR_ASSIGN_OR_RETURN(plan->source, config_.make_change_source(request));
    return std::shared_ptr<const JobPlan>(std::move(plan));
  }

  FileSourceRequest source;
  source.files = std::move(files);
  source.insert_sql = std::move(load_sql);
  source.analysis = std::move(load_analysis);
  source.options = std::move(options);
  source.clock = config_.clock;
  source.catalog = config_.catalog;
  source.fail_points = config_.fail_points;
  source.work_dirs = config_.work_dirs;
  source.download_parallelism = config_.download_parallelism;
  source.last_stop_was_fault = config_.last_stop_was_fault;
  MR_ASSIGN_OR_RETURN(plan->source, config_.make_file_source(std::move(source)));
  return std::shared_ptr<const JobPlan>(std::move(plan));
}

Status PlanBuilder::RefuseEmbeddedTarget(const std::string& target) const {
  if (config_.embedded_targets_refused.empty()) return Status::Ok();
  return Status::FailedPrecondition(
      "the job's target, " + target +
      ", is in the embedded database: " + config_.embedded_targets_refused);
}

Status PlanBuilder::CheckTasksAtOnce(const JobPlan& plan, int64_t tasks) const {
  if (tasks <= 1) return Status::Ok();
  const std::string property = "max_concurrent_tasks = " + std::to_string(tasks) + ": ";
  if (plan.analysis.source == load::SourceKind::kCdcStream) {
    return Status::InvalidArgument(property +
                                   "a change stream applies its changes one task at a time, in "
                                   "the order they happened upstream");
  }
  if (plan.own_sink != nullptr) {
    return Status::InvalidArgument(
        property + "a table of an external catalog (" + plan.target.catalog + "." +
        plan.target.schema + "." + plan.target.name +
        ") is written one task at a time: its sink moves the job's offset in the rows' "
        "transaction");
  }
  MR_ASSIGN_OR_RETURN(auto conn, config_.db->Connect());
  MR_ASSIGN_OR_RETURN(auto def, table::LoadModel(*conn, plan.target.schema, plan.target.name));
  if (def && def->model != table::TableModel::kDuplicate) {
    return Status::InvalidArgument(
        property + "table " + plan.target.schema + "." + plan.target.name + " is a " +
        std::string(table::ModelName(def->model)) +
        " KEY table, whose rows depend on the order of the commits (which row per key is "
        "kept, or folded first); concurrent tasks load DUPLICATE KEY tables only");
  }
  return Status::Ok();
}

}  // namespace millrace::job
