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

// A column of a view: the expression it reads, its name and its type.
struct ViewColumn {
  std::string expr;
  std::string name;
  std::string type;
};

// A view over catalog tables joined to the job `j`, optionally for one job: name("job" = "x").
// The guard checks a client's statement with a stand-in of the view's columns over no rows
// (Expansion::stand_in): the expansion reads the catalog's tables, which no client statement
// may name; visibility is the expansion's own filter.
class CatalogViewExpander final : public sql::TableFunctionExpander {
 public:
  CatalogViewExpander(std::string name, const std::vector<ViewColumn>& columns, std::string from)
      : name_(std::move(name)) {
    std::string select;
    std::string stand_in;
    for (const ViewColumn& c : columns) {
      select += (select.empty() ? "" : ", ") + c.expr + " AS " + c.name;
      stand_in +=
          (stand_in.empty() ? "" : ", ") + std::string("CAST(NULL AS ") + c.type + ") AS " + c.name;
    }
    select_ = "SELECT " + select + " FROM " + from;
    stand_in_ = "(SELECT " + stand_in + " WHERE false)";
  }

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
    return sql::Expansion{"(" + select_ + filter + ")", nullptr, stand_in_};
  }

 private:
  std::string name_;
  std::string select_;
  std::string stand_in_;
};

}  // namespace

std::vector<std::pair<std::string, std::shared_ptr<sql::TableFunctionExpander>>> CatalogViews() {
  const std::string jobs = JobsTable().qualified();
  // A file's error may quote its data: shown to those who may see the job's source data.
  auto files = std::make_shared<CatalogViewExpander>(
      "job_files",
      std::vector<ViewColumn>{
          {"j.name", "JobName", "VARCHAR"},
          {"f.key", "FileName", "VARCHAR"},
          {"f.etag", "ETag", "VARCHAR"},
          {"f.size", "Size", "BIGINT"},
          {"f.state", "State", "VARCHAR"},
          {"f.task_id", "TaskId", "BIGINT"},
          {"f.rows", "Rows", "BIGINT"},
          {"make_timestamp(f.load_time_us)", "LoadTime", "TIMESTAMP"},
          {"CASE WHEN nullif(f.error, '') IS NULL THEN NULL WHEN " + SourceVisible() +
               " THEN f.error ELSE " + engine::QuoteLiteral(std::string(job::kSourceDataHidden)) +
               " END",
           "Error", "VARCHAR"},
          {"nullif(f.reason, '')", "Reason", "VARCHAR"}},
      FilesTable().qualified() + " f JOIN " + jobs + " j ON j.id = f.job_id");
  // The rows' values are the source's data: only for those who may see it.
  auto filtered = std::make_shared<CatalogViewExpander>(
      "filtered_rows",
      std::vector<ViewColumn>{{"j.name", "JobName", "VARCHAR"},
                              {"r.task_id", "TaskId", "BIGINT"},
                              {"r.file", "FileName", "VARCHAR"},
                              {"r.line", "Line", "BIGINT"},
                              {"r.column_name", "ColumnName", "VARCHAR"},
                              {"r.value", "Value", "VARCHAR"},
                              {"r.reason", "Reason", "VARCHAR"},
                              {"make_timestamp(r.time_us)", "Time", "TIMESTAMP"}},
      FilteredRowsTable().qualified() + " r JOIN " + jobs + " j ON j.id = r.job_id AND " +
          SourceVisible());
  return {{"job_files", std::move(files)}, {"filtered_rows", std::move(filtered)}};
}

}  // namespace millrace::catalog
