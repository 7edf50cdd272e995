#include "job/job_api.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "common/json.h"
#include "common/strings.h"

namespace millrace::job {
namespace {

using nlohmann::json;

Status NoSuchJob(const std::string& name) {
  return Status::NotFound("job " + name + " does not exist");
}

// A parsed JSON document of ours (offsets, statistics, properties), or its text when it is
// not JSON (a runtime message).
json Embedded(const std::string& text) {
  if (text.empty()) return nullptr;
  Result<json> parsed = ParseJson(text);
  return parsed.ok() ? *parsed : json(text);
}

json JobJson(const JobRow& row) {
  const JobRecord& j = row.record;
  return json{{"id", j.id},
              {"name", j.name},
              {"definer", j.definer},
              {"status", std::string(JobStateName(j.state))},
              {"executeSql", j.masked_sql},
              {"comment", j.comment},
              {"properties", Embedded(j.properties.ToJson())},
              {"createTimeUs", j.create_time_us},
              {"currentOffset", Embedded(j.current_offset.ToJson())},
              {"endOffset", Embedded(j.end_offset.ToJson())},
              {"loadStatistic", Embedded(j.stats.ToJson())},
              {"succeedTaskCount", j.succeed_tasks},
              {"failedTaskCount", j.failed_tasks},
              {"canceledTaskCount", j.canceled_tasks},
              {"error", Embedded(j.ErrorMsgJson())},
              {"runtimeMsg", j.runtime_msg},
              {"lag", json{{"unit", std::string(row.lag_unit)},
                           {"items", row.lag_items},
                           {"bytes", row.lag_bytes}}},
              {"lastSuccessTimeUs", j.last_success_time_us}};
}

// What ApiJobs adds to a job's document from its published view: when its next turn is due, the
// tasks running now, and its recent throughput.
void AddSchedule(const JobApiContext& ctx, const Job::View& view, json* doc) {
  (*doc)["runningTasks"] = view.RunningTasks();
  std::optional<Clock::SteadyTime> due = ctx.scheduler->DueTime(view.row.record.id);
  json next;
  // A paused job keeps a turn for its paused check (job_statements.h), which loads nothing.
  if (due && view.row.record.state == JobState::kRunning) {
    next =
        std::max<double>(0, std::chrono::duration<double>(*due - ctx.clock->SteadyNow()).count());
  }
  (*doc)["nextPollInSeconds"] = std::move(next);
  json times = json::array();
  json rows = json::array();
  const size_t ended = static_cast<size_t>(std::count_if(
      view.tasks.begin(), view.tasks.end(), [](const TaskRecord& t) { return t.finish_time_us; }));
  size_t older = ended > kThroughputTasks ? ended - kThroughputTasks : 0;  // left out
  for (const TaskRecord& t : view.tasks) {
    if (t.finish_time_us == 0) continue;
    if (older > 0) {
      --older;
      continue;
    }
    times.push_back(t.finish_time_us);
    rows.push_back(t.stats.scanned_rows - t.stats.filtered_rows);
  }
  (*doc)["throughput"] = json{{"timeUs", std::move(times)}, {"rows", std::move(rows)}};
}

json TaskJson(const TaskRecord& t) {
  return json{{"taskId", t.task_id},
              {"label", t.Label()},
              {"status", std::string(TaskStateName(t.state))},
              {"errorMsg", t.error_msg},
              {"firstErrorMsg", t.first_error_msg},
              {"createTimeUs", t.create_time_us},
              {"startTimeUs", t.start_time_us},
              {"finishTimeUs", t.finish_time_us},
              {"loadStatistic", Embedded(t.stats.ToJson())},
              {"runningOffset", Embedded(t.RunningOffsetJson())}};
}

// A page read with one item more than `limit`: keeps `limit`, returns whether more follow.
template <typename T>
bool TrimToPage(std::vector<T>* items, int64_t limit) {
  if (static_cast<int64_t>(items->size()) <= limit) return false;
  items->resize(limit);
  return true;
}

json TasksJson(const Job::View& view) {
  json tasks = json::array();
  for (const TaskRecord& t : view.tasks)
    tasks.push_back(TaskJson(t));
  return tasks;
}

// The job's published view as it is, when `user` may see the job.
Result<std::shared_ptr<const Job::View>> PublishedView(const JobApiContext& ctx,
                                                       const std::string& user,
                                                       const std::string& name) {
  std::shared_ptr<Job> job = ctx.registry->Find(name);
  std::shared_ptr<const Job::View> view = job == nullptr ? nullptr : job->view();
  if (view == nullptr || !ctx.access->MaySeeAs(user, view->row.target)) return NoSuchJob(name);
  return view;
}

// The same, its source data hidden from a user who may not see it.
Result<std::shared_ptr<const Job::View>> VisibleJob(const JobApiContext& ctx,
                                                    const std::string& user,
                                                    const std::string& name) {
  MR_ASSIGN_OR_RETURN(std::shared_ptr<const Job::View> view, PublishedView(ctx, user, name));
  if (ctx.access->MaySeeSourceDataAs(user, view->row.record.definer)) return view;
  auto hidden = std::make_shared<Job::View>(*view);
  HideSourceData(&hidden->row.record);
  for (TaskRecord& task : hidden->tasks)
    HideSourceData(&task);
  return std::shared_ptr<const Job::View>(std::move(hidden));
}

}  // namespace

Result<ApiPage> ParseApiPage(const std::string& limit, const std::string& after) {
  ApiPage page;
  page.after = after;
  if (limit.empty()) return page;
  const std::optional<int64_t> parsed = ParseInt64(limit);
  if (!parsed || *parsed < 1 || *parsed > kMaxApiPage) {
    return Status::InvalidArgument("limit must be a number from 1 to " +
                                   std::to_string(kMaxApiPage) + ", not '" + limit + "'");
  }
  page.limit = *parsed;
  return page;
}

Result<std::string> ApiJobs(const JobApiContext& ctx, const std::string& user,
                            const ApiPage& page) {
  std::vector<JobRow> rows = ctx.registry->SnapshotJobs();
  std::erase_if(rows, [&](const JobRow& row) {
    return row.record.name <= page.after || !ctx.access->MaySeeAs(user, row.target);
  });
  for (JobRow& row : rows) {
    if (!ctx.access->MaySeeSourceDataAs(user, row.record.definer)) HideSourceData(&row.record);
  }
  std::sort(rows.begin(), rows.end(),
            [](const JobRow& a, const JobRow& b) { return a.record.name < b.record.name; });
  const bool more = TrimToPage(&rows, page.limit);
  json jobs = json::array();
  for (const JobRow& row : rows) {
    json doc = JobJson(row);
    std::shared_ptr<Job> job = ctx.registry->Get(row.record.id);
    std::shared_ptr<const Job::View> view = job == nullptr ? nullptr : job->view();
    if (view != nullptr) AddSchedule(ctx, *view, &doc);
    jobs.push_back(std::move(doc));
  }
  return RenderJson(json{{"jobs", jobs}, {"next", more ? json(rows.back().record.name) : json()}});
}

Status ApiJobVisible(const JobApiContext& ctx, const std::string& user, const std::string& name) {
  return PublishedView(ctx, user, name).status();
}

Result<std::string> ApiJob(const JobApiContext& ctx, const std::string& user,
                           const std::string& name) {
  MR_ASSIGN_OR_RETURN(std::shared_ptr<const Job::View> view, VisibleJob(ctx, user, name));
  json doc = JobJson(view->row);
  AddSchedule(ctx, *view, &doc);
  doc["tasks"] = TasksJson(*view);
  return RenderJson(doc);
}

Result<std::string> ApiTasks(const JobApiContext& ctx, const std::string& user,
                             const std::string& name) {
  MR_ASSIGN_OR_RETURN(std::shared_ptr<const Job::View> view, VisibleJob(ctx, user, name));
  return RenderJson(json{{"tasks", TasksJson(*view)}});
}

Result<std::string> ApiFilteredRows(const JobApiContext& ctx, const std::string& user,
                                    const std::string& name, const ApiPage& page) {
  MR_ASSIGN_OR_RETURN(std::shared_ptr<const Job::View> view, VisibleJob(ctx, user, name));
  if (!ctx.access->MaySeeSourceDataAs(user, view->row.record.definer)) {
    return Status::PermissionDenied("the filtered rows of job " + name +
                                    " hold its source's data: its definer and administrators "
                                    "see them");
  }
  FilteredRow after;
  after.task_id = -1;  // from the first
  if (!page.after.empty()) {
    // <taskId>/<line>/<file>: the file last, since it holds slashes.
    const size_t first = page.after.find('/');
    const size_t second = first == std::string::npos ? first : page.after.find('/', first + 1);
    const std::string_view text = page.after;
    const std::optional<int64_t> task =
        second == std::string::npos ? std::nullopt : ParseInt64(text.substr(0, first));
    const std::optional<int64_t> line =
        second == std::string::npos ? std::nullopt
                                    : ParseInt64(text.substr(first + 1, second - first - 1));
    if (!task || !line) {
      return Status::InvalidArgument(
          "after must be <taskId>/<line>/<file>, as a page's next, "
          "not '" +
          page.after + "'");
    }
    after.task_id = *task;
    after.line = *line;
    after.file = page.after.substr(second + 1);
  }
  MR_ASSIGN_OR_RETURN(std::vector<FilteredRow> rows,
                      ctx.catalog->FilteredRowsPage(view->row.record.id, after, page.limit + 1));
  const bool more = TrimToPage(&rows, page.limit);
  json out = json::array();
  for (const FilteredRow& r : rows) {
    out.push_back(json{{"taskId", r.task_id},
                       {"file", r.file},
                       {"line", r.line},
                       {"column", r.column_name},
                       {"value", r.value},
                       {"reason", r.reason},
                       {"timeUs", r.time_us}});
  }
  json next;
  if (more) {
    next = std::to_string(rows.back().task_id) + "/" + std::to_string(rows.back().line) + "/" +
           rows.back().file;
  }
  return RenderJson(json{{"rows", std::move(out)}, {"next", std::move(next)}});
}

Result<std::string> ApiFiles(const JobApiContext& ctx, const std::string& user,
                             const std::string& name, const ApiPage& page, const std::string& state,
                             const std::string& search) {
  MR_ASSIGN_OR_RETURN(std::shared_ptr<const Job::View> view, VisibleJob(ctx, user, name));
  std::optional<FileState> wanted;
  if (!state.empty()) {
    Result<FileState> parsed = ParseFileState(state);
    if (!parsed.ok()) {
      return Status::InvalidArgument(
          "state must be LOADED, SKIPPED, QUARANTINED or RETRYING, "
          "not '" +
          state + "'");
    }
    wanted = *parsed;
  }
  // One more than the page: whether another page follows.
  MR_ASSIGN_OR_RETURN(
      std::vector<LedgerEntry> entries,
      ctx.catalog->LedgerPage(view->row.record.id, page.after, page.limit + 1, wanted, search));
  const bool more = TrimToPage(&entries, page.limit);
  const bool source_visible = ctx.access->MaySeeSourceDataAs(user, view->row.record.definer);
  json files = json::array();
  for (LedgerEntry& e : entries) {
    if (!source_visible && !e.error.empty()) e.error = std::string(kSourceDataHidden);
    files.push_back(json{{"key", e.key},
                         {"etag", e.etag},
                         {"size", e.size},
                         {"state", std::string(FileStateName(e.state))},
                         {"taskId", e.task_id},
                         {"rows", e.rows},
                         {"loadTimeUs", e.load_time_us},
                         {"error", e.error.empty() ? json() : json(e.error)},
                         {"reason", e.reason.empty() ? json() : json(e.reason)}});
  }
  return RenderJson(json{{"files", files}, {"next", more ? json(entries.back().key) : json()}});
}

}  // namespace millrace::job
