// PlanBuilder: checks a job's INSERT ... SELECT and builds what runs it — the statement
// analyzed, the source opened. (Properties are parsed by JobProperties::Parse; the source reads
// them from the job's record at each poll.)
//
// Contract
// - Build fails with an error naming the problem: a statement without exactly one S3()/local()
// call, bad reader parameters, a source that cannot be
//   opened, a target table that does not exist in `database` (a typo fails the statement, not
//   the first task).
// - Thread-safety: Build may be called concurrently (each call uses a connection of its own).
#pragma once

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/fail_point.h"
#include "engine/database.h"
#include "job/catalog_store.h"
#include "job/job_properties.h"
#include "job/job_registry.h"
#include "load/file_table_function.h"

namespace millrace::job {

struct PlanBuilderConfig {
  engine::Database* db = nullptr;   // not owned
  Clock* clock = nullptr;           // not owned
  CatalogStore* catalog = nullptr;  // not owned
  load::SourceFactory make_source;
  const FailPoints* fail_points = nullptr;  // may be null
  std::string work_root;
  int download_parallelism = 8;
};

class PlanBuilder {
 public:
  explicit PlanBuilder(PlanBuilderConfig config) : config_(std::move(config)) {}
  Result<std::shared_ptr<const JobPlan>> Build(const std::string& insert_sql,
                                               const std::string& database) const;

 private:
  const PlanBuilderConfig config_;
};

}  // namespace millrace::job
