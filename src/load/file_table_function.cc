#include "load/file_table_function.h"

#include "load/reader_sql.h"

namespace millrace::load {

SourceFactory DefaultSourceFactory(Clock* clock, std::chrono::milliseconds settle_time,
                                   std::vector<std::string> local_roots,
                                   source::LocalWatcher* watcher) {
  return [clock, settle_time, local_roots = std::move(local_roots), watcher](
             const FileFunctionOptions& options) -> Result<std::unique_ptr<source::FileSource>> {
    source::SourceOptions source_options;
    source_options.clock = clock;
    source_options.settle_time = settle_time;
    source_options.s3 = options.s3;
    source_options.local_roots = local_roots;
    source_options.watcher = watcher;
    return source::MakeSource(options.pattern, source_options);
  };
}

void RegisterFileTableFunctions(sql::TableFunctionRegistry* registry,
                                const FileTableFunctionConfig& config) {
  const std::shared_ptr<WorkDirs> work_dirs = WorkDirs::Under(config.work_root);
  registry->Register("s3", std::make_shared<FileTableFunction>(SourceKind::kS3, config, work_dirs));
  registry->Register("local",
                     std::make_shared<FileTableFunction>(SourceKind::kLocal, config, work_dirs));
}

Result<sql::Expansion> FileTableFunction::Expand(const sql::DorisArgs& args) {
  MR_ASSIGN_OR_RETURN(FileFunctionOptions options, ParseFileFunctionArgs(kind_, args));
  MR_ASSIGN_OR_RETURN(std::unique_ptr<source::FileSource> source, config_.make_source(options));

  std::vector<source::FileInfo> files;
  source::ListOptions list;
  list.max_files = config_.max_files + 1;
  list.max_bytes = UINT64_MAX;
  while (true) {
    MR_ASSIGN_OR_RETURN(source::Listing listing, source->List(list));
    for (auto& file : listing.files)
      files.push_back(std::move(file));
    if (!listing.more || listing.files.empty() || files.size() > config_.max_files) break;
    list.start_after = files.back().key;
  }
  if (files.empty()) return Status::NotFound("no file matches " + source->Describe());
  if (files.size() > config_.max_files) {
    return Status::ResourceExhausted(source->Describe() + " matches more than " +
                                     std::to_string(config_.max_files) +
                                     " files; narrow the pattern or load it with a streaming job");
  }

  MR_ASSIGN_OR_RETURN(std::unique_ptr<WorkDir> work, work_dirs_->Take());
  FetchOptions fetch = FetchOptions::For(options);
  fetch.parallelism = config_.download_parallelism;
  // DuckDB may read only the work directory (engine::Database::LockDown), never a local root:
  // a local file is copied there, after the source's checks that it lies under a root.
  fetch.local_files = FetchOptions::LocalFiles::kCopy;
  MR_ASSIGN_OR_RETURN(std::vector<std::string> readable,
                      FetchFiles(*source, kind_, files, fetch, work->path()));
  MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::Connection> sniff, config_.db->Connect());
  MR_ASSIGN_OR_RETURN(std::string sql, BuildReadSql(options, readable, *sniff));
  MR_ASSIGN_OR_RETURN(std::string stand_in, sql::StandInFor(*sniff, sql));
  return sql::Expansion{std::move(sql), std::move(work), std::move(stand_in)};
}

}  // namespace millrace::load
