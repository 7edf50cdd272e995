#include "job/ledger_views.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace millrace::job {
namespace {

// A job a caller reads the rows of.
struct Visible {
  int64_t id = 0;
  std::string name;
  bool source_data = false;  // the caller may see its source data
};

std::vector<Visible> VisibleJobs(JobSnapshotSource& source, const JobAccess& access,
                                 const engine::TableFunctionArgs& args, bool source_data_only) {
  const std::optional<std::string> wanted = args.Get("job");
  std::vector<Visible> jobs;
  for (const JobRow& row : source.SnapshotJobs()) {
    if (wanted && row.record.name != *wanted) continue;
    if (!access.MaySee(args.connection_id(), row.target)) continue;
    const bool data = access.MaySeeSourceData(args.connection_id(), row.record.definer);
    if (source_data_only && !data) continue;
    jobs.push_back({row.record.id, row.record.name, data});
  }
  std::sort(jobs.begin(), jobs.end(),
            [](const Visible& a, const Visible& b) { return a.id < b.id; });
  return jobs;
}

void SetTextOrNull(engine::OutputChunk& out, size_t col, size_t row, const std::string& text) {
  if (text.empty()) {
    out.SetNull(col, row);
  } else {
    out.SetString(col, row, text);
  }
}

// Streams `Row`s job by job: `page(job, after)` returns the job's next rows after the last
// one (nullptr: from its first), fewer than kPageRows at its end.
template <typename Row>
class PagedScan final : public engine::TableScan {
 public:
  using Page = std::function<Result<std::vector<Row>>(const Visible&, const Row* after)>;
  using Write = std::function<void(engine::OutputChunk&, size_t, const Visible&, const Row&)>;
  PagedScan(std::vector<Visible> jobs, Page page, Write write)
      : jobs_(std::move(jobs)), page_(std::move(page)), write_(std::move(write)) {}

  Result<size_t> Fill(engine::OutputChunk& out) override {
    size_t n = 0;
    while (n < out.capacity()) {
      if (rows_.empty()) {
        if (job_ >= jobs_.size()) break;
        if (job_done_) {
          ++job_;
          job_done_ = false;
          last_.reset();
          continue;
        }
        MR_ASSIGN_OR_RETURN(std::vector<Row> page, page_(jobs_[job_], last_ ? &*last_ : nullptr));
        job_done_ = static_cast<int64_t>(page.size()) < kPageRows;
        if (!page.empty()) last_ = page.back();
        rows_.assign(std::make_move_iterator(page.begin()), std::make_move_iterator(page.end()));
        continue;
      }
      write_(out, n++, jobs_[job_], rows_.front());
      rows_.pop_front();
    }
    return n;
  }

 private:
  const std::vector<Visible> jobs_;
  const Page page_;
  const Write write_;
  size_t job_ = 0;
  bool job_done_ = false;
  std::optional<Row> last_;
  std::deque<Row> rows_;
};

// A view of `Row`s read from the store a page at a time.
template <typename Row>
struct PagedView {
  std::string name;
  std::vector<engine::ColumnDef> columns;
  bool source_data_only = false;  // only jobs whose source data the caller may see
  std::function<Result<std::vector<Row>>(JobStore&, const Visible&, const Row* after)> page;
  typename PagedScan<Row>::Write write;
};

template <typename Row>
class PagedViewFunction final : public engine::TableFunction {
 public:
  PagedViewFunction(PagedView<Row> view, JobSnapshotSource* source, const JobAccess* access,
                    JobStore* store)
      : view_(std::move(view)), source_(source), access_(access), store_(store) {}
  std::string name() const override { return view_.name; }
  std::vector<std::string> parameter_names() const override { return {"job"}; }
  Result<std::vector<engine::ColumnDef>> Bind(const engine::TableFunctionArgs&) override {
    return view_.columns;
  }
  Result<std::unique_ptr<engine::TableScan>> Scan(const engine::TableFunctionArgs& args) override {
    auto page = [this](const Visible& job, const Row* after) {
      return view_.page(*store_, job, after);
    };
    return std::unique_ptr<engine::TableScan>(std::make_unique<PagedScan<Row>>(
        VisibleJobs(*source_, *access_, args, view_.source_data_only), page, view_.write));
  }

 private:
  const PagedView<Row> view_;
  JobSnapshotSource* const source_;
  const JobAccess* const access_;
  JobStore* const store_;
};

}  // namespace

std::shared_ptr<engine::TableFunction> MakeJobFilesFunction(JobSnapshotSource* source,
                                                            const JobAccess* access,
                                                            JobStore* store) {
  using engine::TypeId;
  PagedView<LedgerEntry> view{
      .name = "job_files",
      .columns = {{"JobName", TypeId::kVarchar},
                  {"FileName", TypeId::kVarchar},
                  {"ETag", TypeId::kVarchar},
                  {"Size", TypeId::kBigInt},
                  {"State", TypeId::kVarchar},
                  {"TaskId", TypeId::kBigInt},
                  {"Rows", TypeId::kBigInt},
                  {"LoadTime", TypeId::kTimestamp},
                  {"Error", TypeId::kVarchar},
                  {"Reason", TypeId::kVarchar}},
      .page =
          [](JobStore& store, const Visible& job, const LedgerEntry* after) {
            return store.LedgerPage(job.id, after ? after->key : "", kPageRows, std::nullopt, "");
          },
      .write =
          [](engine::OutputChunk& out, size_t r, const Visible& job, const LedgerEntry& e) {
            size_t c = 0;
            out.SetString(c++, r, job.name);
            out.SetString(c++, r, e.key);
            out.SetString(c++, r, e.etag);
            out.SetInt64(c++, r, e.size);
            out.SetString(c++, r, std::string(FileStateName(e.state)));
            out.SetInt64(c++, r, e.task_id);
            out.SetInt64(c++, r, e.rows);
            out.SetTimestamp(c++, r, e.load_time_us);
            // A file's error may quote its data.
            SetTextOrNull(
                out, c++, r,
                e.error.empty() || job.source_data ? e.error : std::string(kSourceDataHidden));
            SetTextOrNull(out, c++, r, e.reason);
          }};
  return std::make_shared<PagedViewFunction<LedgerEntry>>(std::move(view), source, access, store);
}

std::shared_ptr<engine::TableFunction> MakeFilteredRowsFunction(JobSnapshotSource* source,
                                                                const JobAccess* access,
                                                                JobStore* store) {
  using engine::TypeId;
  PagedView<FilteredRow> view{
      .name = "filtered_rows",
      .columns = {{"JobName", TypeId::kVarchar},
                  {"TaskId", TypeId::kBigInt},
                  {"FileName", TypeId::kVarchar},
                  {"Line", TypeId::kBigInt},
                  {"ColumnName", TypeId::kVarchar},
                  {"Value", TypeId::kVarchar},
                  {"Reason", TypeId::kVarchar},
                  {"Time", TypeId::kTimestamp}},
      // The rows' values are the source's data: only for those who may see it.
      .source_data_only = true,
      .page =
          [](JobStore& store, const Visible& job, const FilteredRow* after) {
            return store.FilteredRowsPage(job.id, after ? *after : FilteredRow{}, kPageRows);
          },
      .write =
          [](engine::OutputChunk& out, size_t r, const Visible& job, const FilteredRow& f) {
            size_t c = 0;
            out.SetString(c++, r, job.name);
            out.SetInt64(c++, r, f.task_id);
            out.SetString(c++, r, f.file);
            out.SetInt64(c++, r, f.line);
            out.SetString(c++, r, f.column_name);
            out.SetString(c++, r, f.value);
            out.SetString(c++, r, f.reason);
            out.SetTimestamp(c++, r, f.time_us);
          }};
  return std::make_shared<PagedViewFunction<FilteredRow>>(std::move(view), source, access, store);
}

}  // namespace millrace::job
