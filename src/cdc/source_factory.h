// The factory of change-stream job sources (job::ChangeSourceFactory), and what each source's
// factory shares: binding source tables to their targets.
//
// Contract
// - MakeChangeSource builds the source the arguments' "type" names (postgres or mysql), after
//   checking everything a running job would trip on, each with a clear error (see
//   pg_source_factory.h and MakeMysqlChangeSource). It creates nothing upstream.
// - BindStreamTable binds cdc_stream's one table: the INSERT's target must be a UNIQUE KEY
//   table, and the job's SELECT (one that only projects, renames, casts and filters its source)
//   must bind against the source's columns and fill the target.
// - BindDatabaseTables binds FROM ... TO DATABASE's tables, each into the table of its name in
//   the target database: an existing one must be UNIQUE KEY and, at CREATE JOB, have exactly
//   the source's columns; a missing one is made by the job's first batch (TargetDef).
// - Thread-safety: may be called concurrently.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/change_batch.h"
#include "common/result.h"
#include "job/job_plan.h"

namespace millrace::cdc {

Result<std::shared_ptr<job::JobSource>> MakeChangeSource(const job::ChangeSourceRequest& request);

Result<TableBinding> BindStreamTable(const job::ChangeSourceRequest& request, SourceTable table);

using DescribeSourceTable = std::function<Result<SourceTable>(const std::string& name)>;
// `form` ("FROM POSTGRES") names the clause in errors.
Result<std::vector<TableBinding>> BindDatabaseTables(const job::ChangeSourceRequest& request,
                                                     std::string_view form,
                                                     const std::vector<std::string>& names,
                                                     const DescribeSourceTable& describe);

// The tables of a FROM clause: `include` (or, when empty, `all`) less `exclude`;
// INVALID_ARGUMENT naming `where` when none is left.
// The tables a source follows, bound: for FROM ... TO DATABASE (`form`, the request's
// to_database set) every table `list` returns, by BindDatabaseTables; for cdc_stream(...) the
// one `stream_table`, by BindStreamTable. Each is described by `describe`.
Result<std::vector<TableBinding>> BindSourceTables(
    const job::ChangeSourceRequest& request, std::string_view form,
    const std::function<Result<std::vector<std::string>>()>& list, const std::string& stream_table,
    const DescribeSourceTable& describe);

Result<std::vector<std::string>> ChooseTables(std::vector<std::string> include,
                                              std::vector<std::string> all,
                                              const std::vector<std::string>& exclude,
                                              std::string_view form, std::string_view where);

}  // namespace millrace::cdc
