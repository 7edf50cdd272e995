// The job service on a job store that is not DuckDB's: the proof that a second catalog (the
// PostgreSQL one of cluster mode) can slot in beside src/catalog without touching the job layer.
// This binary links the job layer and the file source, not millrace_catalog: the service gets an
// in-memory JobStore and a sink whose bookkeeping (offset, ledger, task record) goes to that store,
// as a PostgreSQL catalog's sink would keep them away from DuckDB. The rows still go to DuckDB.
//
// The fakes are for this test only: the in-memory store applies a task's bookkeeping after the
// rows' DuckDB commit, which is not atomic (the real sinks write both in one transaction).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include "common/clock.h"
#include "common/thread_annotations.h"
#include "engine/engine_test_util.h"
#include "files/file_job_source.h"
#include "job/job_service.h"
#include "job/job_store.h"
#include "job/sink.h"
#include "load/file_table_function.h"
#include "testing/temp_dir.h"
#include "testing/wait_for.h"

namespace millrace::job {
namespace {

class MemoryJobStore final : public JobStore {
 public:
  Result<std::vector<JobRecord>> LoadJobs() override {
    MutexLock lock(&mu_);
    std::vector<JobRecord> jobs;
    for (const auto& [id, job] : jobs_)
      jobs.push_back(job);
    return jobs;
  }
  Result<JobRecord> LoadJob(int64_t job_id) override {
    MutexLock lock(&mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return Status::NotFound("job " + std::to_string(job_id));
    return it->second;
  }
  Result<std::vector<TaskRecord>> LoadTasks(int64_t job_id, int limit) override {
    MutexLock lock(&mu_);
    std::vector<TaskRecord> tasks = tasks_[job_id];
    if (static_cast<int>(tasks.size()) > limit) tasks.erase(tasks.begin(), tasks.end() - limit);
    return tasks;
  }
  Status InsertJob(const JobRecord& job) override {
    MutexLock lock(&mu_);
    if (!jobs_.emplace(job.id, job).second) return Status::AlreadyExists("job " + job.name);
    return Status::Ok();
  }
  Status SaveJob(const JobRecord& job) override {
    MutexLock lock(&mu_);
    auto it = jobs_.find(job.id);
    if (it == jobs_.end()) return Status::NotFound("job " + job.name + " is not in the store");
    if (it->second.epoch > job.epoch) return Status::Aborted("job " + job.name + " changed");
    it->second = job;
    return Status::Ok();
  }
  Status SaveJobFromOffset(const JobRecord& job) override {
    MR_RETURN_IF_ERROR(SaveJob(job));
    MutexLock lock(&mu_);
    auto& ledger = ledger_[job.id];
    for (auto it = ledger.upper_bound(job.current_offset.Text(kFileNamePart)); it != ledger.end();
         ++it)
      it->second.state = FileState::kRetrying;
    return Status::Ok();
  }
  Status DeleteJob(int64_t job_id) override {
    MutexLock lock(&mu_);
    jobs_.erase(job_id);
    tasks_.erase(job_id);
    ledger_.erase(job_id);
    reading_.erase(job_id);
    return Status::Ok();
  }
  Result<std::vector<LedgerEntry>> LedgerEntries(int64_t job_id,
                                                 std::optional<FileState> state) override {
    return LedgerPage(job_id, "", INT64_MAX, state, "");
  }
  Result<std::vector<LedgerEntry>> LedgerPage(int64_t job_id, const std::string& after,
                                              int64_t limit, std::optional<FileState> state,
                                              const std::string& search) override {
    MutexLock lock(&mu_);
    std::vector<LedgerEntry> page;
    const auto& ledger = ledger_[job_id];
    for (auto it = ledger.upper_bound(after);
         it != ledger.end() && static_cast<int64_t>(page.size()) < limit; ++it) {
      if (state && it->second.state != *state) continue;
      if (!search.empty() && it->first.find(search) == std::string::npos) continue;
      page.push_back(it->second);
    }
    return page;
  }
  Result<std::vector<FilteredRow>> FilteredRowsPage(int64_t, const FilteredRow&, int64_t) override {
    return std::vector<FilteredRow>();  // this test's files have no bad rows
  }
  Result<std::map<int64_t, int64_t>> CountFiles(FileState state) override {
    MutexLock lock(&mu_);
    std::map<int64_t, int64_t> counts;
    for (const auto& [job_id, ledger] : ledger_) {
      for (const auto& [key, entry] : ledger)
        if (entry.state == state) ++counts[job_id];
    }
    return counts;
  }
  Result<std::map<int64_t, std::map<std::string, int64_t>>> CountQuarantinedByReason() override {
    MutexLock lock(&mu_);
    std::map<int64_t, std::map<std::string, int64_t>> counts;
    for (const auto& [job_id, ledger] : ledger_) {
      for (const auto& [key, entry] : ledger)
        if (entry.state == FileState::kQuarantined) ++counts[job_id][entry.reason];
    }
    return counts;
  }
  Status RecordFiles(const std::vector<LedgerEntry>& entries) override {
    MutexLock lock(&mu_);
    RecordLocked(entries);
    return Status::Ok();
  }
  Status MarkReading(int64_t job_id, const std::vector<ReadingMark>& marks) override {
    MutexLock lock(&mu_);
    for (const ReadingMark& m : marks)
      reading_[job_id][m.key] = m;
    return Status::Ok();
  }
  Status ClearReading(int64_t job_id, int64_t task_id) override {
    MutexLock lock(&mu_);
    std::erase_if(reading_[job_id], [&](const auto& kv) { return kv.second.task_id == task_id; });
    return Status::Ok();
  }
  Result<std::vector<ReadingMark>> ReadingMarks(int64_t job_id) override {
    MutexLock lock(&mu_);
    std::vector<ReadingMark> marks;
    for (const auto& [key, mark] : reading_[job_id])
      marks.push_back(mark);
    return marks;
  }

  // The exactly-once check of a task's commit, as the sinks make it: the job is RUNNING, at
  // the task's start offset and still in the task's epoch.
  bool Expects(const Progress& p) {
    MutexLock lock(&mu_);
    auto it = jobs_.find(p.job.id);
    return it != jobs_.end() && it->second.state == JobState::kRunning &&
           it->second.epoch == p.epoch && it->second.current_offset == p.start;
  }
  // What a committed task moves: the job's offsets and counters, its ledger and task record.
  // A task's progress and the rows it filtered, once its transaction committed.
  void Apply(const Progress& p, const std::vector<FilteredRow>& filtered) {
    MutexLock lock(&mu_);
    for (const FilteredRow& row : filtered)
      filtered_[p.job.id].push_back(row);
    JobRecord& job = jobs_.at(p.job.id);
    job.current_offset = p.job.current_offset;
    job.end_offset = p.job.end_offset;
    job.succeed_tasks = p.job.succeed_tasks;
    job.stats = p.job.stats;
    job.last_success_time_us = p.job.last_success_time_us;
    job.next_task_id = p.job.next_task_id;
    job.runtime_msg = p.job.runtime_msg;
    RecordLocked(p.ledger);
    tasks_[p.job.id].push_back(p.task);
  }
  std::vector<FilteredRow> FilteredRows(int64_t job_id) {
    MutexLock lock(&mu_);
    return filtered_[job_id];
  }

 private:
  void RecordLocked(const std::vector<LedgerEntry>& entries) REQUIRES(mu_) {
    for (const LedgerEntry& e : entries)
      ledger_[e.job_id][e.key] = e;
  }

  Mutex mu_;
  std::map<int64_t, JobRecord> jobs_ GUARDED_BY(mu_);
  std::map<int64_t, std::vector<TaskRecord>> tasks_ GUARDED_BY(mu_);
  std::map<int64_t, std::map<std::string, LedgerEntry>> ledger_ GUARDED_BY(mu_);
  std::map<int64_t, std::map<std::string, ReadingMark>> reading_ GUARDED_BY(mu_);
  std::map<int64_t, std::vector<FilteredRow>> filtered_ GUARDED_BY(mu_);
};

// Rows in a DuckDB transaction; the bookkeeping in the memory store once the rows committed.
class MemorySinkTransaction final : public SinkTransaction {
 public:
  MemorySinkTransaction(engine::Connection* conn, engine::Transaction txn, MemoryJobStore* store)
      : conn_(conn), txn_(std::move(txn)), store_(store) {}

  engine::Connection& connection() override { return *conn_; }
  Result<bool> WriteProgress(const Progress& progress) override {
    if (progress.part != Progress::Part::kAll) {
      return Status::NotSupported("the memory store commits one task at a time");
    }
    if (!store_->Expects(progress)) return false;
    pending_ = progress;
    return true;
  }
  // The rows are read out of DuckDB at once: the statement's stage table is gone after it.
  Status RecordFilteredRows(int64_t, int64_t task_id, const std::string& file, int64_t time_us,
                            const std::string& select) override {
    MR_ASSIGN_OR_RETURN(auto rows, engine::QueryTextRows(
                                       *conn_, "SELECT line, col, val, why FROM (" + select + ")"));
    for (const auto& row : rows) {
      filtered_.push_back(
          FilteredRow{task_id, file, std::stoll(row[0]), row[1], row[2], row[3], time_us});
    }
    return Status::Ok();
  }
  Result<std::vector<FilteredRow>> TaskFilteredRows(int64_t, int64_t task_id,
                                                    int64_t limit) override {
    std::vector<FilteredRow> rows;
    for (const FilteredRow& row : filtered_) {
      if (row.task_id == task_id && static_cast<int64_t>(rows.size()) < limit) rows.push_back(row);
    }
    return rows;
  }
  Status Commit() override {
    MR_RETURN_IF_ERROR(txn_.Commit());
    if (pending_) store_->Apply(*pending_, filtered_);
    return Status::Ok();
  }
  Status Rollback() override { return txn_.active() ? txn_.Rollback() : Status::Ok(); }

 private:
  engine::Connection* const conn_;
  engine::Transaction txn_;
  MemoryJobStore* const store_;
  std::optional<Progress> pending_;
  std::vector<FilteredRow> filtered_;
};

class MemorySink final : public Sink {
 public:
  MemorySink(std::unique_ptr<engine::Connection> conn, MemoryJobStore* store)
      : conn_(std::move(conn)), store_(store) {}
  Result<std::unique_ptr<SinkTransaction>> Begin(const std::string& database) override {
    MR_RETURN_IF_ERROR(UseDatabase(*conn_, database));
    MR_ASSIGN_OR_RETURN(auto txn, conn_->Begin());
    return std::unique_ptr<SinkTransaction>(
        std::make_unique<MemorySinkTransaction>(conn_.get(), std::move(txn), store_));
  }
  void Interrupt() override { conn_->Interrupt(); }
  void ClearInterrupt() override { conn_->ClearInterrupt(); }

 private:
  const std::unique_ptr<engine::Connection> conn_;
  MemoryJobStore* const store_;
};

class JobStoreFakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(in_);
    ASSERT_TRUE(conn_->Execute("CREATE TABLE t (id INTEGER, name VARCHAR)").ok());
  }

  std::unique_ptr<JobService> StartService() {
    JobServiceConfig config;
    config.db = db_.get();
    config.store = &store_;
    config.make_sink = [this]() -> Result<std::unique_ptr<Sink>> {
      MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
      return std::unique_ptr<Sink>(std::make_unique<MemorySink>(std::move(conn), &store_));
    };
    config.clock = Clock::Real();
    config.work_root = dir_.Join("work");
    config.make_source = load::DefaultSourceFactory(Clock::Real(), std::chrono::milliseconds(50));
    config.make_file_source = files::MakeFileJobSource;
    auto service = JobService::Start(std::move(config));
    EXPECT_TRUE(service.ok()) << service.status().ToString();
    return service.ok() ? std::move(service).value() : nullptr;
  }

  void WriteCsv(const std::string& name, const std::string& content) {
    {
      std::ofstream out(in_ + "/" + name + ".tmp");
      out << content;
    }
    std::filesystem::rename(in_ + "/" + name + ".tmp", in_ + "/" + name);
  }
  bool WaitForRows(int rows) {
    return testing::WaitFor(
        [&] {
          return engine::QueryValue(*conn_, "SELECT count(*) FROM t") == std::to_string(rows);
        },
        std::chrono::seconds(30));
  }
  std::vector<std::string> LedgerKeys() {
    auto entries = store_.LedgerEntries(1, FileState::kLoaded);
    EXPECT_TRUE(entries.ok());
    std::vector<std::string> keys;
    for (const LedgerEntry& e : entries.value_or(std::vector<LedgerEntry>{}))
      keys.push_back(e.key);
    return keys;
  }

  testing::TempDir dir_;
  const std::string in_ = dir_.Join("in");
  std::unique_ptr<engine::Database> db_ = engine::OpenOrDie({.path = dir_.Join("db.duckdb")});
  std::unique_ptr<engine::Connection> conn_ = engine::ConnectOrDie(*db_);
  MemoryJobStore store_;
};

TEST_F(JobStoreFakeTest, AFileJobRunsOnAStoreThatIsNotDuckDb) {
  WriteCsv("a.csv", "1,a\n2,a\n");
  auto service = StartService();
  ASSERT_NE(service, nullptr);
  auto created = service->Execute(
      "CREATE JOB j ON STREAMING PROPERTIES (\"max_interval\" = \"1\", "
      "\"session.insert_max_filter_ratio\" = \"0.5\") DO INSERT INTO t SELECT "
      "c1, c2 FROM local(\"file_path\" = \"" +
      in_ + "/*.csv\", \"column_separator\" = \",\")");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(WaitForRows(2));
  WriteCsv("b.csv", "3,b\n");
  ASSERT_TRUE(WaitForRows(3));

  // The job's bookkeeping is in the store: its offset, each file's ledger entry, the tasks.
  EXPECT_TRUE(testing::WaitFor([&] { return LedgerKeys().size() == 2; }));
  EXPECT_EQ(LedgerKeys(), (std::vector<std::string>{in_ + "/a.csv", in_ + "/b.csv"}));
  auto jobs = store_.LoadJobs();
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ(jobs->at(0).current_offset, Offset::FileName(in_ + "/b.csv"));
  EXPECT_EQ(jobs->at(0).state, JobState::kRunning);
  auto tasks = store_.LoadTasks(jobs->at(0).id, 100);
  ASSERT_TRUE(tasks.ok());
  ASSERT_FALSE(tasks->empty());
  EXPECT_EQ(tasks->back().state, TaskState::kSuccess);
  // A row that does not convert is filtered, and recorded through the sink in the store.
  WriteCsv("bad.csv", "x,bad\n5,bad\n");
  ASSERT_TRUE(WaitForRows(4)) << store_.LoadJobs()->at(0).error_msg << " / "
                              << store_.LoadTasks(1, 100)->back().error_msg;
  ASSERT_TRUE(testing::WaitFor([&] { return !store_.FilteredRows(1).empty(); }));
  const std::vector<FilteredRow> filtered = store_.FilteredRows(1);
  ASSERT_EQ(filtered.size(), 1u);
  EXPECT_EQ(filtered[0].file, in_ + "/bad.csv");
  EXPECT_EQ(filtered[0].line, 1);
  EXPECT_EQ(filtered[0].value, "x");
  // ... and nothing of it in DuckDB: the database has no catalog schema at all.
  EXPECT_EQ(engine::QueryValue(*conn_,
                               "SELECT count(*) FROM duckdb_tables() WHERE schema_name = "
                               "'__millrace'"),
            "0");

  // A restart reads the job back from the store and carries on from its offset: a new file
  // loads, the old ones do not load again.
  service.reset();
  service = StartService();
  ASSERT_NE(service, nullptr);
  WriteCsv("c.csv", "6,c\n");
  ASSERT_TRUE(WaitForRows(5));
  EXPECT_EQ(engine::QueryValue(*conn_, "SELECT string_agg(id::VARCHAR, ',' ORDER BY id) FROM t"),
            "1,2,3,5,6");
}

}  // namespace
}  // namespace millrace::job
