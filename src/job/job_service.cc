#include "job/job_service.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "common/fault_record.h"
#include "common/logging.h"
#include "common/random_token.h"
#include "job/job_errors.h"
#include "job/job_metrics.h"
#include "job/job_plan.h"
#include "job/job_registry.h"
#include "job/job_statements.h"
#include "job/job_verify.h"
#include "job/job_views.h"
#include "job/ledger_views.h"
#include "job/scheduler.h"
#include "job/sink.h"
#include "job/task_runner.h"

namespace millrace::job {

class JobService::Impl final : public JobSnapshotSource {
 public:
  Impl(JobServiceConfig config, bool last_stop_was_fault)
      : config_(std::move(config)),
        store_(*config_.store),
        scheduler_(config_.clock),
        plans_(PlanBuilderConfig{.db = config_.db,
                                 .clock = config_.clock,
                                 .catalog = &store_,
                                 .make_source = config_.make_source,
                                 .make_file_source = config_.make_file_source,
                                 .make_change_source = config_.make_change_source,
                                 .make_external_target = config_.make_external_target,
                                 .embedded_targets_refused = config_.embedded_targets_refused,
                                 .fail_points = config_.fail_points,
                                 .work_dirs = load::WorkDirs::Under(config_.work_root),
                                 .download_parallelism = config_.download_parallelism,
                                 .last_stop_was_fault = last_stop_was_fault}),
        statements_(JobStatementsConfig{config_.clock, &store_, &registry_, &scheduler_, &plans_,
                                        &config_.access, config_.tasks.paused_check,
                                        config_.change_stream_params}),
        runner_(TaskRunnerConfig{config_.clock, &store_, &scheduler_, config_.fail_points,
                                 &config_.access, config_.tasks, config_.make_sink}),
        verifier_(JobVerifierConfig{.registry = &registry_,
                                    .catalog = &store_,
                                    .access = &config_.access,
                                    .make_source = config_.make_source,
                                    .db = config_.db}),
        dry_run_(JobDryRunConfig{.db = config_.db,
                                 .clock = config_.clock,
                                 .registry = &registry_,
                                 .plans = &plans_,
                                 .access = &config_.access,
                                 .make_sink = config_.make_sink}) {}
  ~Impl() override { Stop(); }

  Status Init();
  void Stop();

  Result<std::string> Execute(std::string_view statement, const std::string& database,
                              const sql::SessionInfo& who) {
    MR_ASSIGN_OR_RETURN(JobStatement parsed, ParseJobStatement(statement));
    return statements_.Execute(parsed, database, who);
  }
  Result<std::string> Execute(const JobStatement& statement, const std::string& database,
                              const sql::SessionInfo& who) {
    return statements_.Execute(statement, database, who);
  }
  JobApiContext ApiContext() {
    return JobApiContext{&registry_, &store_, &config_.access, &scheduler_, config_.clock};
  }
  const ParamTables& change_stream_params() const { return config_.change_stream_params; }

  Result<std::string> ShowCreateJob(const std::string& name, const sql::SessionInfo& who) {
    return statements_.ShowCreate(name, who);
  }
  // What an event is compared with, taken under the job's lock; the source is asked outside
  // it (a running task may hold it).
  struct EventView {
    std::shared_ptr<Job> job;
    std::shared_ptr<const JobPlan> plan;  // null: the job cannot run
    Offset offset;
    std::string secret;  // s3.event_secret
  };
  static EventView ViewForEvents(const std::shared_ptr<Job>& job) {
    MutexLock lock(&job->mu);
    return {job, job->plan, job->record.current_offset, job->record.properties.event_secret};
  }
  static bool Wants(const EventView& view, const std::string& path, bool directory) {
    return view.plan != nullptr && view.plan->source->WantsEvent(path, directory, view.offset);
  }
  // Makes the job due now; false when the scheduler does not run it (paused, dropped).
  bool WakeJob(const EventView& view) {
    if (!scheduler_.Wake(view.job->id)) return false;
    view.job->NoteWoken(config_.clock->SteadyNow());
    return true;
  }

  int Wake(const std::string& path, bool directory) {
    int woken = 0;
    for (const std::shared_ptr<Job>& job : registry_.All()) {
      const EventView view = ViewForEvents(job);
      if (Wants(view, path, directory) && WakeJob(view)) ++woken;
    }
    return woken;
  }
  JobService::ObjectWakeups WakeForObjects(const std::vector<std::string>& locations,
                                           std::string_view secret) {
    JobService::ObjectWakeups out;
    std::vector<EventView> views;
    for (const std::shared_ptr<Job>& job : registry_.All()) {
      EventView view = ViewForEvents(job);
      // Every job's secret is compared, whatever matched before: the time says nothing.
      const bool equal = !view.secret.empty() && TokensEqual(secret, view.secret);
      if (equal) views.push_back(std::move(view));
      out.authenticated = out.authenticated || equal;
    }
    if (!out.authenticated) return out;
    for (const std::string& location : locations) {
      bool woke = false;
      for (const EventView& view : views) {
        if (!Wants(view, location, false)) continue;
        WakeJob(view);
        woke = true;
      }
      ++(woke ? out.matched : out.unmatched);
    }
    return out;
  }
  Result<std::vector<VerifyRow>> VerifyJob(const std::string& name, int64_t examples,
                                           const sql::SessionInfo& who) {
    return verifier_.Verify(name, examples, who);
  }
  Result<std::vector<DryRunLine>> ExplainCreateJob(std::string_view create_statement,
                                                   const std::string& database,
                                                   const sql::SessionInfo& who) {
    MR_ASSIGN_OR_RETURN(JobStatement parsed, ParseJobStatement(create_statement));
    const auto* create = std::get_if<CreateJobStatement>(&parsed);
    if (create == nullptr) {
      return Status::InvalidArgument("EXPLAIN explains CREATE JOB statements only");
    }
    return dry_run_.Run(*create, database, who);
  }
  Status RegisterViews(sql::TableFunctionRegistry* registry);
  Status Adopt(int64_t job_id, int64_t lease_epoch);
  void Relinquish(int64_t job_id);
  Result<std::vector<int64_t>> Follow();
  void RegisterMetrics(MetricsRegistry* metrics, const ObjectStorePrices& prices) {
    metrics->AddCollector([this, prices](MetricsWriter& out) {
      WriteJobMetrics(registry_, store_, *config_.clock, prices, out);
    });
  }

  std::vector<JobRow> SnapshotJobs() override { return registry_.SnapshotJobs(); }
  std::vector<TaskRecord> SnapshotTasks() override { return registry_.SnapshotTasks(); }

 private:
  // Loads one stored job into the registry and schedules it.
  Status Restore(JobRecord record);
  // Restore in place of the job's live state, once its running task has stopped.
  Status Replace(JobRecord record);
  // Whether this server runs the job's turns (always, unless leased).
  bool Runs(int64_t job_id) EXCLUDES(held_mu_) { return !config_.leased || LeaseEpoch(job_id); }
  // The epoch of the job's lease when this server holds it.
  std::optional<int64_t> LeaseEpoch(int64_t job_id) EXCLUDES(held_mu_) {
    MutexLock lock(&held_mu_);
    auto it = held_.find(job_id);
    return it == held_.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  void WorkerLoop(Sink* sink);

  const JobServiceConfig config_;
  JobStore& store_;
  JobRegistry registry_;
  Scheduler scheduler_;
  PlanBuilder plans_;
  JobStatements statements_;
  TaskRunner runner_;
  JobVerifier verifier_;
  JobDryRun dry_run_;
  std::vector<std::unique_ptr<Sink>> sinks_;
  std::vector<std::thread> workers_;
  Mutex held_mu_;
  std::map<int64_t, int64_t> held_ GUARDED_BY(held_mu_);  // leased: job -> its lease's epoch
};

Status JobService::Impl::Init() {
  MR_ASSIGN_OR_RETURN(auto stored, store_.LoadJobs());
  for (JobRecord& record : stored)
    MR_RETURN_IF_ERROR(Restore(std::move(record)));
  for (int i = 0; i < config_.workers; ++i) {
    MR_ASSIGN_OR_RETURN(auto sink, config_.make_sink());
    sinks_.push_back(std::move(sink));
  }
  for (auto& sink : sinks_)
    workers_.emplace_back([this, s = sink.get()] {
      ProtectThisThread();
      WorkerLoop(s);
    });
  return Status::Ok();
}

Status JobService::Impl::Restore(JobRecord record) {
  auto job = std::make_shared<Job>(record.id, record.name);
  MR_ASSIGN_OR_RETURN(auto tasks, store_.LoadTasks(record.id, config_.tasks.task_history));
  auto built =
      record.statement_error.empty()
          ? plans_.Build(record.insert_sql, record.database, /*creating=*/false, job->object_store)
          : Result<std::shared_ptr<const JobPlan>>(Status::DataLoss(
                record.statement_error +
                "; restore that key file, or give the job its statement again with "
                "ALTER JOB ... DO, or DROP it"));
  const Clock::SteadyTime now = config_.clock->SteadyNow();
  MutexLock lock(&job->mu);
  for (TaskRecord& t : tasks) {
    t.job_name = record.name;
    // Concurrent tasks commit their records before the job's row (sink.h's Progress::Part): a
    // crash between the two leaves a task newer than the row's next_task_id.
    record.next_task_id = std::max(record.next_task_id, t.task_id + 1);
    job->history.push_back(std::move(t));
  }
  if (!built.ok()) {
    // The job stays visible and paused with the reason, rather than blocking start-up.
    record.state = JobState::kPaused;
    record.error_code = std::string(JobErrorName(JobErrorCode::kCannotResume));
    record.error_msg = built.status().message();
  } else {
    job->plan = std::move(built).value();
  }
  const auto code = ParseJobErrorName(record.error_code);
  std::optional<Clock::SteadyTime> due;
  if (record.state == JobState::kPaused && !record.manual_pause && job->plan != nullptr &&
      code.has_value() && AllowsAutoResume(*code) &&
      record.auto_resume_count < config_.tasks.auto_resume_limit) {
    job->auto_resume_pending = true;
    due = now;
  } else if (record.state == JobState::kRunning) {
    due = now;
  } else if (record.state == JobState::kPaused && job->plan != nullptr) {
    due = now + config_.tasks.paused_check;
  }
  MR_LOG(kInfo) << "job " << record.name << " (id " << record.id << ") is "
                << JobStateName(record.state) << " at offset '" << record.current_offset.ToJson()
                << "'";
  job->record = std::move(record);
  job->Publish();
  registry_.Add(job);
  // Scheduled once in the registry: a worker must find this job, not the one it replaces.
  if (due) scheduler_.Schedule(job->id, *due);
  return Status::Ok();
}

void JobService::Impl::Stop() {
  runner_.Stop();
  scheduler_.Stop();
  for (const auto& job : registry_.All()) {
    MutexLock lock(&job->mu);
    job->InterruptTasks();
  }
  for (auto& t : workers_)
    t.join();
  workers_.clear();
}

void JobService::Impl::WorkerLoop(Sink* sink) {
  while (std::optional<int64_t> id = scheduler_.Next()) {
    if (!Runs(*id)) {
      scheduler_.Unschedule(*id);  // another server's (or none's yet): Adopt schedules it
    } else if (std::shared_ptr<Job> job = registry_.Get(*id)) {
      runner_.RunTurn(*job, *sink);
    }
    scheduler_.Release(*id);
  }
}

Status JobService::Impl::Replace(JobRecord record) {
  if (std::shared_ptr<Job> live = registry_.Get(record.id)) {
    MutexLock lock(&live->mu);
    JobStatements::StopTask(*live);
  }
  return Restore(std::move(record));
}

Status JobService::Impl::Adopt(int64_t job_id, int64_t lease_epoch) {
  MR_ASSIGN_OR_RETURN(JobRecord record, store_.LoadJob(job_id));
  {
    // Before the job is scheduled: a worker finding it not adopted would unschedule it.
    MutexLock lock(&held_mu_);
    held_[job_id] = lease_epoch;
  }
  Status restored = Replace(std::move(record));
  if (!restored.ok()) Relinquish(job_id);
  return restored;
}

void JobService::Impl::Relinquish(int64_t job_id) {
  {
    MutexLock lock(&held_mu_);
    held_.erase(job_id);
  }
  scheduler_.Unschedule(job_id);
  if (std::shared_ptr<Job> job = registry_.Get(job_id)) {
    MutexLock lock(&job->mu);
    JobStatements::StopTask(*job);
    job->Publish();
  }
}

Result<std::vector<int64_t>> JobService::Impl::Follow() {
  // The live jobs before the store is read: a job created here meanwhile is in the store
  // before it is live (JobStatements::Create), so only these can have been dropped elsewhere.
  const std::vector<std::shared_ptr<Job>> live = registry_.All();
  MR_ASSIGN_OR_RETURN(std::vector<JobRecord> stored, store_.LoadJobs());
  std::set<int64_t> ids;
  for (JobRecord& record : stored) {
    ids.insert(record.id);
    std::shared_ptr<Job> job = registry_.Get(record.id);
    if (job == nullptr) {
      MR_RETURN_IF_ERROR(Restore(std::move(record)));
      continue;
    }
    bool replace = false;
    bool taken_over = false;
    const std::optional<int64_t> lease_epoch = LeaseEpoch(record.id);
    {
      MutexLock lock(&job->mu);
      if (lease_epoch && record.epoch >= *lease_epoch + kEpochsPerLease) {
        taken_over = true;  // another server's lease: its epochs are not this server's to run
      } else if (lease_epoch) {
        replace = record.epoch > job->record.epoch;
      } else if (record.epoch != job->record.epoch || record.insert_sql != job->record.insert_sql) {
        replace = true;
      } else {
        job->record = std::move(record);  // its holder's progress, for the views
        job->Publish();
      }
    }
    if (taken_over) Relinquish(record.id);
    if (replace) MR_RETURN_IF_ERROR(Replace(std::move(record)));
  }
  for (const std::shared_ptr<Job>& job : live) {
    if (ids.count(job->id) > 0) continue;
    Relinquish(job->id);
    registry_.Remove(job->id);
    MR_LOG(kInfo) << "job " << job->name << " was dropped on another server";
  }
  return std::vector<int64_t>(ids.begin(), ids.end());
}

Status JobService::Impl::RegisterViews(sql::TableFunctionRegistry* registry) {
  MR_RETURN_IF_ERROR(config_.db->RegisterTableFunction(MakeJobsFunction(this, &config_.access)));
  MR_RETURN_IF_ERROR(config_.db->RegisterTableFunction(MakeTasksFunction(this, &config_.access)));
  MR_RETURN_IF_ERROR(
      config_.db->RegisterTableFunction(MakeJobSourceAccessFunction(this, &config_.access)));
  registry->Register("jobs", std::make_shared<sql::NamedParameterExpander>("jobs"));
  registry->Register("tasks", std::make_shared<sql::NamedParameterExpander>("tasks"));
  for (const auto& [name, expander] : config_.views)
    registry->Register(name, expander);
  if (config_.ledger_views_from_store) {
    for (auto function : {MakeJobFilesFunction(this, &config_.access, &store_),
                          MakeFilteredRowsFunction(this, &config_.access, &store_)}) {
      MR_RETURN_IF_ERROR(config_.db->RegisterTableFunction(function));
      registry->Register(function->name(),
                         std::make_shared<sql::NamedParameterExpander>(function->name()));
    }
  }
  return Status::Ok();
}

void JobService::RegisterMetrics(MetricsRegistry* metrics, const ObjectStorePrices& prices) {
  impl_->RegisterMetrics(metrics, prices);
}

JobApiContext JobService::ApiContext() {
  return impl_->ApiContext();
}

std::string JobService::MaskSecrets(std::string_view insert_sql,
                                    const InsertAnalysis& analysis) const {
  return job::MaskSecrets(insert_sql, analysis, impl_->change_stream_params());
}

Status JobService::Adopt(int64_t job_id, int64_t lease_epoch) {
  return impl_->Adopt(job_id, lease_epoch);
}

void JobService::Relinquish(int64_t job_id) {
  impl_->Relinquish(job_id);
}

Result<std::vector<int64_t>> JobService::Follow() {
  return impl_->Follow();
}

Result<std::string> JobService::ShowCreateJob(const std::string& name,
                                              const sql::SessionInfo& who) {
  return impl_->ShowCreateJob(name, who);
}

Result<std::vector<DryRunLine>> JobService::ExplainCreateJob(std::string_view create_statement,
                                                             const std::string& database,
                                                             const sql::SessionInfo& who) {
  return impl_->ExplainCreateJob(create_statement, database, who);
}

int JobService::Wake(const std::string& path, bool directory) {
  return impl_->Wake(path, directory);
}

JobService::ObjectWakeups JobService::WakeForObjects(const std::vector<std::string>& locations,
                                                     std::string_view secret) {
  return impl_->WakeForObjects(locations, secret);
}

Result<std::vector<VerifyRow>> JobService::VerifyJob(const std::string& name, int64_t examples,
                                                     const sql::SessionInfo& who) {
  return impl_->VerifyJob(name, examples, who);
}

JobService::JobService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JobService::~JobService() = default;

Result<std::unique_ptr<JobService>> JobService::Start(JobServiceConfig config) {
  if (config.db == nullptr || config.clock == nullptr || !config.make_source ||
      config.store == nullptr || !config.make_sink) {
    return Status::InvalidArgument(
        "JobService needs a database, a clock, a source factory, a job store and a sink "
        "factory");
  }
  bool fault = false;
  if (!config.fault_record.empty()) {
    MR_ASSIGN_OR_RETURN(const std::string signal, TakeFaultRecord(config.fault_record));
    if (!signal.empty()) {
      MR_LOG(kWarning) << "the previous server process died of " << signal
                       << "; files it was reading are read one at a time";
    }
    fault = !signal.empty();
    MR_RETURN_IF_ERROR(InstallFaultRecorder(config.fault_record));
  }
  auto impl = std::make_unique<Impl>(std::move(config), fault);
  MR_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<JobService>(new JobService(std::move(impl)));
}

Result<std::string> JobService::Execute(std::string_view statement, const std::string& database,
                                        const sql::SessionInfo& who) {
  return impl_->Execute(statement, database, who);
}

Result<std::string> JobService::Execute(const JobStatement& statement, const std::string& database,
                                        const sql::SessionInfo& who) {
  return impl_->Execute(statement, database, who);
}

Status JobService::RegisterViews(sql::TableFunctionRegistry* registry) {
  return impl_->RegisterViews(registry);
}

}  // namespace millrace::job
