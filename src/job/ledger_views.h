// job_files("job" = "name") and filtered_rows("job" = "name") as engine table functions over the
// job store's pages (JobStore::LedgerPage, FilteredRowsPage), for a catalog whose tables are
// not in the embedded database (cluster mode, docs/cluster.md); the embedded catalog serves the
// same views as SQL over its tables instead (catalog/catalog_views.h).
//
// Contract
// - The columns, their order and types are the SQL views': job_files() JobName, FileName, ETag,
//   Size, State, TaskId, Rows, LoadTime, Error, Reason; filtered_rows() JobName, TaskId,
//   FileName, Line, ColumnName, Value, Reason, Time.
// - A caller sees the jobs jobs() shows it (job_access.h); a file's error only for the jobs
//   whose source data it may see (kSourceDataHidden otherwise), and filtered rows only for
//   those. "job" (optional) picks one job by name.
// - Rows stream a page of the store at a time (kPageRows), job by job in id order, each job's
//   files in key order and its filtered rows in (task, file, line) order.
// - Thread-safety: as engine::TableFunction; `source`, `access` and `store` are borrowed and
//   must outlive the functions.
#pragma once

#include <memory>

#include "engine/table_function.h"
#include "job/job_access.h"
#include "job/job_store.h"
#include "job/job_views.h"

namespace millrace::job {

inline constexpr int64_t kPageRows = 2048;

std::shared_ptr<engine::TableFunction> MakeJobFilesFunction(JobSnapshotSource* source,
                                                            const JobAccess* access,
                                                            JobStore* store);
std::shared_ptr<engine::TableFunction> MakeFilteredRowsFunction(JobSnapshotSource* source,
                                                                const JobAccess* access,
                                                                JobStore* store);

}  // namespace millrace::job
