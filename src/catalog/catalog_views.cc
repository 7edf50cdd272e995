#include "catalog/catalog_views.h"

#include "catalog/catalog_tables.h"
#include "engine/database.h"
#include "job/job_access.h"
#include "job/job_views.h"

namespace millrace::catalog {
namespace {

// The condition "job j's source data is visible to the caller", in the views' SQL.
std::string SourceVisible() {
  return "j.id IN (SELECT Id FROM " + std::string(job::kJobSourceAccessFunction) + "())";
}

// A view over catalog tables joined to the job `j`, optionally for one job: name("job" = "x").
class CatalogViewExpander final : public sql::TableFunctionExpander {
 public:
  CatalogViewExpander(std::string name, std::string select)
      : name_(std::move(name)), select_(std::move(select)) {}

  Result<sql::Expansion> Expand(const sql::DorisArgs& args) override {
    for (const auto& [key, value] : args) {
      if (key != "job") {
        return Status::InvalidArgument(name_ + "(): unknown parameter \"" + key +
                                       "\"; supported: job");
      }
    }
    // Visibility follows jobs(), which shows the caller only the jobs it may see.
    std::string filter = " WHERE j.id IN (SELECT Id FROM jobs(type := 'insert'))";
    auto job = args.find("job");
    if (job != args.end()) filter += " AND j.name = " + engine::QuoteLiteral(job->second);
    return sql::Expansion{"(" + select_ + filter + ")", nullptr, ""};
  }

 private:
  std::string name_;
  std::string select_;
};

}  // namespace

std::vector<std::pair<std::string, std::shared_ptr<sql::TableFunctionExpander>>> CatalogViews() {
  const std::string jobs = JobsTable().qualified();
  // A file's error may quote its data: shown to those who may see the job's source data.
  auto files = std::make_shared<CatalogViewExpander>(
      "job_files",
      "SELECT j.name AS JobName, f.key AS FileName, f.etag AS ETag, f.size AS Size, "
      "f.state AS State, f.task_id AS TaskId, f.rows AS Rows, "
      "make_timestamp(f.load_time_us) AS LoadTime, CASE WHEN nullif(f.error, '') IS NULL THEN "
      "NULL WHEN " +
          SourceVisible() + " THEN f.error ELSE " +
          engine::QuoteLiteral(std::string(job::kSourceDataHidden)) +
          " END AS Error, nullif(f.reason, '') AS Reason FROM " + FilesTable().qualified() +
          " f JOIN " + jobs + " j ON j.id = f.job_id");
  // The rows' values are the source's data: only for those who may see it.
  auto filtered = std::make_shared<CatalogViewExpander>(
      "filtered_rows",
      "SELECT j.name AS JobName, r.task_id AS TaskId, r.file AS FileName, r.line AS Line, "
      "r.column_name AS ColumnName, r.value AS Value, r.reason AS Reason, "
      "make_timestamp(r.time_us) AS Time FROM " +
          FilteredRowsTable().qualified() + " r JOIN " + jobs + " j ON j.id = r.job_id AND " +
          SourceVisible());
  return {{"job_files", std::move(files)}, {"filtered_rows", std::move(filtered)}};
}

}  // namespace millrace::catalog
