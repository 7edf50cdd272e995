#include "job/job_service.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <thread>

#include "common/logging.h"
#include "common/thread_annotations.h"
#include "job/batch_loader.h"
#include "job/job_catalog.h"
#include "job/job_statement.h"
#include "job/job_views.h"
#include "load/batch.h"
#include "load/reader_sql.h"

namespace millrace::job {
namespace {

using Steady = Clock::SteadyTime;

// Filtered rows kept per job in __millrace.filtered_rows (older tasks' rows are dropped).
constexpr int64_t kFilteredRowsKept = 10'000;

// How soon a job looks again at local files that were still being written.
constexpr std::chrono::milliseconds kUnsettledPoll{200};
// Small-file groups (BatchLoader::LoadGroupFast): files up to kGroupFileBytes, read twice (the
// INSERT and the count by file), which costs less than a statement each only while they are
// small; at most kGroupMaxFiles files and kGroupMaxBytes per group.
constexpr uint64_t kGroupFileBytes = 64 << 10;
constexpr size_t kGroupMaxFiles = 1000;
constexpr uint64_t kGroupMaxBytes = 16 << 20;
// A task whose batch is at most kReadAheadMaxBytes and leaves files after it lists and starts
// downloading the next batch while it loads (NextBatch); the worker then runs the next task at
// once, for up to kTaskChain before it lets other jobs' tasks have their turn.
constexpr uint64_t kReadAheadMaxBytes = 64 << 20;
constexpr std::chrono::seconds kTaskChain{10};

int64_t MicrosSinceEpoch(Clock::WallTime t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

// Compares table names as DuckDB resolves them: case-insensitive, quotes removed.
std::string NormalizeName(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '"' || c == '`' || std::isspace(static_cast<unsigned char>(c))) continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

load::SourceKind KindOf(SourceType type) {
  return type == SourceType::kS3 ? load::SourceKind::kS3 : load::SourceKind::kLocal;
}

// Unqualified names of a job's statements resolve in the database it was created in.
Status UseDatabase(engine::Connection& conn, const std::string& database) {
  return conn.Execute("SET schema = " + engine::QuoteLiteral(database.empty() ? "main" : database));
}

// Why a task did not commit.
struct TaskFailure {
  Status status;
  std::string code;  // ErrorMsg code when it pauses the job
};

// The next batch of a job, listed and downloading on a thread of its own while the current
// batch loads. Only a read ahead: the task that takes it checks that the job's epoch and offset
// are still the ones it was listed for, and loads and commits it like any batch.
class NextBatch {
 public:
  NextBatch(std::shared_ptr<source::FileSource> source, load::SourceKind kind,
            source::ListOptions list, load::FetchOptions fetch, std::string work_root,
            int64_t epoch)
      : source_(std::move(source)), start_after_(list.start_after), epoch_(epoch) {
    lister_ = std::thread([this, kind, list, fetch, root = std::move(work_root)] {
      listing_ = source_->List(list);
      if (!listing_.ok() || listing_->files.empty()) return;
      auto work = load::WorkDir::Create(root);
      if (!work.ok()) return;
      work_ = std::move(work).value();
      fetcher_ = std::make_unique<load::BatchFetcher>(*source_, kind, listing_->files, fetch,
                                                      work_->path());
    });
  }
  ~NextBatch() {
    if (lister_.joinable()) lister_.join();
    fetcher_.reset();  // before the directory it writes to
  }
  NextBatch(const NextBatch&) = delete;
  NextBatch& operator=(const NextBatch&) = delete;

  // The listing and its downloads, once listed, if they are for this epoch and offset; else
  // nullptr. The fetcher lives as long as this object.
  load::BatchFetcher* Take(int64_t epoch, const std::string& offset, source::Listing* listing) {
    if (lister_.joinable()) lister_.join();
    if (epoch != epoch_ || offset != start_after_ || fetcher_ == nullptr) return nullptr;
    *listing = *listing_;  // a copy: the fetcher reads the files of listing_
    return fetcher_.get();
  }

 private:
  const std::shared_ptr<source::FileSource> source_;  // the fetcher's threads read it
  const std::string start_after_;
  const int64_t epoch_;
  // Written by lister_ before it ends; read after it is joined.
  Result<source::Listing> listing_ = Status::Unavailable("not listed yet");
  std::unique_ptr<load::WorkDir> work_;
  std::unique_ptr<load::BatchFetcher> fetcher_;
  std::thread lister_;
};

}  // namespace

struct JobEntry {
  JobRecord record;
  std::string insert_sql;  // credentials included
  InsertAnalysis analysis;
  load::FileFunctionOptions options;
  std::shared_ptr<source::FileSource> source;
  bool task_running = false;
  engine::Connection* task_conn = nullptr;  // the worker's connection while a task runs
  Steady next_run{};
  bool auto_resume_pending = false;
  Steady auto_resume_at{};
  std::deque<TaskRecord> history;  // oldest first; includes the running task
  // Files at or below the offset still to load: late files and retries, found by the last
  // reconciliation listing.
  std::deque<source::FileInfo> pending;
  Steady next_reconcile{};
  int64_t lag_files = 0;
  int64_t lag_bytes = 0;
};

class JobService::Impl final : public JobSnapshotSource {
 public:
  explicit Impl(JobServiceConfig config) : config_(std::move(config)) {}
  ~Impl() override { Stop(); }

  Status Init();
  void Stop();
  Result<std::string> Execute(std::string_view statement, const std::string& database);
  Status RegisterViews(sql::TableFunctionRegistry* registry);

  std::vector<JobRow> SnapshotJobs() override;
  std::vector<TaskRecord> SnapshotTasks() override;

 private:
  // A job definition checked and ready to run.
  struct Prepared {
    JobProperties properties;
    InsertAnalysis analysis;
    load::FileFunctionOptions options;
    std::shared_ptr<source::FileSource> source;
  };
  Result<Prepared> PrepareDefinition(const PropertyMap& properties, const std::string& insert_sql,
                                     const std::string& database, engine::Connection& conn);

  Result<std::string> Create(const CreateJobStatement& stmt, const std::string& database);
  Result<std::string> Control(const ControlJobStatement& stmt);
  Result<std::string> Alter(const AlterJobStatement& stmt);
  Result<std::string> Retry(const AlterJobStatement& stmt);
  // Lists the files at or below the offset and compares them with the ledger: files it lacks
  // become pending (late_files = load) or SKIPPED (ignore); RETRYING files become pending;
  // LOADED files whose ETag or size changed are reported, not reloaded.
  Status Reconcile(JobEntry* entry, const JobRecord& snapshot, source::FileSource& source,
                   engine::Connection* conn);

  JobEntry* FindLocked(std::string_view name) REQUIRES(mu_);
  // Bumps the epoch so the running task cannot commit, interrupts it, and waits until it ends.
  void StopTaskLocked(JobEntry* entry) REQUIRES(mu_);
  // Writes the job row. Every write of a job row happens under mu_ and while no task of the job
  // is between its offset check and its commit, so writers never conflict.
  Status PersistLocked(engine::Connection& conn, const JobRecord& record,
                       const std::string& insert_sql = "") REQUIRES(mu_);

  void WorkerLoop(engine::Connection* conn);
  // Picks a job whose turn it is; nullptr when stopping.
  JobEntry* NextDueLocked() REQUIRES(mu_);
  load::FetchOptions FetchOptionsFor(const load::FileFunctionOptions& options) const {
    load::FetchOptions fetch;
    fetch.compression = options.compression;
    fetch.parallelism = config_.download_parallelism;
    fetch.copy_local = true;  // the ledger records the version that was read
    return fetch;
  }
  // Runs a task of the job, and more at once while each leaves files for the next and read
  // ahead (NextBatch), for up to kTaskChain.
  void RunTask(JobEntry* entry, engine::Connection* conn);
  // One task; true when it committed a batch and read the next one ahead into *next.
  bool RunOneTask(JobEntry* entry, engine::Connection* conn, std::unique_ptr<NextBatch>* next);
  // `prefetched`: the batch's downloads already under way (NextBatch), or nullptr to start them.
  Result<LoadStatistic> LoadBatch(JobEntry* entry, const JobRecord& snapshot,
                                  const std::vector<source::FileInfo>& files, bool advances,
                                  TaskRecord* task, engine::Connection* conn, TaskFailure* failure,
                                  load::BatchFetcher* prefetched);
  Result<LoadStatistic> CommitBatch(JobEntry* entry, const JobRecord& snapshot,
                                    const std::string& new_offset, engine::Transaction txn,
                                    const LoadStatistic& stats,
                                    const std::vector<LedgerEntry>& ledger,
                                    const std::string& first_error, TaskRecord* task,
                                    engine::Connection* conn, TaskFailure* failure);
  void FailTaskLocked(JobEntry* entry, TaskRecord* task, const TaskFailure& failure,
                      engine::Connection* conn) REQUIRES(mu_);
  void UpdateHistoryLocked(JobEntry* entry, const TaskRecord& task) REQUIRES(mu_);

  JobServiceConfig config_;
  std::unique_ptr<engine::Connection> control_conn_;  // used under control_mu_
  Mutex control_mu_;                                  // serializes job statements
  Mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, std::unique_ptr<JobEntry>> jobs_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::unique_ptr<engine::Connection>> worker_conns_;
  std::vector<std::thread> workers_;
};

// ---------------------------------------------------------------------------------------------
// Start-up and shutdown

Status JobService::Impl::Init() {
  MR_ASSIGN_OR_RETURN(control_conn_, config_.db->Connect());
  MR_RETURN_IF_ERROR(catalog::Init(*control_conn_));
  MR_ASSIGN_OR_RETURN(auto stored, catalog::LoadJobs(*control_conn_));
  for (catalog::StoredJob& job : stored) {
    auto entry = std::make_unique<JobEntry>();
    entry->record = std::move(job.record);
    entry->insert_sql = std::move(job.insert_sql);
    MR_ASSIGN_OR_RETURN(auto tasks,
                        catalog::LoadTasks(*control_conn_, entry->record.id, config_.task_history));
    for (TaskRecord& t : tasks) {
      t.job_name = entry->record.name;
      entry->history.push_back(std::move(t));
    }
    auto prepared = PrepareDefinition(entry->record.properties.given, entry->insert_sql,
                                      entry->record.database, *control_conn_);
    if (!prepared.ok()) {
      // The job stays visible and paused with the reason, rather than blocking start-up.
      entry->record.state = JobState::kPaused;
      entry->record.error_code = std::string(kCannotResumeErr);
      entry->record.error_msg = prepared.status().message();
    } else {
      entry->analysis = std::move(prepared->analysis);
      entry->options = std::move(prepared->options);
      entry->source = std::move(prepared->source);
    }
    entry->next_run = config_.clock->SteadyNow();
    entry->next_reconcile = config_.clock->SteadyNow();
    if (entry->record.state == JobState::kPaused && !entry->record.manual_pause &&
        entry->record.error_code != kTooManyFailureRowsErr &&
        entry->record.error_code != kCannotResumeErr &&
        entry->record.auto_resume_count < config_.auto_resume_limit) {
      entry->auto_resume_pending = true;
      entry->auto_resume_at = config_.clock->SteadyNow();
    }
    MR_LOG(kInfo) << "job " << entry->record.name << " (id " << entry->record.id << ") is "
                  << JobStateName(entry->record.state) << " at offset '"
                  << entry->record.current_offset << "'";
    MutexLock lock(&mu_);
    jobs_[entry->record.id] = std::move(entry);
  }
  for (int i = 0; i < config_.workers; ++i) {
    MR_ASSIGN_OR_RETURN(auto conn, config_.db->Connect());
    worker_conns_.push_back(std::move(conn));
  }
  for (auto& conn : worker_conns_) {
    workers_.emplace_back([this, c = conn.get()] { WorkerLoop(c); });
  }
  return Status::Ok();
}

void JobService::Impl::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    for (auto& [id, entry] : jobs_) {
      if (entry->task_conn != nullptr) entry->task_conn->Interrupt();
    }
    cv_.notify_all();
  }
  for (auto& t : workers_)
    t.join();
  workers_.clear();
}

// ---------------------------------------------------------------------------------------------
// Statements

Result<std::string> JobService::Impl::Execute(std::string_view statement,
                                              const std::string& database) {
  MR_ASSIGN_OR_RETURN(JobStatement parsed, ParseJobStatement(statement));
  MutexLock control(&control_mu_);
  if (auto* create = std::get_if<CreateJobStatement>(&parsed)) return Create(*create, database);
  if (auto* alter = std::get_if<AlterJobStatement>(&parsed)) return Alter(*alter);
  return Control(std::get<ControlJobStatement>(parsed));
}

Result<JobService::Impl::Prepared> JobService::Impl::PrepareDefinition(
    const PropertyMap& properties, const std::string& insert_sql, const std::string& database,
    engine::Connection& conn) {
  Prepared p;
  MR_ASSIGN_OR_RETURN(p.properties, JobProperties::Parse(properties));
  MR_ASSIGN_OR_RETURN(p.analysis, AnalyzeInsert(insert_sql));
  MR_ASSIGN_OR_RETURN(p.options,
                      load::ParseFileFunctionArgs(KindOf(p.analysis.source), p.analysis.args));
  MR_ASSIGN_OR_RETURN(auto source, config_.make_source(p.options));
  p.source = std::move(source);
  // The target table must exist now; a typo should fail the statement, not the first task.
  MR_RETURN_IF_ERROR(UseDatabase(conn, database));
  Status target = conn.Execute("SELECT * FROM " + p.analysis.target_table + " LIMIT 0");
  if (!target.ok()) {
    return Status(target.code(),
                  "target table " + p.analysis.target_table + ": " + target.message());
  }
  return p;
}

Result<std::string> JobService::Impl::Create(const CreateJobStatement& stmt,
                                             const std::string& database) {
  {
    MutexLock lock(&mu_);
    if (FindLocked(stmt.name) != nullptr) {
      return Status::AlreadyExists("job " + stmt.name + " already exists");
    }
  }
  MR_ASSIGN_OR_RETURN(
      Prepared p, PrepareDefinition(stmt.properties, stmt.insert_sql, database, *control_conn_));
  auto entry = std::make_unique<JobEntry>();
  JobRecord& r = entry->record;
  MR_ASSIGN_OR_RETURN(r.id, catalog::NextJobId(*control_conn_));
  r.name = stmt.name;
  r.comment = stmt.comment;
  r.database = database;
  r.properties = std::move(p.properties);
  r.masked_sql = MaskSecrets(stmt.insert_sql, p.analysis);
  r.definition = r.masked_sql;
  r.state = JobState::kRunning;
  r.create_time_us = MicrosSinceEpoch(config_.clock->WallNow());
  r.current_offset = r.properties.offset;
  r.reconcile_floor = r.properties.offset;
  entry->insert_sql = stmt.insert_sql;
  entry->analysis = std::move(p.analysis);
  entry->options = std::move(p.options);
  entry->source = std::move(p.source);
  entry->next_run = config_.clock->SteadyNow();
  entry->next_reconcile = entry->next_run;
  MR_RETURN_IF_ERROR(catalog::InsertJob(*control_conn_, r, entry->insert_sql));
  MR_LOG(kInfo) << "created job " << r.name << " (id " << r.id << ") reading "
                << entry->source->Describe();
  const int64_t id = r.id;
  MutexLock lock(&mu_);
  jobs_[id] = std::move(entry);
  cv_.notify_all();
  return "job " + stmt.name + " created with id " + std::to_string(id);
}

Result<std::string> JobService::Impl::Control(const ControlJobStatement& stmt) {
  MutexLock lock(&mu_);
  JobEntry* entry = FindLocked(stmt.name);
  if (entry == nullptr) {
    if (stmt.if_exists) return "job " + stmt.name + " does not exist";
    return Status::NotFound("job " + stmt.name + " does not exist");
  }
  const JobState state = entry->record.state;
  if (stmt.action == JobControl::kPause && state != JobState::kRunning &&
      state != JobState::kPending && !(state == JobState::kPaused && !entry->record.manual_pause)) {
    return Status::FailedPrecondition("job " + stmt.name + " is " +
                                      std::string(JobStateName(state)) +
                                      "; only a RUNNING job can be paused");
  }
  if (stmt.action == JobControl::kResume) {
    if (state != JobState::kPaused) {
      return Status::FailedPrecondition("job " + stmt.name + " is " +
                                        std::string(JobStateName(state)) +
                                        "; only a PAUSED job can be resumed");
    }
    if (!entry->source) {
      return Status::FailedPrecondition("job " + stmt.name +
                                        " cannot resume: " + entry->record.error_msg);
    }
  }
  StopTaskLocked(entry);
  if (stmt.action == JobControl::kDrop) {
    MR_RETURN_IF_ERROR(catalog::DeleteJob(*control_conn_, entry->record.id));
    MR_LOG(kInfo) << "dropped job " << stmt.name;
    jobs_.erase(entry->record.id);
    return "job " + stmt.name + " dropped";
  }
  JobRecord after = entry->record;
  if (stmt.action == JobControl::kPause) {
    after.state = JobState::kPaused;
    after.manual_pause = true;
    after.error_code = std::string(kManualPauseErr);
    after.error_msg = "paused by user";
    after.runtime_msg.clear();
  } else {
    after.state = JobState::kRunning;
    after.manual_pause = false;
    after.error_code.clear();
    after.error_msg.clear();
    after.runtime_msg.clear();
    after.auto_resume_count = 0;
  }
  MR_RETURN_IF_ERROR(PersistLocked(*control_conn_, after));
  entry->record = after;
  entry->auto_resume_pending = false;
  entry->next_run = config_.clock->SteadyNow();
  entry->next_reconcile = entry->next_run;
  cv_.notify_all();
  MR_LOG(kInfo) << "job " << after.name << " is " << JobStateName(after.state);
  return "job " + stmt.name + " " + (stmt.action == JobControl::kPause ? "paused" : "resumed");
}

Result<std::string> JobService::Impl::Retry(const AlterJobStatement& stmt) {
  MutexLock lock(&mu_);
  JobEntry* entry = FindLocked(stmt.name);
  if (entry == nullptr) return Status::NotFound("job " + stmt.name + " does not exist");
  if (entry->record.state == JobState::kStopped) {
    return Status::FailedPrecondition("job " + stmt.name + " is STOPPED");
  }
  MR_ASSIGN_OR_RETURN(auto quarantined,
                      catalog::LedgerEntries(*control_conn_, entry->record.id,
                                             std::string(FileStateName(FileState::kQuarantined))));
  std::vector<std::string> keys;
  if (stmt.retry_all) {
    for (const LedgerEntry& e : quarantined)
      keys.push_back(e.key);
  } else {
    for (const std::string& key : stmt.retry_files) {
      const bool found = std::any_of(quarantined.begin(), quarantined.end(),
                                     [&](const LedgerEntry& e) { return e.key == key; });
      if (!found) {
        return Status::NotFound("job " + stmt.name + " has no quarantined file '" + key + "'");
      }
      keys.push_back(key);
    }
  }
  // RETRYING files are loaded again by the next reconciliation, like late files; the state
  // survives a restart.
  for (const std::string& key : keys) {
    MR_RETURN_IF_ERROR(catalog::SetLedgerState(*control_conn_, entry->record.id, key,
                                               FileState::kRetrying, "retry requested"));
  }
  entry->next_reconcile = config_.clock->SteadyNow();
  entry->next_run = std::min(entry->next_run, entry->next_reconcile);
  cv_.notify_all();
  return "job " + stmt.name + ": " + std::to_string(keys.size()) + " file(s) will be loaded again";
}

Result<std::string> JobService::Impl::Alter(const AlterJobStatement& stmt) {
  if (stmt.retry_all || !stmt.retry_files.empty()) return Retry(stmt);
  JobRecord current;
  std::string insert_sql;
  InsertAnalysis old_analysis;
  {
    MutexLock lock(&mu_);
    JobEntry* entry = FindLocked(stmt.name);
    if (entry == nullptr) return Status::NotFound("job " + stmt.name + " does not exist");
    if (entry->record.state != JobState::kPaused) {
      return Status::FailedPrecondition("job " + stmt.name + " is " +
                                        std::string(JobStateName(entry->record.state)) +
                                        "; only a PAUSED job can be altered (PAUSE JOB first)");
    }
    current = entry->record;
    insert_sql = entry->insert_sql;
    old_analysis = entry->analysis;
  }
  PropertyMap merged = current.properties.given;
  for (const auto& [key, value] : stmt.properties)
    merged[key] = value;
  const std::string new_sql = stmt.insert_sql.empty() ? insert_sql : stmt.insert_sql;
  if (merged == current.properties.given && new_sql == insert_sql) {
    return Status::InvalidArgument("ALTER JOB " + stmt.name + " changes nothing");
  }
  MR_ASSIGN_OR_RETURN(Prepared p,
                      PrepareDefinition(merged, new_sql, current.database, *control_conn_));
  if (!stmt.insert_sql.empty()) {
    auto old_uri =
        old_analysis.args.find(old_analysis.source == SourceType::kS3 ? "uri" : "file_path");
    auto new_uri = p.analysis.args.find(p.analysis.source == SourceType::kS3 ? "uri" : "file_path");
    if (NormalizeName(p.analysis.target_table) != NormalizeName(old_analysis.target_table)) {
      return Status::InvalidArgument("ALTER JOB " + stmt.name +
                                     ": the target table cannot change (it is " +
                                     old_analysis.target_table + ")");
    }
    if (p.analysis.source != old_analysis.source) {
      return Status::InvalidArgument("ALTER JOB " + stmt.name + ": the source kind cannot change");
    }
    if (old_uri == old_analysis.args.end() || new_uri == p.analysis.args.end() ||
        old_uri->second != new_uri->second) {
      return Status::InvalidArgument(
          "ALTER JOB " + stmt.name + ": the uri cannot change (it is " +
          (old_uri == old_analysis.args.end() ? std::string("?") : old_uri->second) + ")");
    }
  }
  MutexLock lock(&mu_);
  JobEntry* entry = FindLocked(stmt.name);
  if (entry == nullptr || entry->record.state != JobState::kPaused) {
    return Status::Aborted("job " + stmt.name + " changed while being altered; try again");
  }
  StopTaskLocked(entry);
  JobRecord after = entry->record;
  after.properties = std::move(p.properties);
  if (stmt.properties.count("offset") != 0) {
    after.current_offset = after.properties.offset;
    after.reconcile_floor = after.properties.offset;
  }
  after.masked_sql = MaskSecrets(new_sql, p.analysis);
  after.definition = after.masked_sql;
  MR_RETURN_IF_ERROR(PersistLocked(*control_conn_, after, new_sql));
  entry->record = after;
  entry->insert_sql = new_sql;
  entry->analysis = std::move(p.analysis);
  entry->options = std::move(p.options);
  entry->source = std::move(p.source);
  entry->pending.clear();
  entry->next_reconcile = config_.clock->SteadyNow();
  MR_LOG(kInfo) << "altered job " << after.name;
  return "job " + stmt.name + " altered";
}

JobEntry* JobService::Impl::FindLocked(std::string_view name) {
  for (auto& [id, entry] : jobs_) {
    if (entry->record.name == name) return entry.get();
  }
  return nullptr;
}

void JobService::Impl::StopTaskLocked(JobEntry* entry) {
  ++entry->record.epoch;
  while (entry->task_running) {
    if (entry->task_conn != nullptr) entry->task_conn->Interrupt();
    WaitOnFor(cv_, &mu_, std::chrono::milliseconds(50),
              [&]() NO_THREAD_SAFETY_ANALYSIS { return !entry->task_running; });
  }
}

Status JobService::Impl::PersistLocked(engine::Connection& conn, const JobRecord& record,
                                       const std::string& insert_sql) {
  return catalog::SaveJob(conn, record, insert_sql);
}

// ---------------------------------------------------------------------------------------------
// Scheduler

JobEntry* JobService::Impl::NextDueLocked() {
  while (!stopping_) {
    const Steady now = config_.clock->SteadyNow();
    JobEntry* best = nullptr;
    Steady earliest = Steady::max();
    for (auto& [id, entry] : jobs_) {
      if (entry->task_running || !entry->source) continue;
      Steady due = Steady::max();
      if (entry->record.state == JobState::kRunning) {
        due = entry->next_run;
      } else if (entry->record.state == JobState::kPaused && entry->auto_resume_pending) {
        due = entry->auto_resume_at;
      }
      if (due <= now && (best == nullptr || due < earliest)) best = entry.get();
      earliest = std::min(earliest, due);
    }
    if (best != nullptr) return best;
    // Wake at the next due time; the cap keeps an injected ManualClock's jumps visible.
    const auto wait =
        earliest == Steady::max()
            ? std::chrono::milliseconds(100)
            : std::min<std::chrono::milliseconds>(
                  std::chrono::milliseconds(100),
                  std::chrono::duration_cast<std::chrono::milliseconds>(earliest - now) +
                      std::chrono::milliseconds(1));
    WaitOnFor(cv_, &mu_, wait, [] { return false; });
  }
  return nullptr;
}

void JobService::Impl::WorkerLoop(engine::Connection* conn) {
  while (true) {
    JobEntry* entry = nullptr;
    {
      MutexLock lock(&mu_);
      entry = NextDueLocked();
      if (entry == nullptr) return;
      entry->auto_resume_pending = false;
      if (entry->record.state == JobState::kPaused) {
        JobRecord after = entry->record;
        ++after.epoch;
        ++after.auto_resume_count;
        after.state = JobState::kRunning;
        after.runtime_msg = "resumed automatically after: " + after.error_msg;
        after.error_code.clear();
        after.error_msg.clear();
        Status status = PersistLocked(*conn, after);
        if (!status.ok()) {
          MR_LOG(kError) << "job " << after.name << " cannot resume: " << status.ToString();
          continue;
        }
        entry->record = after;
        entry->next_run = config_.clock->SteadyNow();
        MR_LOG(kInfo) << "job " << after.name << " resumed automatically (attempt "
                      << after.auto_resume_count << ")";
      }
      entry->task_running = true;
      entry->task_conn = conn;
    }
    RunTask(entry, conn);
    MutexLock lock(&mu_);
    entry->task_running = false;
    entry->task_conn = nullptr;
    cv_.notify_all();
  }
}

void JobService::Impl::UpdateHistoryLocked(JobEntry* entry, const TaskRecord& task) {
  for (auto it = entry->history.rbegin(); it != entry->history.rend(); ++it) {
    if (it->task_id == task.task_id) {
      *it = task;
      return;
    }
  }
  entry->history.push_back(task);
  while (static_cast<int>(entry->history.size()) > config_.task_history)
    entry->history.pop_front();
}

void JobService::Impl::RunTask(JobEntry* entry, engine::Connection* conn) {
  int64_t epoch = 0;
  {
    MutexLock lock(&mu_);
    epoch = entry->record.epoch;
  }
  std::unique_ptr<NextBatch> next;
  const Steady until = config_.clock->SteadyNow() + kTaskChain;
  while (RunOneTask(entry, conn, &next) && next != nullptr) {
    // A PAUSE, ALTER or DROP bumps the epoch before it waits for this task to end: the chain
    // must end with it, not start a task under the new epoch.
    MutexLock lock(&mu_);
    if (stopping_ || entry->record.epoch != epoch || entry->record.state != JobState::kRunning ||
        config_.clock->SteadyNow() >= until) {
      break;
    }
  }
}

bool JobService::Impl::RunOneTask(JobEntry* entry, engine::Connection* conn,
                                  std::unique_ptr<NextBatch>* next) {
  // A read ahead not taken by this task is stale after it: dropped on return.
  std::unique_ptr<NextBatch> ahead = std::move(*next);
  JobRecord snapshot;
  std::shared_ptr<source::FileSource> source;
  load::FetchOptions fetch;  // for the read ahead
  load::SourceKind kind = load::SourceKind::kS3;
  {
    MutexLock lock(&mu_);
    snapshot = entry->record;
    source = entry->source;
    fetch = FetchOptionsFor(entry->options);
    kind = KindOf(entry->analysis.source);
  }
  const JobProperties& props = snapshot.properties;
  bool reconcile_due = false;
  {
    MutexLock lock(&mu_);
    reconcile_due = config_.clock->SteadyNow() >= entry->next_reconcile;
  }
  if (reconcile_due) {
    Status reconciled = Reconcile(entry, snapshot, *source, conn);
    if (!reconciled.ok()) {
      // Late files wait for the next reconciliation; new files are not held up by it.
      MR_LOG(kWarning) << "job " << snapshot.name
                       << ": reconciliation failed: " << reconciled.message();
    }
  }
  // Late files and retries first: they are older than anything after the offset.
  std::vector<source::FileInfo> below_offset;
  {
    MutexLock lock(&mu_);
    uint64_t bytes = 0;
    while (!entry->pending.empty() &&
           below_offset.size() < static_cast<size_t>(props.max_batch_files) &&
           bytes < static_cast<uint64_t>(props.max_batch_bytes)) {
      bytes += entry->pending.front().size;
      below_offset.push_back(std::move(entry->pending.front()));
      entry->pending.pop_front();
    }
  }

  source::ListOptions list;
  list.start_after = snapshot.current_offset;
  list.max_files = static_cast<size_t>(props.max_batch_files);
  list.max_bytes = static_cast<uint64_t>(props.max_batch_bytes);

  Result<source::Listing> listing = source::Listing();
  load::BatchFetcher* prefetched = nullptr;
  if (!below_offset.empty()) {
    listing->files = std::move(below_offset);
    listing->more = true;  // new files may wait after the offset: look again at once
  } else if (ahead != nullptr &&
             (prefetched = ahead->Take(snapshot.epoch, snapshot.current_offset, &*listing))) {
    // Listed and downloading since the last task.
  } else {
    listing = source->List(list);
  }
  for (int attempt = 1; !listing.ok() && attempt <= config_.task_retries; ++attempt) {
    MR_LOG(kWarning) << "job " << snapshot.name << ": listing failed (attempt " << attempt
                     << "): " << listing.status().message();
    config_.clock->SleepFor(config_.retry_backoff * attempt);
    listing = source->List(list);
  }
  if (!listing.ok()) {
    MutexLock lock(&mu_);
    if (entry->record.epoch != snapshot.epoch) return false;
    TaskFailure failure{listing.status(), std::string(kGetRemoteDataErr)};
    FailTaskLocked(entry, nullptr, failure, conn);
    return false;
  }

  if (listing->files.empty()) {
    MutexLock lock(&mu_);
    if (entry->record.epoch != snapshot.epoch) return false;
    if (listing->last_matching_key > entry->record.end_offset) {
      entry->record.end_offset = listing->last_matching_key;
    }
    entry->lag_files = static_cast<int64_t>(listing->unsettled_files);
    entry->lag_bytes = 0;
    if (listing->unsettled_files > 0) {
      // Files are still being written: look again soon rather than after max_interval, and a
      // ONCE job is not finished while they are pending.
      entry->next_run = config_.clock->SteadyNow() + kUnsettledPoll;
      return false;
    }
    entry->next_run = config_.clock->SteadyNow() + std::chrono::seconds(props.max_interval_seconds);
    if (props.ingestion_mode == IngestionMode::kOnce) {
      JobRecord finished = entry->record;
      finished.state = JobState::kFinished;
      ++finished.epoch;
      Status status = PersistLocked(*conn, finished);
      if (!status.ok()) {
        MR_LOG(kError) << "job " << finished.name << ": " << status.ToString();
        return false;
      }
      entry->record = finished;
      MR_LOG(kInfo) << "job " << finished.name << " FINISHED (ingestion_mode ONCE)";
    }
    return false;
  }

  // A batch of late files or retries does not move the offset.
  const bool advances = listing->files.front().key > snapshot.current_offset;
  TaskRecord task;
  {
    MutexLock lock(&mu_);
    if (entry->record.epoch != snapshot.epoch) return false;
    task.task_id = entry->record.next_task_id++;
    snapshot.next_task_id = entry->record.next_task_id;
    task.job_id = snapshot.id;
    task.job_name = snapshot.name;
    task.state = TaskState::kRunning;
    task.create_time_us = MicrosSinceEpoch(config_.clock->WallNow());
    task.start_time_us = task.create_time_us;
    task.start_file = listing->files.front().key;
    task.end_file = listing->files.back().key;
    entry->lag_files = static_cast<int64_t>(listing->files.size());
    entry->lag_bytes = 0;
    for (const auto& f : listing->files)
      entry->lag_bytes += static_cast<int64_t>(f.size);
    if (listing->last_matching_key > entry->record.end_offset) {
      entry->record.end_offset = listing->last_matching_key;
    }
    snapshot.end_offset = entry->record.end_offset;
    UpdateHistoryLocked(entry, task);
  }

  uint64_t batch_bytes = 0;
  for (const auto& f : listing->files)
    batch_bytes += f.size;
  if (advances && listing->more && batch_bytes <= kReadAheadMaxBytes) {
    source::ListOptions after = list;
    after.start_after = listing->files.back().key;
    *next =
        std::make_unique<NextBatch>(source, kind, after, fetch, config_.work_root, snapshot.epoch);
  }

  TaskFailure failure;
  for (int attempt = 0; attempt <= config_.task_retries; ++attempt) {
    if (attempt > 0) {
      MR_LOG(kWarning) << "job " << snapshot.name << " task " << task.Label() << " failed (attempt "
                       << attempt << "), retrying: " << failure.status.message();
      config_.clock->SleepFor(config_.retry_backoff * attempt);
    }
    {
      MutexLock lock(&mu_);
      if (entry->record.epoch != snapshot.epoch || stopping_) {
        failure.status = Status::Cancelled("the job was paused, altered or dropped");
        break;
      }
    }
    auto stats = LoadBatch(entry, snapshot, listing->files, advances, &task, conn, &failure,
                           attempt == 0 ? prefetched : nullptr);
    if (stats.ok()) {
      MR_LOG(kInfo) << "job " << snapshot.name << " task " << task.Label() << " loaded "
                    << stats->file_number << " files, " << stats->scanned_rows
                    << " rows, offset now '" << task.end_file << "'";
      const bool more = listing->more || listing->unsettled_files > 0;
      MutexLock lock(&mu_);
      entry->next_run =
          more ? config_.clock->SteadyNow()
               : config_.clock->SteadyNow() + std::chrono::seconds(props.max_interval_seconds);
      if (!more && props.ingestion_mode == IngestionMode::kOnce) {
        entry->next_run = config_.clock->SteadyNow();  // one more poll to see it is drained
      }
      return *next != nullptr;
    }
    // Cancellation and too many bad rows are not transient: retrying cannot help.
    if (failure.status.code() == StatusCode::kCancelled || failure.code == kTooManyFailureRowsErr) {
      break;
    }
  }

  MutexLock lock(&mu_);
  if (failure.status.code() == StatusCode::kCancelled || entry->record.epoch != snapshot.epoch) {
    task.state = TaskState::kCanceled;
    task.error_msg = failure.status.message();
    task.finish_time_us = MicrosSinceEpoch(config_.clock->WallNow());
    ++entry->record.canceled_tasks;
    UpdateHistoryLocked(entry, task);
    return false;
  }
  FailTaskLocked(entry, &task, failure, conn);
  return false;
}

Result<LoadStatistic> JobService::Impl::LoadBatch(JobEntry* entry, const JobRecord& snapshot,
                                                  const std::vector<source::FileInfo>& files,
                                                  bool advances, TaskRecord* task,
                                                  engine::Connection* conn, TaskFailure* failure,
                                                  load::BatchFetcher* prefetched) {
  auto fail = [&](Status status, std::string_view code) -> Status {
    failure->status = status;
    failure->code = std::string(code);
    return status;
  };
  std::shared_ptr<source::FileSource> source;
  LoadSpec spec;
  {
    MutexLock lock(&mu_);
    source = entry->source;
    spec.options = entry->options;
    spec.analysis = entry->analysis;
    spec.insert_sql = entry->insert_sql;
  }
  spec.job_id = snapshot.id;
  spec.task_id = task->task_id;
  spec.strict = snapshot.properties.strict;
  spec.now_us = MicrosSinceEpoch(config_.clock->WallNow());
  const bool skip_bad_files = snapshot.properties.on_error == OnError::kSkipFile;

  // Files download in the background while earlier ones load; the first round waits for each.
  std::unique_ptr<load::WorkDir> work;
  std::unique_ptr<load::BatchFetcher> own_fetcher;
  load::BatchFetcher* fetcher = prefetched;
  if (fetcher == nullptr) {
    auto created = load::WorkDir::Create(config_.work_root);
    if (!created.ok()) return fail(created.status(), kLoadErr);
    work = std::move(created).value();
    own_fetcher = std::make_unique<load::BatchFetcher>(*source, KindOf(spec.analysis.source), files,
                                                       FetchOptionsFor(spec.options), work->path());
    fetcher = own_fetcher.get();
  }
  // Files set aside for this task (on_error = skip_file), with the reason.
  std::map<size_t, std::string> quarantined;
  bool first_fetched = true;
  // The fetched file i, or why the task fails; a file that could not be fetched is quarantined
  // (skip_file) and reported as "".
  auto readable = [&](size_t i) -> Result<std::string> {
    const load::FetchedFile& fetched = fetcher->Wait(i);
    if (first_fetched && config_.fail_points != nullptr) {
      if (Status s = config_.fail_points->Check("task.after_download"); !s.ok()) {
        return fail(s, kLoadErr);
      }
    }
    first_fetched = false;
    if (fetched.status.ok()) return fetched.path;
    if (!skip_bad_files) {
      return fail(fetched.status, fetched.download_failed ? kGetRemoteDataErr : kLoadErr);
    }
    quarantined[i] = fetched.status.message();
    return std::string();
  };
  if (Status s = UseDatabase(*conn, snapshot.database); !s.ok()) return fail(s, kLoadErr);

  // Small files of one shape load many to a statement in fast rounds (BatchLoader::CanGroup).
  bool group_small_files = BatchLoader::CanGroup(spec);
  std::vector<std::optional<std::vector<std::string>>> shapes(files.size());
  // The shape of file i when it may join a group, else nullptr.
  auto groupable = [&](size_t i, const std::string& path) -> const std::vector<std::string>* {
    if (files[i].size == 0 || files[i].size > kGroupFileBytes || path.empty()) return nullptr;
    if (!shapes[i]) {
      auto shape = load::CsvShape(spec.options, path);
      shapes[i] = shape.ok() ? std::move(shape).value() : std::vector<std::string>();
    }
    return shapes[i]->empty() ? nullptr : &*shapes[i];
  };

  // Fast first; a row-level error switches the whole batch to the careful load, and a bad file
  // (with skip_file) is set aside and the batch loaded again without it; a group of files that
  // fails otherwise is loaded again file by file, which names the bad one. Each round starts a
  // fresh transaction because a DuckDB error aborts the one it happens in.
  bool careful = false;
  // Rounds: at most one that ungroups, one that turns careful, one per quarantined file and the
  // one that commits.
  for (size_t round = 0; round < files.size() + 3; ++round) {
    auto txn = conn->Begin();
    if (!txn.ok()) return fail(txn.status(), kLoadErr);
    BatchLoader loader(conn, spec);
    LoadStatistic stats;
    std::vector<LedgerEntry> ledger;
    std::string first_error;
    Status file_error;
    size_t bad_file = 0;
    bool switch_to_careful = false;
    bool ungroup = false;
    auto record = [&](size_t i, FileState state, const FileLoad& loaded, std::string error) {
      ledger.push_back(LedgerEntry{snapshot.id, files[i].key, files[i].etag,
                                   static_cast<int64_t>(files[i].size), state, task->task_id,
                                   loaded.rows, spec.now_us, std::move(error)});
      if (state != FileState::kLoaded) return;
      stats.scanned_rows += loaded.rows + loaded.filtered;
      stats.filtered_rows += loaded.filtered;
      stats.load_bytes += static_cast<int64_t>(files[i].size);
      stats.file_size += static_cast<int64_t>(files[i].size);
      stats.file_number += 1;
      if (first_error.empty()) first_error = loaded.first_error;
    };
    size_t i = 0;
    while (i < files.size()) {
      auto path = readable(i);
      if (!path.ok()) return path.status();
      if (auto q = quarantined.find(i); q != quarantined.end()) {
        record(i, FileState::kQuarantined, FileLoad(), q->second);
        ++i;
        continue;
      }
      std::vector<size_t> group{i};
      std::vector<std::string> paths{*path};
      const std::vector<std::string>* shape =
          !careful && group_small_files ? groupable(i, *path) : nullptr;
      for (uint64_t bytes = files[i].size;
           shape != nullptr && group.back() + 1 < files.size() && group.size() < kGroupMaxFiles;) {
        const size_t j = group.back() + 1;
        if (bytes + files[j].size > kGroupMaxBytes) break;
        auto next = readable(j);
        if (!next.ok()) return next.status();
        const std::vector<std::string>* next_shape =
            quarantined.count(j) > 0 ? nullptr : groupable(j, *next);
        if (next_shape == nullptr || *next_shape != *shape) break;
        group.push_back(j);
        paths.push_back(std::move(next).value());
        bytes += files[j].size;
      }
      Result<std::vector<FileLoad>> loaded = std::vector<FileLoad>();
      if (group.size() > 1) {
        loaded = loader.LoadGroupFast(paths);
      } else {
        auto one = careful ? loader.LoadCareful(files[i].key, *path)
                           : loader.LoadFast(files[i].key, *path);
        if (one.ok())
          loaded->push_back(*one);
        else
          loaded = one.status();
      }
      if (!loaded.ok()) {
        if (loaded.status().code() == StatusCode::kCancelled) {
          file_error = loaded.status();  // interrupted: returned as it is, below
          bad_file = i;
        } else if (!careful && BatchLoader::IsRowLevelError(loaded.status())) {
          switch_to_careful = true;
        } else if (group.size() > 1) {
          MR_LOG(kInfo) << "job " << snapshot.name << ": loading " << group.size()
                        << " files one by one: " << loaded.status().message();
          ungroup = true;
        } else {
          file_error = loaded.status();
          bad_file = i;
        }
        break;
      }
      for (size_t k = 0; k < group.size(); ++k)
        record(group[k], FileState::kLoaded, (*loaded)[k], "");
      i = group.back() + 1;
    }
    if (ungroup) {
      txn->Rollback().IgnoreError();
      group_small_files = false;
      continue;
    }
    if (switch_to_careful) {
      txn->Rollback().IgnoreError();  // the failed statement already aborted it
      careful = true;
      continue;
    }
    if (!file_error.ok()) {
      txn->Rollback().IgnoreError();
      // An interrupted statement (PAUSE, DROP, stop) says nothing about the file.
      if (!skip_bad_files || file_error.code() == StatusCode::kCancelled) {
        return fail(file_error, kLoadErr);
      }
      MR_LOG(kWarning) << "job " << snapshot.name << ": quarantining " << files[bad_file].key
                       << ": " << file_error.message();
      quarantined[bad_file] = file_error.message();
      continue;
    }
    if (stats.filtered_rows > 0 &&
        static_cast<double>(stats.filtered_rows) >
            snapshot.properties.max_filter_ratio * static_cast<double>(stats.scanned_rows)) {
      txn->Rollback().IgnoreError();
      task->first_error_msg = first_error;
      return fail(
          Status::InvalidArgument(
              std::to_string(stats.filtered_rows) + " of " + std::to_string(stats.scanned_rows) +
              " rows were filtered, more than session.insert_max_filter_ratio = " +
              std::to_string(snapshot.properties.max_filter_ratio) + "; first: " + first_error),
          kTooManyFailureRowsErr);
    }
    return CommitBatch(entry, snapshot, advances ? files.back().key : snapshot.current_offset,
                       std::move(*txn), stats, ledger, first_error, task, conn, failure);
  }
  return fail(Status::Internal("the batch could not be loaded"), kLoadErr);
}

Result<LoadStatistic> JobService::Impl::CommitBatch(
    JobEntry* entry, const JobRecord& snapshot, const std::string& new_offset,
    engine::Transaction txn, const LoadStatistic& stats, const std::vector<LedgerEntry>& ledger,
    const std::string& first_error, TaskRecord* task, engine::Connection* conn,
    TaskFailure* failure) {
  auto fail = [&](Status status) -> Status {
    failure->status = status;
    failure->code = std::string(kLoadErr);
    return status;
  };
  const int64_t now_us = MicrosSinceEpoch(config_.clock->WallNow());
  JobRecord updated = snapshot;
  updated.current_offset = new_offset;
  updated.succeed_tasks += 1;
  updated.stats += stats;
  updated.last_success_time_us = now_us;
  {
    MutexLock lock(&mu_);
    updated.runtime_msg = entry->record.runtime_msg;  // reconciliation may have news
  }
  TaskRecord done = *task;
  done.state = TaskState::kSuccess;
  done.stats = stats;
  done.first_error_msg = first_error;
  done.finish_time_us = now_us;

  auto advanced = catalog::AdvanceOffset(*conn, updated, snapshot.current_offset, snapshot.epoch);
  if (!advanced.ok()) return fail(advanced.status());
  if (!*advanced) {
    return fail(Status::Cancelled("the job no longer expects this task"));
  }
  if (Status s = catalog::InsertLedger(*conn, ledger); !s.ok()) return fail(s);
  if (Status s = catalog::InsertTask(*conn, done); !s.ok()) return fail(s);
  if (Status s = catalog::PruneTasks(*conn, snapshot.id, config_.task_history); !s.ok()) {
    return fail(s);
  }
  if (stats.filtered_rows > 0) {
    Status s = catalog::PruneFilteredRows(*conn, snapshot.id, kFilteredRowsKept);
    if (!s.ok()) return fail(s);
  }
  if (config_.fail_points != nullptr) {
    MR_RETURN_IF_ERROR(fail(config_.fail_points->Check("task.before_commit")));
  }
  {
    // The epoch check and the commit are one step for PAUSE/ALTER/DROP, which take mu_ to bump
    // the epoch: a task commits only if no such statement came first.
    MutexLock lock(&mu_);
    if (entry->record.epoch != snapshot.epoch) {
      return fail(Status::Cancelled("the job was paused, altered or dropped"));
    }
    if (Status s = txn.Commit(); !s.ok()) return fail(s);
    if (config_.fail_points != nullptr) {
      config_.fail_points->Check("task.after_commit").IgnoreError();  // crash or nothing
    }
    JobRecord& r = entry->record;
    r.current_offset = updated.current_offset;
    r.succeed_tasks = updated.succeed_tasks;
    r.stats = updated.stats;
    r.last_success_time_us = updated.last_success_time_us;
    *task = done;
    UpdateHistoryLocked(entry, done);
    entry->lag_files = 0;
    entry->lag_bytes = 0;
  }
  return stats;
}

Status JobService::Impl::Reconcile(JobEntry* entry, const JobRecord& snapshot,
                                   source::FileSource& source, engine::Connection* conn) {
  const JobProperties& props = snapshot.properties;
  {
    MutexLock lock(&mu_);
    entry->next_reconcile =
        config_.clock->SteadyNow() + std::chrono::seconds(props.reconcile_interval_seconds);
  }
  if (snapshot.current_offset.empty() || snapshot.current_offset <= snapshot.reconcile_floor) {
    return Status::Ok();  // nothing is below the offset yet
  }
  // Everything between the floor and the offset, page by page.
  std::vector<source::FileInfo> listed;
  source::ListOptions list;
  list.start_after = snapshot.reconcile_floor;
  list.max_files = 1000;
  list.max_bytes = UINT64_MAX;
  bool unsettled = false;
  while (true) {
    MR_ASSIGN_OR_RETURN(source::Listing page, source.List(list));
    unsettled = unsettled || page.unsettled_files > 0;
    bool past_offset = false;
    for (source::FileInfo& f : page.files) {
      if (f.key > snapshot.current_offset) {
        past_offset = true;
        break;
      }
      listed.push_back(std::move(f));
    }
    if (past_offset || !page.more || page.files.empty()) break;
    list.start_after = listed.back().key;
  }
  MR_ASSIGN_OR_RETURN(auto ledger, catalog::LedgerEntries(*conn, snapshot.id, ""));
  std::map<std::string, const LedgerEntry*> by_key;
  for (const LedgerEntry& e : ledger)
    by_key[e.key] = &e;

  std::deque<source::FileInfo> late;
  std::vector<LedgerEntry> skipped;
  std::vector<std::pair<std::string, std::string>> changed;  // key, note
  const int64_t now_us = MicrosSinceEpoch(config_.clock->WallNow());
  for (source::FileInfo& f : listed) {
    auto it = by_key.find(f.key);
    if (it == by_key.end() || it->second->state == FileState::kRetrying) {
      if (it != by_key.end() || props.late_files == LateFiles::kLoad) {
        late.push_back(std::move(f));
      } else {
        skipped.push_back(LedgerEntry{snapshot.id, f.key, f.etag, static_cast<int64_t>(f.size),
                                      FileState::kSkipped, 0, 0, now_us,
                                      "late file (late_files = ignore)"});
      }
      continue;
    }
    const LedgerEntry& e = *it->second;
    if (e.state == FileState::kLoaded && e.error.empty() &&
        (e.etag != f.etag || e.size != static_cast<int64_t>(f.size))) {
      changed.emplace_back(f.key, "changed after it was loaded (now ETag " + f.etag + ", " +
                                      std::to_string(f.size) + " bytes); not reloaded");
    }
  }
  if (!skipped.empty() || !changed.empty()) {
    MR_ASSIGN_OR_RETURN(auto txn, conn->Begin());
    MR_RETURN_IF_ERROR(catalog::InsertLedger(*conn, skipped));
    for (const auto& [key, note] : changed) {
      MR_RETURN_IF_ERROR(
          catalog::SetLedgerState(*conn, snapshot.id, key, FileState::kLoaded, note));
    }
    MR_RETURN_IF_ERROR(txn.Commit());
  }
  MutexLock lock(&mu_);
  if (entry->record.epoch != snapshot.epoch) return Status::Ok();
  if (unsettled) {
    // Files still being written stop the listing: look again soon to see past them.
    entry->next_reconcile = config_.clock->SteadyNow() + kUnsettledPoll;
  }
  if (!late.empty()) {
    MR_LOG(kInfo) << "job " << snapshot.name << ": " << late.size()
                  << " late or retried file(s) to load, first " << late.front().key;
  }
  entry->pending = std::move(late);
  if (!skipped.empty()) {
    entry->record.runtime_msg = std::to_string(skipped.size()) +
                                " late file(s) skipped (late_files = ignore), first " +
                                skipped.front().key;
  }
  if (!changed.empty()) {
    entry->record.runtime_msg = std::to_string(changed.size()) +
                                " loaded file(s) changed after they were loaded (not reloaded), "
                                "first " +
                                changed.front().first;
  }
  return Status::Ok();
}

void JobService::Impl::FailTaskLocked(JobEntry* entry, TaskRecord* task, const TaskFailure& failure,
                                      engine::Connection* conn) {
  if (task != nullptr) {
    task->state = TaskState::kFailed;
    task->error_msg = failure.status.message();
    task->finish_time_us = MicrosSinceEpoch(config_.clock->WallNow());
    UpdateHistoryLocked(entry, *task);
  }
  JobRecord after = entry->record;
  ++after.failed_tasks;
  after.state = JobState::kPaused;
  after.manual_pause = false;
  after.error_code = failure.code;
  after.error_msg = failure.status.message();
  after.runtime_msg.clear();
  ++after.epoch;
  bool auto_resume = false;
  if (after.auto_resume_count < config_.auto_resume_limit &&
      failure.code != kTooManyFailureRowsErr) {
    const int64_t factor = int64_t{1} << std::min<int64_t>(after.auto_resume_count, 20);
    const auto delay =
        std::min<std::chrono::seconds>(config_.auto_resume_base * factor, config_.auto_resume_cap);
    auto_resume = true;
    entry->auto_resume_at = config_.clock->SteadyNow() + delay;
    after.runtime_msg = "resumes automatically in " + std::to_string(delay.count()) + " s";
  }
  MR_LOG(kError) << "job " << after.name << " PAUSED: " << failure.code << ": "
                 << failure.status.message();
  if (Status status = PersistLocked(*conn, after); !status.ok()) {
    MR_LOG(kError) << "job " << after.name << ": cannot record the pause: " << status.ToString();
  }
  entry->record = after;
  entry->auto_resume_pending = auto_resume;
}

// ---------------------------------------------------------------------------------------------
// Views

std::vector<JobRow> JobService::Impl::SnapshotJobs() {
  MutexLock lock(&mu_);
  std::vector<JobRow> rows;
  for (auto& [id, entry] : jobs_) {
    rows.push_back(JobRow{entry->record, entry->lag_files, entry->lag_bytes});
  }
  return rows;
}

std::vector<TaskRecord> JobService::Impl::SnapshotTasks() {
  MutexLock lock(&mu_);
  std::vector<TaskRecord> rows;
  for (auto& [id, entry] : jobs_) {
    rows.insert(rows.end(), entry->history.begin(), entry->history.end());
  }
  return rows;
}

Status JobService::Impl::RegisterViews(sql::TableFunctionRegistry* registry) {
  MR_RETURN_IF_ERROR(config_.db->RegisterTableFunction(MakeJobsFunction(this)));
  MR_RETURN_IF_ERROR(config_.db->RegisterTableFunction(MakeTasksFunction(this)));
  registry->Register("jobs", std::make_shared<sql::NamedParameterExpander>("jobs"));
  registry->Register("tasks", std::make_shared<sql::NamedParameterExpander>("tasks"));
  registry->Register("job_files", MakeJobFilesExpander());
  registry->Register("filtered_rows", MakeFilteredRowsExpander());
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------

JobService::JobService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JobService::~JobService() = default;

Result<std::unique_ptr<JobService>> JobService::Start(JobServiceConfig config) {
  if (config.db == nullptr || config.clock == nullptr || !config.make_source) {
    return Status::InvalidArgument("JobService needs a database, a clock and a source factory");
  }
  auto impl = std::make_unique<Impl>(std::move(config));
  MR_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<JobService>(new JobService(std::move(impl)));
}

Result<std::string> JobService::Execute(std::string_view statement, const std::string& database) {
  return impl_->Execute(statement, database);
}

Status JobService::RegisterViews(sql::TableFunctionRegistry* registry) {
  return impl_->RegisterViews(registry);
}

}  // namespace millrace::job
