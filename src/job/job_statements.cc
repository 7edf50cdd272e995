#include "job/job_statements.h"

#include <algorithm>
#include <utility>

#include "common/logging.h"
#include "common/random_token.h"
#include "common/strings.h"
#include "job/file_states.h"
#include "job/job_errors.h"
#include "sql/lexer.h"

namespace millrace::job {
namespace {

// Compares table names as DuckDB resolves them: case-insensitive, quotes removed.
std::string NormalizeName(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c != '"' && c != '`' && !IsAsciiSpace(c)) out += c;
  }
  return ToLower(out);
}

// The call's location argument: uri for S3, file_path for local.
// Where the job reads, which ALTER keeps: the bucket or directory, or the database server
// (a change stream's slot lives there; credentials may change).
std::string Location(const InsertAnalysis& analysis) {
  const char* key = analysis.source == load::SourceKind::kS3          ? "uri"
                    : analysis.source == load::SourceKind::kCdcStream ? "jdbc_url"
                                                                      : "file_path";
  auto it = analysis.args.find(key);
  return it == analysis.args.end() ? std::string() : it->second;
}

Status NotFound(const std::string& name) {
  return Status::NotFound("job " + name + " does not exist");
}

}  // namespace

Result<std::string> JobStatements::Execute(const JobStatement& statement,
                                           const std::string& database,
                                           const sql::SessionInfo& who) {
  if (auto* create = std::get_if<CreateJobStatement>(&statement)) {
    return Create(*create, database, who);
  }
  if (auto* alter = std::get_if<AlterJobStatement>(&statement)) {
    if (alter->retry_all || !alter->retry_files.empty()) return Retry(*alter, who);
    return Alter(*alter, who);
  }
  return Control(std::get<ControlJobStatement>(statement), who);
}

int64_t JobStatements::StopTask(Job& job) {
  const int64_t before = job.record.epoch++;
  while (job.task_running) {
    job.InterruptTasks();
    WaitOnFor(job.task_done, &job.mu, std::chrono::milliseconds(50),
              [&]() NO_THREAD_SAFETY_ANALYSIS { return !job.task_running; });
  }
  return before;
}

Status JobStatements::Undo(Job& job, int64_t epoch, JobState state, Status cause) {
  job.record.epoch = epoch;
  job.record.state = state;
  if (state == JobState::kRunning) config_.scheduler->Schedule(job.id, config_.clock->SteadyNow());
  job.Publish();
  return cause;
}

Result<std::string> JobStatements::Create(const CreateJobStatement& stmt,
                                          const std::string& database,
                                          const sql::SessionInfo& who) {
  MR_ASSIGN_OR_RETURN(const int64_t id, config_.registry->Reserve(stmt.name));
  auto properties = JobProperties::Parse(stmt.properties);
  // Made first: its source counts object-store requests into it from the start.
  auto job = std::make_shared<Job>(id, stmt.name);
  auto built = properties.ok() ? config_.plans->Build(stmt.insert_sql, database, /*creating=*/true,
                                                      job->object_store)
                               : properties.status();
  if (!built.ok()) {
    config_.registry->Unreserve(stmt.name);
    return built.status();
  }
  std::shared_ptr<const JobPlan> plan = std::move(built).value();
  Status allowed = MayDefine(who, *plan, stmt.insert_sql, database);
  if (allowed.ok()) {
    allowed = config_.plans->CheckTasksAtOnce(*plan, properties->max_concurrent_tasks);
  }
  if (!allowed.ok()) {
    config_.registry->Unreserve(stmt.name);
    return allowed;
  }
  JobRecord r;
  r.id = id;
  r.name = stmt.name;
  r.definer = who.user;
  r.comment = stmt.comment;
  r.database = database;
  r.properties = std::move(properties).value();
  if (plan->analysis.source == load::SourceKind::kS3 && r.properties.event_secret.empty()) {
    // What an S3 event notification for the job carries (POST /api/s3-events).
    r.properties.event_secret = RandomToken(16);
    r.properties.given["s3.event_secret"] = r.properties.event_secret;
  }
  r.insert_sql = stmt.insert_sql;
  r.masked_sql = MaskSecrets(stmt.insert_sql, plan->analysis, config_.change_stream_params);
  r.state = JobState::kRunning;
  r.create_time_us = MicrosSinceEpoch(config_.clock->WallNow());
  r.current_offset = Offset::FileName(r.properties.offset);
  r.reconcile_floor = r.properties.offset;
  if (Status s = config_.catalog->InsertJob(r); !s.ok()) {
    config_.registry->Unreserve(stmt.name);
    return s;
  }
  MR_LOG(kInfo) << "created job " << r.name << " (id " << id << ") reading "
                << plan->source->Describe();
  {
    MutexLock lock(&job->mu);
    job->record = std::move(r);
    job->plan = std::move(plan);
    job->Publish();
  }
  config_.registry->Add(job);
  config_.scheduler->Schedule(id, config_.clock->SteadyNow());
  return "job " + stmt.name + " created with id " + std::to_string(id);
}

Result<std::string> JobStatements::Control(const ControlJobStatement& stmt,
                                           const sql::SessionInfo& who) {
  std::shared_ptr<const JobPlan> dropped;
  JobRecord record;
  MR_ASSIGN_OR_RETURN(std::string done, ControlLocked(stmt, who, &dropped, &record));
  if (dropped == nullptr) return done;
  // Outside the job's lock: releasing a change stream's slot talks to its server.
  if (Status released = dropped->source->Drop(record); !released.ok()) {
    MR_LOG(kWarning) << "job " << stmt.name << ": " << released.ToString();
    return done + "; " + released.message();
  }
  return done;
}

Result<std::string> JobStatements::ControlLocked(const ControlJobStatement& stmt,
                                                 const sql::SessionInfo& who,
                                                 std::shared_ptr<const JobPlan>* dropped,
                                                 JobRecord* record) {
  std::shared_ptr<Job> job = config_.registry->Find(stmt.name);
  if (job == nullptr) {
    if (stmt.if_exists) return "job " + stmt.name + " does not exist";
    return NotFound(stmt.name);
  }
  MutexLock lock(&job->mu);
  MR_RETURN_IF_ERROR(MayControl(who, job->plan.get()));
  const JobState state = job->record.state;
  if (stmt.action == JobControl::kPause && state != JobState::kRunning &&
      state != JobState::kPending && !(state == JobState::kPaused && !job->record.manual_pause)) {
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
    if (job->plan == nullptr) {
      return JobError(JobErrorCode::kCannotResume,
                      Status::FailedPrecondition("job " + stmt.name +
                                                 " cannot resume: " + job->record.error_msg));
    }
  }
  const int64_t epoch = StopTask(*job);
  if (stmt.action == JobControl::kDrop) {
    // STOPPED at once: a worker that already claimed the job finds nothing to run.
    job->record.state = JobState::kStopped;
    if (Status s = config_.catalog->DeleteJob(job->id); !s.ok()) {
      return Undo(*job, epoch, state, s);
    }
    config_.registry->Remove(job->id);
    config_.scheduler->Unschedule(job->id);
    MR_LOG(kInfo) << "dropped job " << stmt.name;
    *dropped = job->plan;  // its source releases what it holds upstream (Control)
    *record = job->record;
    return "job " + stmt.name + " dropped";
  }
  JobRecord after = job->record;
  if (stmt.action == JobControl::kPause) {
    after.state = JobState::kPaused;
    after.manual_pause = true;
    after.error_code = std::string(JobErrorName(JobErrorCode::kManualPause));
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
  if (Status s = config_.catalog->SaveJob(after); !s.ok()) return Undo(*job, epoch, state, s);
  job->record = after;
  job->auto_resume_pending = false;
  job->Publish();
  if (stmt.action == JobControl::kPause) {
    // Its turns now only look at what its source holds upstream (TaskRunner::WatchPaused).
    config_.scheduler->Schedule(job->id, config_.clock->SteadyNow() + config_.paused_check);
  } else {
    job->plan->source->LookAgain();
    config_.scheduler->Schedule(job->id, config_.clock->SteadyNow());
  }
  MR_LOG(kInfo) << "job " << after.name << " is " << JobStateName(after.state);
  return "job " + stmt.name + " " + (stmt.action == JobControl::kPause ? "paused" : "resumed");
}

Result<std::string> JobStatements::ShowCreate(const std::string& name,
                                              const sql::SessionInfo& who) {
  std::shared_ptr<Job> job = config_.registry->Find(name);
  if (job == nullptr) return NotFound(name);
  JobRecord record;
  {
    MutexLock lock(&job->mu);
    MR_RETURN_IF_ERROR(MayControl(who, job->plan.get()));
    record = job->record;
  }
  MR_ASSIGN_OR_RETURN(InsertAnalysis analysis, AnalyzeInsert(record.insert_sql));
  std::string out = "CREATE JOB " + Backquoted(record.name) + " ON STREAMING";
  if (!record.properties.given.empty()) {
    std::string list;
    for (const auto& [key, value] : record.properties.given)
      list += (list.empty() ? "" : ", ") + Quoted(key, '"') + " = " + Quoted(value, '"');
    out += " PROPERTIES (" + list + ")";
  }
  if (!record.comment.empty()) out += " COMMENT " + Quoted(record.comment, '\'');
  // The database form (FROM ... TO DATABASE) follows directly; an INSERT after DO.
  out += analysis.to_database.empty() ? " DO " : " ";
  return out + PlaceholderSecrets(record.insert_sql, analysis, config_.change_stream_params);
}

Result<std::string> JobStatements::Retry(const AlterJobStatement& stmt,
                                         const sql::SessionInfo& who) {
  std::shared_ptr<Job> job = config_.registry->Find(stmt.name);
  if (job == nullptr) return NotFound(stmt.name);
  MutexLock lock(&job->mu);
  MR_RETURN_IF_ERROR(MayControl(who, job->plan.get()));
  if (job->record.state == JobState::kStopped) {
    return Status::FailedPrecondition("job " + stmt.name + " is STOPPED");
  }
  MR_ASSIGN_OR_RETURN(auto quarantined,
                      config_.catalog->LedgerEntries(job->id, FileState::kQuarantined));
  std::vector<LedgerEntry> retry;
  for (LedgerEntry& e : quarantined) {
    const bool wanted =
        stmt.retry_all || std::find(stmt.retry_files.begin(), stmt.retry_files.end(), e.key) !=
                              stmt.retry_files.end();
    if (!wanted) continue;
    MR_ASSIGN_OR_RETURN(LedgerEntry retried, Retried(std::move(e)));
    retry.push_back(std::move(retried));
  }
  for (const std::string& key : stmt.retry_files) {
    const bool found =
        std::any_of(retry.begin(), retry.end(), [&](const LedgerEntry& e) { return e.key == key; });
    if (!found) {
      return Status::NotFound("job " + stmt.name + " has no quarantined file '" + key + "'");
    }
  }
  // RETRYING files are loaded again by the next reconciliation, like late files; the state
  // survives a restart.
  MR_RETURN_IF_ERROR(config_.catalog->RecordFiles(retry));
  if (job->plan != nullptr) job->plan->source->LookAgain();
  if (job->record.state == JobState::kRunning) {
    config_.scheduler->Schedule(job->id, config_.clock->SteadyNow());
  }
  return "job " + stmt.name + ": " + std::to_string(retry.size()) + " file(s) will be loaded again";
}

Result<std::string> JobStatements::Alter(const AlterJobStatement& stmt,
                                         const sql::SessionInfo& who) {
  std::shared_ptr<Job> job = config_.registry->Find(stmt.name);
  if (job == nullptr) return NotFound(stmt.name);
  JobRecord current;
  InsertAnalysis old_analysis;
  std::string old_upstream;
  {
    MutexLock lock(&job->mu);
    MR_RETURN_IF_ERROR(MayControl(who, job->plan.get()));
    if (job->record.state != JobState::kPaused) {
      return Status::FailedPrecondition("job " + stmt.name + " is " +
                                        std::string(JobStateName(job->record.state)) +
                                        "; only a PAUSED job can be altered (PAUSE JOB first)");
    }
    current = job->record;
    if (job->plan != nullptr) {
      old_analysis = job->plan->analysis;
      old_upstream = job->plan->source->FixedUpstream();
    }
  }
  PropertyMap merged = current.properties.given;
  for (const auto& [key, value] : stmt.properties)
    merged[key] = value;
  const std::string new_sql = stmt.insert_sql.empty() ? current.insert_sql : stmt.insert_sql;
  if (merged == current.properties.given && new_sql == current.insert_sql) {
    return Status::InvalidArgument("ALTER JOB " + stmt.name + " changes nothing");
  }
  // Built without the job's lock: it opens the source and reads the target table.
  MR_ASSIGN_OR_RETURN(JobProperties properties, JobProperties::Parse(merged));
  MR_ASSIGN_OR_RETURN(
      std::shared_ptr<const JobPlan> plan,
      config_.plans->Build(new_sql, current.database, /*creating=*/false, job->object_store));
  MR_RETURN_IF_ERROR(MayDefine(who, *plan, new_sql, current.database));
  MR_RETURN_IF_ERROR(config_.plans->CheckTasksAtOnce(*plan, properties.max_concurrent_tasks));
  if (!stmt.insert_sql.empty()) {
    const InsertAnalysis& a = plan->analysis;
    if (old_analysis.target_table.empty()) {
      MR_ASSIGN_OR_RETURN(old_analysis, AnalyzeInsert(current.insert_sql));
    }
    if (NormalizeName(a.target_table) != NormalizeName(old_analysis.target_table)) {
      return Status::InvalidArgument("ALTER JOB " + stmt.name +
                                     ": the target table cannot change (it is " +
                                     old_analysis.target_table + ")");
    }
    if (a.source != old_analysis.source) {
      return Status::InvalidArgument("ALTER JOB " + stmt.name + ": the source kind cannot change");
    }
    const std::string old_uri = Location(old_analysis);
    if (old_uri.empty() || old_uri != Location(a)) {
      return Status::InvalidArgument("ALTER JOB " + stmt.name + ": the uri cannot change (it is " +
                                     (old_uri.empty() ? std::string("?") : old_uri) + ")");
    }
    if (old_upstream != plan->source->FixedUpstream()) {
      return Status::InvalidArgument("ALTER JOB " + stmt.name + ": what the job reads cannot " +
                                     "change (it is " + old_upstream + "; the new definition " +
                                     "reads " + plan->source->FixedUpstream() +
                                     "); recreate the job");
    }
  }
  // The old definition (its source, maybe a read ahead) goes after the lock is released.
  std::shared_ptr<const JobPlan> old_plan;
  MutexLock lock(&job->mu);
  if (job->record.state != JobState::kPaused || job->record.epoch != current.epoch ||
      config_.registry->Get(job->id) == nullptr) {
    return Status::Aborted("job " + stmt.name + " changed while being altered; try again");
  }
  const int64_t epoch = StopTask(*job);
  JobRecord after = job->record;
  after.properties = std::move(properties);
  const bool offset_set = stmt.properties.count("offset") != 0;
  if (offset_set) {
    after.current_offset = Offset::FileName(after.properties.offset);
    after.reconcile_floor = after.properties.offset;
  }
  after.insert_sql = new_sql;
  after.statement_error.clear();  // a statement given again replaces one that could not open
  after.masked_sql = MaskSecrets(new_sql, plan->analysis, config_.change_stream_params);
  // The job runs as whoever defined it last, checked as such above: never with the rights of
  // a user who did not write what it now does.
  if (!who.user.empty()) after.definer = who.user;
  if (Status s =
          offset_set ? config_.catalog->SaveJobFromOffset(after) : config_.catalog->SaveJob(after);
      !s.ok()) {
    return Undo(*job, epoch, JobState::kPaused, s);
  }
  job->record = after;
  old_plan = std::exchange(job->plan, std::move(plan));
  job->Publish();
  MR_LOG(kInfo) << "altered job " << after.name;
  return "job " + stmt.name + " altered";
}

}  // namespace millrace::job
