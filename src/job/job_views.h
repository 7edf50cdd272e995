// The monitoring views of SPEC section 4: jobs("type"="insert"), tasks("type"="insert") as
// engine table functions over a snapshot of the job service. job_files() and filtered_rows()
// are the catalog's (JobServiceConfig::views; catalog/catalog_views.h).
//
// Contract
// - Columns and their order are exactly Doris's (the Bind() of JobsFunction / TasksFunction in
//   the .cc).
// - "type" must be "insert"; anything else is an error naming the accepted value.
// - Secrets never appear: ExecuteSql is the masked statement; Properties hold no secrets.
#pragma once

#include <memory>
#include <vector>

#include "engine/table_function.h"
#include "job/job_access.h"
#include "job/job_model.h"
#include "job/job_registry.h"
#include "sql/doris_table_functions.h"

namespace millrace::job {

// What the views read: published snapshots, never the live state (job_registry.h).
class JobSnapshotSource {
 public:
  virtual ~JobSnapshotSource() = default;
  virtual std::vector<JobRow> SnapshotJobs() = 0;
  virtual std::vector<TaskRecord> SnapshotTasks() = 0;
};

// jobs() and tasks() show the caller only the jobs `access` lets it see (job_access.h): both
// are borrowed and must outlive the functions.
std::shared_ptr<engine::TableFunction> MakeJobsFunction(JobSnapshotSource* source,
                                                        const JobAccess* access);
std::shared_ptr<engine::TableFunction> MakeTasksFunction(JobSnapshotSource* source,
                                                         const JobAccess* access);
// job_source_access(): the ids of the jobs whose source data the caller may see
// (JobAccess::MaySeeSourceData); job_files() and filtered_rows() read it.
inline constexpr std::string_view kJobSourceAccessFunction = "job_source_access";
std::shared_ptr<engine::TableFunction> MakeJobSourceAccessFunction(JobSnapshotSource* source,
                                                                   const JobAccess* access);

}  // namespace millrace::job
