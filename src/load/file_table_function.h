// S3(...) and local(...): the Doris file table functions, as expanders for the SQL layer.
//
// Contract
// - Expand validates the arguments (see file_params.h), lists every file matching the pattern,
//   fetches them into a work directory and returns a parenthesized SELECT over DuckDB's
//   readers, plus the work directory as the statement's resources.
// - No matching file is NOT_FOUND naming the pattern. Listing, download and format errors name
//   the file. More than `max_files` matches is RESOURCE_EXHAUSTED (a streaming job is the tool
//   for unbounded sets).
// - The expansion's stand-in (sql::Expansion::stand_in) has the reader's columns and reads
//   nothing, so the statement can be checked without reading a file.
// - Thread-safety: Expand may be called concurrently; each call uses its own connection to sniff.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "engine/database.h"
#include "load/batch.h"
#include "load/file_params.h"
#include "source/file_source.h"
#include "sql/doris_table_functions.h"

namespace millrace::load {

using SourceFactory =
    std::function<Result<std::unique_ptr<source::FileSource>>(const FileFunctionOptions&)>;

// The production factory: S3 or local by the pattern's scheme (source::MakeSource), with the
// function's S3 settings; local sources read only under `local_roots` (canonical; empty:
// anywhere). With a `watcher` (jobs' sources), local sources watch their directories
// (source::SourceOptions::watcher); it must outlive them.
SourceFactory DefaultSourceFactory(Clock* clock, std::chrono::milliseconds settle_time,
                                   std::vector<std::string> local_roots = {},
                                   source::LocalWatcher* watcher = nullptr);

struct FileTableFunctionConfig {
  engine::Database* db = nullptr;  // not owned; used to sniff file shapes
  std::string work_root;           // where work directories are created
  SourceFactory make_source;
  int download_parallelism = 4;
  size_t max_files = 10'000;
};

// Registers S3 and local with `registry`.
void RegisterFileTableFunctions(sql::TableFunctionRegistry* registry,
                                const FileTableFunctionConfig& config);

class FileTableFunction final : public sql::TableFunctionExpander {
 public:
  // `work_dirs`: under config.work_root, shared by S3() and local().
  FileTableFunction(SourceKind kind, FileTableFunctionConfig config,
                    std::shared_ptr<WorkDirs> work_dirs)
      : kind_(kind), config_(std::move(config)), work_dirs_(std::move(work_dirs)) {}
  Result<sql::Expansion> Expand(const sql::DorisArgs& args) override;

 private:
  SourceKind kind_;
  FileTableFunctionConfig config_;
  const std::shared_ptr<WorkDirs> work_dirs_;
};

}  // namespace millrace::load
