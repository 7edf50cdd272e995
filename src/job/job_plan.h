// PlanBuilder: checks a job's INSERT ... SELECT and builds what runs it — the statement
// analyzed, the source opened. (Properties are parsed by JobProperties::Parse; the source reads
// them from the job's record at each poll.)
//
// Contract
// - Build fails with an error naming the problem: a statement without exactly one S3(),
//   local() or cdc_stream() call, bad reader parameters, a source that cannot be opened, a
//   target table that does not exist in `database` (a typo fails the statement, not the first
//   task).
// - A file job whose target is catalog.schema.table of an external catalog (ExternalRoute) gets
//   the route's sink as its own (JobPlan::own_sink), and its source loads the statement with
//   the target replaced by the route's staging table. Change streams into external tables are
//   refused (not available yet).
// - An S3 source's client counts its requests into `object_store` when given (the job's
//   Job::object_store, so the counts outlive the source).
// - Thread-safety: Build may be called concurrently (each call uses a connection of its own).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/fail_point.h"
#include "engine/database.h"
#include "job/job_properties.h"
#include "job/job_registry.h"
#include "job/job_store.h"
#include "load/file_table_function.h"
#include "load/work_dir.h"
#include "table/table_def.h"

namespace millrace::job {

// A job whose INSERT names catalog.schema.table of an external catalog writes that table through
// a sink of its own (the PostgreSQL sink, wired by the server) instead of a DuckDB table.
struct ExternalTargetRequest {
  std::string catalog;
  std::string schema;
  std::string table;
  // CREATE JOB (and its dry run): the table is checked now. A restart does not wait on the
  // other database: the job's first task checks it.
  bool check_now = false;
  // The INSERT gives Doris's delete sign (its column list names it).
  bool delete_sign = false;
  // A change stream's target: it must have a primary key (changes are applied by key), and its
  // staging table keeps the delete sign (a delete travels as its key with the sign 1). Asked
  // with check_now: its SELECT is checked against the described table at every Build.
  bool change_stream = false;
};
struct ExternalRoute {
  engine::RelationName target;  // its catalog set: privileges and the views
  // The DuckDB table the job's INSERT writes instead, in its sink's transactions (where the
  // sink stages the rows it copies).
  std::string staging_table;
  // When the table was described (check_now): the table as a Doris table (its columns, its
  // model, whether its staging table keeps the delete sign), and the statement that makes the
  // staging table, empty, on a connection.
  std::optional<table::TableDef> model;
  std::string staging_ddl;
  // Makes the job's sink for its record.
  JobSinkSlot::Maker make_sink;
};
// nullopt when `catalog` names no external catalog; an error names why the target cannot be
// written (no such table, unreachable, a type that cannot be copied).
using ExternalTargetFactory =
    std::function<Result<std::optional<ExternalRoute>>(const ExternalTargetRequest&)>;

// What a change stream's source is built from: the job's statement (its cdc_stream(...) call
// analyzed) and the target as DuckDB resolves it.
struct ChangeSourceRequest {
  std::string insert_sql;
  InsertAnalysis analysis;
  std::string database;
  engine::RelationName target;
  engine::Database* db = nullptr;  // not owned
  Clock* clock = nullptr;          // not owned
  const FailPoints* fail_points = nullptr;
  // CREATE JOB (not a restart or an ALTER): checks that hold only before the job has run
  // (targets whose columns a schema change has not reached yet) are made now.
  bool creating = false;
  // The target is a table of an external catalog: changes are applied into the route's staging
  // table (ExternalRoute::staging_table, made on a connection by staging_ddl), defined by
  // ExternalRoute::model. Borrowed for the call; null for a DuckDB target.
  const ExternalRoute* external = nullptr;
};
// Builds the source of a cdc_stream(...) job, or fails naming why the job cannot run (the
// source unreachable, a bad parameter, a target of the wrong model).
using ChangeSourceFactory =
    std::function<Result<std::shared_ptr<JobSource>>(const ChangeSourceRequest&)>;

// What a file job's source (S3(), local()) is built from: the files it reads (opened by the
// load::SourceFactory), the job's statement, reader options and target, and the parts it
// loads with.
struct FileSourceRequest {
  std::shared_ptr<source::FileSource> files;
  std::string insert_sql;
  InsertAnalysis analysis;
  load::FileFunctionOptions options;
  // Not owned; must outlive the source.
  Clock* clock = nullptr;
  JobStore* catalog = nullptr;
  const FailPoints* fail_points = nullptr;    // may be null
  std::shared_ptr<load::WorkDirs> work_dirs;  // downloads go to its work directories
  int download_parallelism = 8;
  // The previous process died of a fault (files/crash_suspects.h).
  bool last_stop_was_fault = false;
};
// Builds the source of a file job: files::MakeFileJobSource (src/files/), wired by the server.
using FileSourceFactory = std::function<Result<std::shared_ptr<JobSource>>(FileSourceRequest)>;

struct PlanBuilderConfig {
  engine::Database* db = nullptr;  // not owned
  Clock* clock = nullptr;          // not owned
  JobStore* catalog = nullptr;     // not owned
  load::SourceFactory make_source;
  FileSourceFactory make_file_source;          // empty: file jobs are refused
  ChangeSourceFactory make_change_source;      // empty: change streams are refused
  ExternalTargetFactory make_external_target;  // empty: three-part targets are DuckDB's
  // Non-empty: why a job may only write tables of external catalogs (cluster mode); a job
  // whose target is the embedded database's is FAILED_PRECONDITION with it.
  std::string embedded_targets_refused;
  const FailPoints* fail_points = nullptr;  // may be null
  std::shared_ptr<load::WorkDirs> work_dirs;
  int download_parallelism = 8;
  bool last_stop_was_fault = false;  // FileSourceRequest::last_stop_was_fault
};

class PlanBuilder {
 public:
  explicit PlanBuilder(PlanBuilderConfig config) : config_(std::move(config)) {}
  // `creating`: for CREATE JOB (ChangeSourceRequest::creating).
  Result<std::shared_ptr<const JobPlan>> Build(
      const std::string& insert_sql, const std::string& database, bool creating = false,
      std::shared_ptr<s3::RequestStats> object_store = nullptr) const;
  // CREATE and ALTER JOB: whether `plan` may run `tasks` tasks at once (max_concurrent_tasks).
  // More than one is INVALID_ARGUMENT, saying why, for a change stream, a table of an external
  // catalog, and a UNIQUE or AGGREGATE KEY table: there the order of commits decides the
  // result.
  Status CheckTasksAtOnce(const JobPlan& plan, int64_t tasks) const;

 private:
  // FAILED_PRECONDITION naming `target` when the config refuses embedded targets.
  Status RefuseEmbeddedTarget(const std::string& target) const;
  const PlanBuilderConfig config_;
};

}  // namespace millrace::job
