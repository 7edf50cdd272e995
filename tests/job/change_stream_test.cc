// The job layer with a source that is not files: an in-memory change stream (a snapshot in
// splits, then a log) drives the scheduler, the task runner and the commit gate, with an offset
// of several parts that survives a restart. No worker threads: the test runs each turn itself.
#include <gtest/gtest.h>

#include <map>

#include "catalog/duckdb_catalog.h"
#include "catalog/duckdb_sink.h"
#include "engine/engine_test_util.h"
#include "job/job_errors.h"
#include "job/job_registry.h"
#include "job/job_statements.h"
#include "job/job_test_util.h"
#include "job/scheduler.h"
#include "job/sink.h"
#include "job/task_runner.h"
#include "testing/temp_dir.h"

namespace millrace::job {
namespace {

using nlohmann::json;

// Upstream: a table of `snapshot_rows` rows read in splits of `split` rows, then changes
// (id, value) at log positions 1, 2, ...
struct Upstream {
  int snapshot_rows = 0;
  int split = 4;
  std::vector<std::pair<int, std::string>> log;
};

// The offset: {"snapshot": {"done": bool, "next": first id not read}, "lsn": last position
// applied}. Batches insert (id, value, origin) rows into cdc_t.
class MemoryChangeStream final : public JobSource {
 public:
  explicit MemoryChangeStream(const Upstream* upstream) : upstream_(upstream) {}

  Result<Polled> Poll(const JobRecord& job, const BatchLimits& limits) override {
    ++polls_;
    Polled polled;
    const Offset start = job.current_offset;
    const json& parts = start.parts();
    const bool done = parts.contains("snapshot") && parts["snapshot"].value("done", false);
    const int next = parts.contains("snapshot") ? parts["snapshot"].value("next", 0) : 0;
    const int lsn = parts.value("lsn", 0);
    std::vector<Row> rows;
    Offset end;
    if (!done) {
      const int until = std::min(next + upstream_->split, upstream_->snapshot_rows);
      for (int id = next; id < until; ++id)
        rows.push_back({id, "snap" + std::to_string(id), "snapshot"});
      const bool finished = until >= upstream_->snapshot_rows;
      end = Offset().With("snapshot", {{"done", finished}, {"next", until}}).With("lsn", lsn);
      polled.more = true;
    } else {
      const int last = std::min<int>(static_cast<int>(upstream_->log.size()),
                                     lsn + static_cast<int>(limits.max_items));
      for (int pos = lsn; pos < last; ++pos) {
        rows.push_back({upstream_->log[pos].first, upstream_->log[pos].second,
                        "lsn " + std::to_string(pos + 1)});
      }
      if (rows.empty()) return polled;  // drained
      end = start.With("lsn", last);
      polled.more = last < static_cast<int>(upstream_->log.size());
    }
    polled.end_offset = Offset().With("lsn", static_cast<int>(upstream_->log.size()));
    polled.batch = std::make_unique<Batch>(this, start, end, std::move(rows));
    return polled;
  }

  void Committed(const Offset& offset) override { confirmed_.push_back(offset); }
  void TurnEnded(TurnEnd end) override { turn_ends_.push_back(end); }
  int polls() const { return polls_; }
  const std::vector<TurnEnd>& turn_ends() const { return turn_ends_; }
  std::string Describe() const override { return "memory change stream"; }

  const std::vector<Offset>& confirmed() const { return confirmed_; }
  // Runs inside the next batch's load, after its rows are written (a PAUSE arriving then).
  std::function<void()> during_load;

 private:
  struct Row {
    int id;
    std::string value;
    std::string origin;
  };
  class Batch final : public SourceBatch {
   public:
    Batch(MemoryChangeStream* stream, Offset start, Offset end, std::vector<Row> rows)
        : SourceBatch(std::move(start), std::move(end), rows.front().origin, rows.back().origin,
                      static_cast<int64_t>(rows.size()), 0),
          stream_(stream),
          rows_(std::move(rows)) {}
    Result<LoadedBatch> Load(Sink& sink, const TaskContext& task, int attempt) override {
      LoadedBatch loaded;
      MR_ASSIGN_OR_RETURN(loaded.txn, sink.Begin(task.database));
      std::string values;
      for (const Row& r : rows_) {
        values += (values.empty() ? "(" : ", (") + std::to_string(r.id) + ", " +
                  engine::QuoteLiteral(r.value) + ", " + engine::QuoteLiteral(r.origin) + ")";
      }
      MR_RETURN_IF_ERROR(loaded.txn->connection().Execute("INSERT INTO cdc_t VALUES " + values));
      loaded.stats.scanned_rows = static_cast<int64_t>(rows_.size());
      if (stream_->during_load) std::exchange(stream_->during_load, nullptr)();
      return loaded;
    }

   private:
    MemoryChangeStream* stream_;
    std::vector<Row> rows_;
  };

  const Upstream* upstream_;
  std::vector<Offset> confirmed_;
  std::vector<TurnEnd> turn_ends_;
  int polls_ = 0;
};

// The DuckDB catalog, whose SaveJob fails while `fail_saves` is set (a full disk, say).
class FaultyCatalog final : public JobStore {
 public:
  explicit FaultyCatalog(JobStore* store) : store_(store) {}
  Result<std::vector<JobRecord>> LoadJobs() override { return store_->LoadJobs(); }
  Result<JobRecord> LoadJob(int64_t id) override { return store_->LoadJob(id); }
  Result<std::vector<TaskRecord>> LoadTasks(int64_t id, int limit) override {
    return store_->LoadTasks(id, limit);
  }
  Status InsertJob(const JobRecord& job) override { return store_->InsertJob(job); }
  Status SaveJob(const JobRecord& job) override {
    if (fail_saves) return Status::IoError("no space left on device");
    return store_->SaveJob(job);
  }
  Status SaveJobFromOffset(const JobRecord& job) override {
    if (fail_saves) return Status::IoError("no space left on device");
    return store_->SaveJobFromOffset(job);
  }
  Status DeleteJob(int64_t id) override { return store_->DeleteJob(id); }
  Result<std::vector<LedgerEntry>> LedgerEntries(int64_t id,
                                                 std::optional<FileState> state) override {
    return store_->LedgerEntries(id, state);
  }
  Result<std::vector<LedgerEntry>> LedgerPage(int64_t id, const std::string& after, int64_t limit,
                                              std::optional<FileState> state,
                                              const std::string& search) override {
    return store_->LedgerPage(id, after, limit, state, search);
  }
  Result<std::vector<FilteredRow>> FilteredRowsPage(int64_t id, const FilteredRow& after,
                                                    int64_t limit) override {
    return store_->FilteredRowsPage(id, after, limit);
  }
  Result<std::map<int64_t, int64_t>> CountFiles(FileState state) override {
    return store_->CountFiles(state);
  }
  Result<std::map<int64_t, std::map<std::string, int64_t>>> CountQuarantinedByReason() override {
    return store_->CountQuarantinedByReason();
  }
  Status RecordFiles(const std::vector<LedgerEntry>& entries) override {
    return store_->RecordFiles(entries);
  }
  Status MarkReading(int64_t id, const std::vector<ReadingMark>& marks) override {
    return store_->MarkReading(id, marks);
  }
  Status ClearReading(int64_t id, int64_t task_id) override {
    return store_->ClearReading(id, task_id);
  }
  Result<std::vector<ReadingMark>> ReadingMarks(int64_t id) override {
    return store_->ReadingMarks(id);
  }
  std::atomic<bool> fail_saves{false};

 private:
  JobStore* store_;
};

// The parts of the job layer, as the service wires them, over one database file.
class Layer {
 public:
  Layer(const std::string& path, ManualClock* clock)
      : db_(engine::OpenOrDie({.path = path})),
        conn_(engine::ConnectOrDie(*db_)),
        store_(db_.get(), path, TestSecrets().get()),
        catalog_(store_.jobs()),
        scheduler_(clock),
        runner_(TaskRunnerConfig{.clock = clock,
                                 .catalog = &catalog_,
                                 .scheduler = &scheduler_,
                                 .policy = TaskPolicy{.task_retries = 0}}),
        statements_(JobStatementsConfig{.clock = clock,
                                        .catalog = &catalog_,
                                        .registry = &registry_,
                                        .scheduler = &scheduler_}),
        sink_(engine::ConnectOrDie(*db_)) {
    EXPECT_TRUE(store_.Open().ok());
  }

  // PAUSE / RESUME / DROP JOB, as a client runs them.
  Result<std::string> Control(JobControl action) {
    return statements_.Execute(ControlJobStatement{action, "cdc", false}, "", sql::SessionInfo{});
  }

  // Adds the job to the registry with `source`, as the service does on start-up or CREATE.
  std::shared_ptr<Job> Register(JobRecord record, std::shared_ptr<JobSource> source,
                                Clock::SteadyTime now) {
    auto job = std::make_shared<Job>(record.id, record.name);
    auto plan = std::make_shared<JobPlan>();
    plan->source = std::move(source);
    {
      MutexLock lock(&job->mu);
      job->record = std::move(record);
      job->plan = std::move(plan);
      job->Publish();
    }
    registry_.Add(job);
    scheduler_.Schedule(job->id, now);
    return job;
  }

  // A worker's loop, once: claims the due job and runs its turn.
  std::optional<int64_t> Turn() {
    std::optional<int64_t> id = scheduler_.Next();
    if (auto job = registry_.Get(*id)) runner_.RunTurn(*job, sink_);
    scheduler_.Release(*id);
    return id;
  }

  std::string Value(const std::string& sql) { return engine::QueryValue(*conn_, sql); }
  catalog::SqlJobStore& catalog() { return *store_.jobs(); }
  FaultyCatalog& faulty() { return catalog_; }
  Scheduler& scheduler() { return scheduler_; }
  JobRegistry& registry() { return registry_; }
  TaskRunner& runner() { return runner_; }
  Sink& sink() { return sink_; }
  engine::Connection& conn() { return *conn_; }

 private:
  std::unique_ptr<engine::Database> db_;
  std::unique_ptr<engine::Connection> conn_;
  catalog::DuckDbCatalog store_;
  FaultyCatalog catalog_;
  JobRegistry registry_;
  Scheduler scheduler_;
  TaskRunner runner_;
  JobStatements statements_;
  catalog::DuckDbSink sink_;
};

class ChangeStreamTest : public ::testing::Test {
 protected:
  JobRecord NewJob() {
    JobRecord r;
    r.id = 1;
    r.name = "cdc";
    r.state = JobState::kRunning;
    r.insert_sql = "(change stream)";
    r.properties = *JobProperties::Parse({{"s3.max_batch_files", "3"}});
    return r;
  }
  std::string RowsPerId() {
    return engine::QueryValue(layer_->conn(),
                              "SELECT count(*) || '/' || count(DISTINCT id) FROM cdc_t");
  }

  testing::TempDir dir_;
  const std::string path_ = dir_.Join("db.duckdb");
  ManualClock clock_;
  Upstream upstream_;
  std::unique_ptr<Layer> layer_ = std::make_unique<Layer>(path_, &clock_);
};

TEST_F(ChangeStreamTest, SnapshotThenLogExactlyOnceAcrossARestart) {
  upstream_.snapshot_rows = 10;
  for (int i = 0; i < 5; ++i)
    upstream_.log.push_back({100 + i, "v" + std::to_string(i)});
  ASSERT_TRUE(
      layer_->conn().Execute("CREATE TABLE cdc_t (id INT, value VARCHAR, origin VARCHAR)").ok());
  ASSERT_TRUE(layer_->catalog().InsertJob(NewJob()).ok());
  auto stream = std::make_shared<MemoryChangeStream>(&upstream_);
  auto job = layer_->Register(NewJob(), stream, clock_.SteadyNow());

  // One turn chains tasks while the source has more: 3 snapshot splits (4+4+2 rows), then the
  // log in batches of at most 3 changes.
  EXPECT_EQ(layer_->Turn(), 1);
  EXPECT_EQ(layer_->Value("SELECT count(*) FROM cdc_t"), "15");
  EXPECT_EQ(layer_->Value("SELECT count(*) FROM cdc_t WHERE origin = 'snapshot'"), "10");
  const std::string expected = R"({"lsn":5,"snapshot":{"done":true,"next":10}})";
  EXPECT_EQ(layer_->Value("SELECT current_offset FROM __millrace.jobs WHERE id = 1"), expected);
  EXPECT_EQ(layer_->Value("SELECT end_offset FROM __millrace.jobs WHERE id = 1"), R"({"lsn":5})");
  EXPECT_EQ(layer_->Value("SELECT count(*) FROM __millrace.tasks WHERE job_id = 1 AND state = "
                          "'SUCCESS'"),
            "5");
  // The source was told of each commit, after it, in order.
  ASSERT_EQ(stream->confirmed().size(), 5u);
  EXPECT_EQ(stream->confirmed().back().ToJson(), expected);
  EXPECT_EQ(stream->confirmed()[0].ToJson(), R"({"lsn":0,"snapshot":{"done":false,"next":4}})");

  // The last batch drained the log: the next turn is due after max_interval (10 s); it finds
  // nothing and waits max_interval again.
  EXPECT_EQ(layer_->scheduler().DueTime(1), clock_.SteadyNow() + std::chrono::seconds(10));
  clock_.Advance(std::chrono::seconds(10));
  EXPECT_EQ(layer_->Turn(), 1);
  EXPECT_EQ(layer_->scheduler().DueTime(1), clock_.SteadyNow() + std::chrono::seconds(10));
  EXPECT_EQ(stream->confirmed().size(), 5u);

  // Restart: a new layer over the same file; the stored offset, parts and all, is where the new
  // source starts. Two more changes arrive meanwhile.
  job.reset();
  layer_.reset();
  upstream_.log.push_back({200, "late"});
  upstream_.log.push_back({201, "later"});
  layer_ = std::make_unique<Layer>(path_, &clock_);
  auto stored = layer_->catalog().LoadJobs();
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ((*stored)[0].current_offset.ToJson(), expected);
  EXPECT_TRUE((*stored)[0].current_offset.parts()["snapshot"]["done"].get<bool>());
  auto resumed = std::make_shared<MemoryChangeStream>(&upstream_);
  layer_->Register((*stored)[0], resumed, clock_.SteadyNow());
  EXPECT_EQ(layer_->Turn(), 1);
  EXPECT_EQ(RowsPerId(), "17/17");  // every row once: no split and no change twice
  EXPECT_EQ(layer_->Value("SELECT string_agg(origin, ',' ORDER BY id) FROM cdc_t WHERE id >= 200"),
            "lsn 6,lsn 7");
  ASSERT_EQ(resumed->confirmed().size(), 1u);
  EXPECT_EQ(resumed->confirmed()[0].ToJson(), R"({"lsn":7,"snapshot":{"done":true,"next":10}})");
  EXPECT_EQ(layer_->Value("SELECT next_task_id FROM __millrace.jobs WHERE id = 1"), "7");
}

// A PAUSE that lands while a batch loads bumps the epoch: the commit gate refuses the batch,
// nothing of it is visible, the source is not told, and the task is CANCELED.
TEST_F(ChangeStreamTest, ASupersededBatchCommitsNothingAndIsNotConfirmed) {
  upstream_.snapshot_rows = 0;
  upstream_.log = {{1, "a"}, {2, "b"}};
  ASSERT_TRUE(
      layer_->conn().Execute("CREATE TABLE cdc_t (id INT, value VARCHAR, origin VARCHAR)").ok());
  JobRecord record = NewJob();
  record.current_offset = Offset().With("snapshot", {{"done", true}, {"next", 0}}).With("lsn", 0);
  ASSERT_TRUE(layer_->catalog().InsertJob(record).ok());
  auto stream = std::make_shared<MemoryChangeStream>(&upstream_);
  auto job = layer_->Register(record, stream, clock_.SteadyNow());
  stream->during_load = [&] {
    MutexLock lock(&job->mu);
    ++job->record.epoch;  // what PAUSE does first
  };
  EXPECT_EQ(layer_->Turn(), 1);
  EXPECT_EQ(layer_->Value("SELECT count(*) FROM cdc_t"), "0");
  EXPECT_TRUE(stream->confirmed().empty());
  EXPECT_EQ(layer_->Value("SELECT current_offset FROM __millrace.jobs WHERE id = 1"),
            record.current_offset.ToJson());
  const auto view = job->view();
  ASSERT_EQ(view->tasks.size(), 1u);
  EXPECT_EQ(view->tasks[0].state, TaskState::kCanceled);
  EXPECT_EQ(view->row.record.canceled_tasks, 1);
}

class ChangeStreamStatementsTest : public ChangeStreamTest {
 protected:
  void SetUp() override {
    upstream_.log = {{1, "a"}, {2, "b"}};
    ASSERT_TRUE(
        layer_->conn().Execute("CREATE TABLE cdc_t (id INT, value VARCHAR, origin VARCHAR)").ok());
    record_ = NewJob();
    record_.current_offset = Offset().With("snapshot", {{"done", true}}).With("lsn", 0);
    ASSERT_TRUE(layer_->catalog().InsertJob(record_).ok());
    stream_ = std::make_shared<MemoryChangeStream>(&upstream_);
    job_ = layer_->Register(record_, stream_, clock_.SteadyNow());
  }
  JobRecord record_;
  std::shared_ptr<MemoryChangeStream> stream_;
  std::shared_ptr<Job> job_;
};

// DROP of a job a worker has already claimed (due, handed out, its turn not begun): the turn
// finds a STOPPED job and does nothing, so nothing of the dropped job is written afterwards.
TEST_F(ChangeStreamStatementsTest, ADroppedJobThatAWorkerClaimedDoesNotRun) {
  ASSERT_EQ(layer_->scheduler().Next(), 1);  // claimed
  ASSERT_TRUE(layer_->Control(JobControl::kDrop).ok());
  layer_->runner().RunTurn(*job_, layer_->sink());
  layer_->scheduler().Release(1);
  EXPECT_EQ(stream_->polls(), 0);
  EXPECT_EQ(layer_->Value("SELECT count(*) FROM cdc_t"), "0");
  EXPECT_EQ(layer_->Value("SELECT count(*) FROM __millrace.jobs"), "0");
  EXPECT_EQ(layer_->scheduler().DueTime(1), std::nullopt);
}

// A PAUSE whose write of the job's row fails leaves the job as it was, RUNNING and scheduled:
// it goes on loading and committing.
TEST_F(ChangeStreamStatementsTest, APauseThatCannotBeRecordedChangesNothing) {
  layer_->faulty().fail_saves = true;
  auto paused = layer_->Control(JobControl::kPause);
  ASSERT_FALSE(paused.ok());
  EXPECT_EQ(paused.status().message(), "no space left on device");
  layer_->faulty().fail_saves = false;
  {
    MutexLock lock(&job_->mu);
    EXPECT_EQ(job_->record.state, JobState::kRunning);
    EXPECT_EQ(job_->record.epoch, record_.epoch);
  }
  EXPECT_EQ(layer_->Turn(), 1);
  EXPECT_EQ(layer_->Value("SELECT count(*) FROM cdc_t"), "2");
  EXPECT_EQ(stream_->confirmed().size(), 1u);
}

// A stored row that no longer matches the job in memory (here: its offset moved behind the
// server's back) makes the commit gate refuse the task; the job is PAUSED with a reason, not
// left RUNNING with tasks that can never commit.
TEST_F(ChangeStreamStatementsTest, AStoredRowThatDoesNotExpectTheTaskPausesTheJob) {
  ASSERT_TRUE(
      layer_->conn().Execute("UPDATE __millrace.jobs SET current_offset = '{\"lsn\": 99}'").ok());
  EXPECT_EQ(layer_->Turn(), 1);
  EXPECT_EQ(layer_->Value("SELECT count(*) FROM cdc_t"), "0");
  EXPECT_TRUE(stream_->confirmed().empty());
  const auto view = job_->view();
  EXPECT_EQ(view->row.record.state, JobState::kPaused);
  EXPECT_EQ(view->row.record.error_code, "LOAD_ERR");
  EXPECT_NE(view->row.record.error_msg.find("does not expect this task"), std::string::npos);
  ASSERT_EQ(view->tasks.size(), 1u);
  EXPECT_EQ(view->tasks[0].state, TaskState::kFailed);
  // The automatic resume writes the row again and the job carries on, exactly once.
  clock_.Advance(std::chrono::seconds(10));
  EXPECT_EQ(layer_->Turn(), 1);
  EXPECT_EQ(layer_->Value("SELECT count(*) FROM cdc_t"), "2");
  EXPECT_EQ(job_->view()->row.record.state, JobState::kRunning);
}

// A stored epoch newer than the server's (in a cluster: another server took the job over) is
// never written back: the job pauses, its automatic resume is refused, nothing loads, and the
// stored row keeps the newer epoch.
TEST_F(ChangeStreamStatementsTest, AStoredEpochNewerThanTheServersIsNotWrittenBack) {
  ASSERT_TRUE(layer_->conn().Execute("UPDATE __millrace.jobs SET epoch = 99").ok());
  EXPECT_EQ(layer_->Turn(), 1);
  EXPECT_EQ(job_->view()->row.record.state, JobState::kPaused);
  clock_.Advance(std::chrono::seconds(10));
  layer_->Turn();
  EXPECT_EQ(layer_->Value("SELECT count(*) FROM cdc_t"), "0");
  EXPECT_EQ(layer_->Value("SELECT epoch FROM __millrace.jobs"), "99");
  EXPECT_EQ(job_->view()->row.record.state, JobState::kPaused);
}

// The source hears how each turn ended: kDueAgain only when the turn ran its time with more to
// load (its next turn is due at once, so a read ahead is worth keeping), else kStopped, which a
// paused job's turn also says.
TEST_F(ChangeStreamStatementsTest, TheSourceHearsWhetherItsTurnIsDueAgain) {
  for (int id = 3; id <= 5; ++id)
    upstream_.log.push_back({id, "v" + std::to_string(id)});
  // The first batch (3 changes) loads for the whole chain: the turn ends with 2 left.
  stream_->during_load = [&] { clock_.Advance(TaskRunner::kTaskChain); };
  EXPECT_EQ(layer_->Turn(), 1);
  EXPECT_EQ(layer_->Value("SELECT count(*) FROM cdc_t"), "3");
  EXPECT_EQ(stream_->turn_ends(), std::vector<TurnEnd>{TurnEnd::kDueAgain});
  EXPECT_EQ(layer_->scheduler().DueTime(1), clock_.SteadyNow());
  // The next turn drains the log.
  EXPECT_EQ(layer_->Turn(), 1);
  EXPECT_EQ(layer_->Value("SELECT count(*) FROM cdc_t"), "5");
  EXPECT_EQ(stream_->turn_ends(), (std::vector<TurnEnd>{TurnEnd::kDueAgain, TurnEnd::kStopped}));
  // Paused: its first look upstream drops what a turn kept.
  ASSERT_TRUE(layer_->Control(JobControl::kPause).ok());
  clock_.Advance(std::chrono::seconds(60));
  EXPECT_EQ(layer_->Turn(), 1);
  EXPECT_EQ(stream_->turn_ends().size(), 3u);
  EXPECT_EQ(stream_->turn_ends().back(), TurnEnd::kStopped);
}

}  // namespace
}  // namespace millrace::job
