// The views of the DuckDB catalog clients read in SQL: job_files("job" = "name") over the
// ledger and filtered_rows("job" = "name") over the rows jobs filtered, as Doris-style table
// functions expanded into SQL over the catalog's tables (catalog_tables.h), so that DuckDB
// filters and joins them where they lie.
//
// Contract
// - job_files(): key, etag, size, state, task, rows, load time, error and reason of every file
//   a job has seen; filtered_rows(): the rows a job filtered, with file, line, column, value
//   and reason (the newest ones; CommitGateConfig::filtered_rows_kept).
// - Both show a caller the jobs jobs() shows it (job/job_access.h); a file's error and the
//   filtered rows, which may quote the source's data, only for the jobs job_source_access()
//   lists (job::kJobSourceAccessFunction); other errors read job::kSourceDataHidden.
// - "job" is the only parameter; another is INVALID_ARGUMENT naming it.
// - Wired by the server into the job service (JobServiceConfig::views).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sql/doris_table_functions.h"

namespace millrace::catalog {

std::vector<std::pair<std::string, std::shared_ptr<sql::TableFunctionExpander>>> CatalogViews();

}  // namespace millrace::catalog
