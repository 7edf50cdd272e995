#include "job/job_views.h"

#include <map>

#include "common/clock.h"
#include "engine/database.h"

namespace millrace::job {
namespace {

using engine::ColumnDef;
using engine::OutputChunk;
using engine::TableFunctionArgs;
using engine::TypeId;

std::string TimeText(int64_t micros) {
  if (micros == 0) return "";
  return FormatUtc(Clock::WallTime(std::chrono::microseconds(micros)));
}

Status CheckType(const TableFunctionArgs& args, const std::string& fn) {
  auto type = args.Get("type");
  if (!type || (*type != "insert" && *type != "INSERT")) {
    return Status::InvalidArgument(fn + "() needs \"type\" = \"insert\"" +
                                   (type ? ", got '" + *type + "'" : std::string()));
  }
  return Status::Ok();
}

// Sets a VARCHAR cell, NULL when empty (Doris shows \N for absent values).
void SetText(OutputChunk& out, size_t col, size_t row, const std::string& text) {
  if (text.empty()) {
    out.SetNull(col, row);
  } else {
    out.SetString(col, row, text);
  }
}

// The jobs the caller on `connection_id` may see, their errors hidden where they may quote a
// source the caller may not read (JobAccess::MaySeeSourceData).
std::vector<JobRow> VisibleJobs(JobSnapshotSource& source, const JobAccess& access,
                                uint64_t connection_id) {
  std::vector<JobRow> rows = source.SnapshotJobs();
  std::erase_if(rows, [&](const JobRow& row) { return !access.MaySee(connection_id, row.target); });
  for (JobRow& row : rows) {
    if (!access.MaySeeSourceData(connection_id, row.record.definer)) HideSourceData(&row.record);
  }
  return rows;
}

class JobsFunction final : public engine::TableFunction {
 public:
  JobsFunction(JobSnapshotSource* source, const JobAccess* access)
      : source_(source), access_(access) {}
  std::string name() const override { return "jobs"; }
  std::vector<std::string> parameter_names() const override { return {"type"}; }
  Result<std::vector<ColumnDef>> Bind(const TableFunctionArgs& args) override {
    MR_RETURN_IF_ERROR(CheckType(args, "jobs"));
    return std::vector<ColumnDef>{{"Id", TypeId::kBigInt},
                                  {"Name", TypeId::kVarchar},
                                  {"Definer", TypeId::kVarchar},
                                  {"ExecuteType", TypeId::kVarchar},
                                  {"RecurringStrategy", TypeId::kVarchar},
                                  {"Status", TypeId::kVarchar},
                                  {"ExecuteSql", TypeId::kVarchar},
                                  {"CreateTime", TypeId::kVarchar},
                                  {"SucceedTaskCount", TypeId::kBigInt},
                                  {"FailedTaskCount", TypeId::kBigInt},
                                  {"CanceledTaskCount", TypeId::kBigInt},
                                  {"Comment", TypeId::kVarchar},
                                  {"Properties", TypeId::kVarchar},
                                  {"CurrentOffset", TypeId::kVarchar},
                                  {"EndOffset", TypeId::kVarchar},
                                  {"LoadStatistic", TypeId::kVarchar},
                                  {"ErrorMsg", TypeId::kVarchar},
                                  {"JobRuntimeMsg", TypeId::kVarchar},
                                  {"Lag", TypeId::kVarchar},
                                  {"LastTaskSuccessTime", TypeId::kVarchar}};
  }
  Result<std::unique_ptr<engine::TableScan>> Scan(const TableFunctionArgs& args) override {
    auto write = [](OutputChunk& out, size_t r, const JobRow& row) {
      const JobRecord& j = row.record;
      size_t c = 0;
      out.SetInt64(c++, r, j.id);
      out.SetString(c++, r, j.name);
      out.SetString(c++, r, j.definer);
      out.SetString(c++, r, "STREAMING");
      out.SetNull(c++, r);  // RecurringStrategy: streaming jobs have none
      out.SetString(c++, r, std::string(JobStateName(j.state)));
      out.SetString(c++, r, j.masked_sql);
      out.SetString(c++, r, TimeText(j.create_time_us));
      out.SetInt64(c++, r, j.succeed_tasks);
      out.SetInt64(c++, r, j.failed_tasks);
      out.SetInt64(c++, r, j.canceled_tasks);
      out.SetString(c++, r, j.comment);
      out.SetString(c++, r, j.properties.ToJson());
      SetText(out, c++, r, j.current_offset.ToJson());
      SetText(out, c++, r, j.end_offset.ToJson());
      out.SetString(c++, r, j.stats.ToJson());
      SetText(out, c++, r, j.ErrorMsgJson());
      SetText(out, c++, r, j.runtime_msg);
      out.SetString(c++, r,
                    "{\"" + std::string(row.lag_unit) + "\":" + std::to_string(row.lag_items) +
                        ",\"bytes\":" + std::to_string(row.lag_bytes) + "}");
      SetText(out, c++, r, TimeText(j.last_success_time_us));
    };
    return std::unique_ptr<engine::TableScan>(
        std::make_unique<engine::VectorScan<JobRow, decltype(write)>>(
            VisibleJobs(*source_, *access_, args.connection_id()), write));
  }

 private:
  JobSnapshotSource* source_;
  const JobAccess* access_;
};

class TasksFunction final : public engine::TableFunction {
 public:
  TasksFunction(JobSnapshotSource* source, const JobAccess* access)
      : source_(source), access_(access) {}
  std::string name() const override { return "tasks"; }
  std::vector<std::string> parameter_names() const override { return {"type"}; }
  Result<std::vector<ColumnDef>> Bind(const TableFunctionArgs& args) override {
    MR_RETURN_IF_ERROR(CheckType(args, "tasks"));
    return std::vector<ColumnDef>{
        {"TaskId", TypeId::kBigInt},         {"JobId", TypeId::kBigInt},
        {"JobName", TypeId::kVarchar},       {"Label", TypeId::kVarchar},
        {"Status", TypeId::kVarchar},        {"ErrorMsg", TypeId::kVarchar},
        {"CreateTime", TypeId::kVarchar},    {"StartTime", TypeId::kVarchar},
        {"FinishTime", TypeId::kVarchar},    {"TrackingUrl", TypeId::kVarchar},
        {"LoadStatistic", TypeId::kVarchar}, {"User", TypeId::kVarchar},
        {"FirstErrorMsg", TypeId::kVarchar}, {"RunningOffset", TypeId::kVarchar}};
  }
  Result<std::unique_ptr<engine::TableScan>> Scan(const TableFunctionArgs& args) override {
    // A task shows its job's definer, and only when its job is visible; its errors only to
    // those who may see the job's source data (decided once per job).
    struct Owner {
      std::string definer;
      bool source_visible;
    };
    std::map<int64_t, Owner> owners;
    for (const JobRow& job : VisibleJobs(*source_, *access_, args.connection_id())) {
      owners[job.record.id] = {job.record.definer,
                               access_->MaySeeSourceData(args.connection_id(), job.record.definer)};
    }
    std::vector<std::pair<TaskRecord, std::string>> tasks;
    for (TaskRecord& task : source_->SnapshotTasks()) {
      auto it = owners.find(task.job_id);
      if (it == owners.end()) continue;
      if (!it->second.source_visible) HideSourceData(&task);
      tasks.emplace_back(std::move(task), it->second.definer);
    }
    using Row = std::pair<TaskRecord, std::string>;
    auto write = [](OutputChunk& out, size_t r, const Row& row) {
      const TaskRecord& t = row.first;
      size_t c = 0;
      out.SetInt64(c++, r, t.task_id);
      out.SetInt64(c++, r, t.job_id);
      out.SetString(c++, r, t.job_name);
      out.SetString(c++, r, t.Label());
      out.SetString(c++, r, std::string(TaskStateName(t.state)));
      SetText(out, c++, r, t.error_msg);
      SetText(out, c++, r, TimeText(t.create_time_us));
      SetText(out, c++, r, TimeText(t.start_time_us));
      SetText(out, c++, r, TimeText(t.finish_time_us));
      out.SetNull(c++, r);  // TrackingUrl: bad rows are in the filtered-rows table instead
      out.SetString(c++, r, t.stats.ToJson());
      out.SetString(c++, r, row.second);
      SetText(out, c++, r, t.first_error_msg);
      out.SetString(c++, r, t.RunningOffsetJson());
    };
    return std::unique_ptr<engine::TableScan>(
        std::make_unique<engine::VectorScan<Row, decltype(write)>>(std::move(tasks), write));
  }

 private:
  JobSnapshotSource* source_;
  const JobAccess* access_;
};

// job_source_access(): the ids of the jobs whose source data (filtered rows, file errors) the
// caller may see, for the catalog views' SQL.
class JobSourceAccessFunction final : public engine::TableFunction {
 public:
  JobSourceAccessFunction(JobSnapshotSource* source, const JobAccess* access)
      : source_(source), access_(access) {}
  std::string name() const override { return std::string(kJobSourceAccessFunction); }
  std::vector<std::string> parameter_names() const override { return {}; }
  Result<std::vector<ColumnDef>> Bind(const TableFunctionArgs& args) override {
    return std::vector<ColumnDef>{{"Id", TypeId::kBigInt}};
  }
  Result<std::unique_ptr<engine::TableScan>> Scan(const TableFunctionArgs& args) override {
    std::vector<int64_t> ids;
    for (const JobRow& row : source_->SnapshotJobs()) {
      if (access_->MaySee(args.connection_id(), row.target) &&
          access_->MaySeeSourceData(args.connection_id(), row.record.definer)) {
        ids.push_back(row.record.id);
      }
    }
    auto write = [](OutputChunk& out, size_t r, const int64_t& id) { out.SetInt64(0, r, id); };
    return std::unique_ptr<engine::TableScan>(
        std::make_unique<engine::VectorScan<int64_t, decltype(write)>>(std::move(ids), write));
  }

 private:
  JobSnapshotSource* source_;
  const JobAccess* access_;
};

}  // namespace

std::shared_ptr<engine::TableFunction> MakeJobsFunction(JobSnapshotSource* source,
                                                        const JobAccess* access) {
  return std::make_shared<JobsFunction>(source, access);
}

std::shared_ptr<engine::TableFunction> MakeTasksFunction(JobSnapshotSource* source,
                                                         const JobAccess* access) {
  return std::make_shared<TasksFunction>(source, access);
}

std::shared_ptr<engine::TableFunction> MakeJobSourceAccessFunction(JobSnapshotSource* source,
                                                                   const JobAccess* access) {
  return std::make_shared<JobSourceAccessFunction>(source, access);
}

}  // namespace millrace::job
