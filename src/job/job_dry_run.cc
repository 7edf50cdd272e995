#include "job/job_dry_run.h"

#include <map>
#include <memory>

#include "job/batch_loader.h"
#include "job/file_job_source.h"
#include "job/job_errors.h"
#include "job/sink.h"

namespace millrace::job {
namespace {

// The dry run's job and task: ids no real job has (they count from 1), under which the load
// records its filtered rows in its own transaction.
constexpr int64_t kDryRunJobId = 0;
constexpr int64_t kDryRunTaskId = 0;

std::string Plural(uint64_t n, std::string_view one) {
  return std::to_string(n) + " " + std::string(one) + (n == 1 ? "" : "s");
}

std::string FailsWith(const Status& status) {
  // The code the task runner pauses the job with (TaskRunner::PauseAfterFailure).
  const JobErrorCode code = JobErrorOf(status).value_or(JobErrorCode::kLoad);
  return "would fail: " + std::string(JobErrorName(code)) + ": " + status.message();
}

// Task / batch: what the listing took.
std::string BatchDetail(const TrialBatch& trial, const JobProperties& props,
                        const std::string& source) {
  const source::Listing& listing = trial.listing;
  std::string out;
  if (listing.files.empty()) {
    out = "no files to load yet: nothing matches " + source;
    if (!props.offset.empty()) out += " after offset '" + props.offset + "'";
  } else {
    uint64_t bytes = 0;
    for (const source::FileInfo& f : listing.files)
      bytes += f.size;
    out = Plural(listing.files.size(), "file") + ", " + Plural(bytes, "byte");
    if (listing.more) {
      out += "; more files wait after them for the next tasks (s3.max_batch_files = " +
             std::to_string(props.max_batch_files) +
             ", s3.max_batch_bytes = " + std::to_string(props.max_batch_bytes) + ")";
    }
  }
  if (listing.unsettled_files > 0) {
    out +=
        "; " + Plural(listing.unsettled_files, "file") + " still being written, taken once settled";
  }
  return out;
}

// Task / outcome: what the task would commit, or what it would fail with.
std::string OutcomeDetail(const TrialBatch& trial) {
  if (!trial.loaded.ok()) return FailsWith(trial.loaded.status());
  if (!trial.over_filter_ratio.ok()) return FailsWith(trial.over_filter_ratio);
  const LoadStatistic& stats = trial.loaded->stats;
  std::string out = "would commit: " + Plural(stats.scanned_rows - stats.filtered_rows, "row") +
                    " loaded, " + std::to_string(stats.filtered_rows) + " filtered, from " +
                    Plural(stats.file_number, "file");
  size_t quarantined = 0;
  for (const LedgerEntry& e : trial.loaded->ledger)
    quarantined += e.state == FileState::kQuarantined ? 1 : 0;
  if (quarantined > 0) out += "; " + Plural(quarantined, "file") + " quarantined";
  return out;
}

// Column and Row lines: the reader over `paths` and the job's SELECT over it, read again
// (outside the load's transaction: a failing read there would abort it).
void AddReading(engine::Connection& conn, const LoadSpec& spec,
                const std::vector<std::string>& paths, std::vector<DryRunLine>* lines) {
  BatchLoader loader(&conn, spec);
  Result<BatchLoader::Reading> reading = loader.ReadingOver(paths);
  if (!reading.ok()) {
    lines->push_back({"Column", "error", reading.status().message()});
    return;
  }
  auto columns = engine::QueryTextRows(conn, "DESCRIBE SELECT * FROM " + reading->reader);
  if (!columns.ok()) {
    lines->push_back({"Column", "error", columns.status().message()});
  } else {
    for (const auto& column : *columns) {
      if (column.size() >= 2) lines->push_back({"Column", column[0], column[1]});
    }
  }
  // The newline ends a trailing -- comment of the job's statement.
  auto rows = engine::QueryTextRows(
      conn, "SELECT CAST(to_json(__millrace_row) AS VARCHAR) FROM (SELECT * FROM (" +
                reading->select + "\n) LIMIT " + std::to_string(JobDryRun::kRowsShown) +
                ") AS __millrace_row");
  if (!rows.ok()) {
    lines->push_back({"Row", "error", rows.status().message()});
    return;
  }
  for (size_t i = 0; i < rows->size(); ++i) {
    lines->push_back({"Row", std::to_string(i + 1), (*rows)[i].empty() ? "" : (*rows)[i][0]});
  }
}

}  // namespace

Result<std::vector<DryRunLine>> JobDryRun::Run(const CreateJobStatement& stmt,
                                               const std::string& database,
                                               const sql::SessionInfo& who) const {
  // CREATE JOB's checks, in its order (JobStatements::Create).
  if (config_.registry->Find(stmt.name) != nullptr) {
    return Status::AlreadyExists("job " + stmt.name + " already exists");
  }
  MR_ASSIGN_OR_RETURN(JobProperties properties, JobProperties::Parse(stmt.properties));
  MR_ASSIGN_OR_RETURN(InsertAnalysis analysis, AnalyzeInsert(stmt.insert_sql));
  if (analysis.source == load::SourceKind::kCdcStream || !analysis.to_database.empty()) {
    // Refused before the plan is built: building a change stream's source opens it upstream.
    return Status::NotSupported("EXPLAIN CREATE JOB covers file jobs (S3(), local()); job " +
                                stmt.name + " reads a change stream");
  }
  MR_ASSIGN_OR_RETURN(std::shared_ptr<const JobPlan> plan,
                      config_.plans->Build(stmt.insert_sql, database, /*creating=*/true));
  if (config_.access != nullptr) {
    MR_RETURN_IF_ERROR(config_.access->MayDefine(who, *plan, stmt.insert_sql, database));
  }
  const auto* files = dynamic_cast<const FileJobSource*>(plan->source.get());
  if (files == nullptr) return Status::Internal("the plan of a file job has no file source");

  // The job as CREATE JOB records it, before its first task.
  JobRecord record;
  record.id = kDryRunJobId;
  record.name = stmt.name;
  record.database = database;
  record.properties = properties;
  record.insert_sql = stmt.insert_sql;
  record.current_offset = Offset::FileName(properties.offset);
  record.reconcile_floor = properties.offset;

  MR_ASSIGN_OR_RETURN(std::unique_ptr<Sink> sink, config_.make_sink());
  // Named so that the load's log lines are not taken for a job's.
  const TaskContext task{kDryRunJobId, kDryRunTaskId, stmt.name + " (EXPLAIN)", database,
                         MicrosSinceEpoch(config_.clock->WallNow())};
  const BatchLimits limits{properties.max_batch_files, properties.max_batch_bytes};
  MR_ASSIGN_OR_RETURN(std::unique_ptr<TrialBatch> trial,
                      files->LoadFirstBatch(record, limits, *sink, task));

  std::vector<DryRunLine> lines;
  lines.push_back({"Task", "batch", BatchDetail(*trial, properties, files->Describe())});
  if (trial->listing.files.empty()) return lines;

  // The filtered rows are read in the load's transaction, then nothing of it stays.
  std::vector<FilteredRow> filtered;
  if (trial->loaded.ok()) {
    MR_ASSIGN_OR_RETURN(filtered, trial->loaded->txn->TaskFilteredRows(kDryRunJobId, kDryRunTaskId,
                                                                       kFilteredShown));
    MR_RETURN_IF_ERROR(trial->loaded->txn->Rollback());
  }
  lines.push_back({"Task", "outcome", OutcomeDetail(*trial)});

  std::map<std::string, const LedgerEntry*> ledger;
  if (trial->loaded.ok()) {
    for (const LedgerEntry& e : trial->loaded->ledger)
      ledger[e.key] = &e;
  }
  // The reader reads the files the task loaded (all fetched ones when the load failed); empty
  // files hold no rows and no columns.
  std::vector<std::string> read;
  for (size_t i = 0; i < trial->listing.files.size(); ++i) {
    const source::FileInfo& f = trial->listing.files[i];
    std::string detail = Plural(f.size, "byte");
    auto entry = ledger.find(f.key);
    const bool loaded = entry != ledger.end() && entry->second->state == FileState::kLoaded;
    if (loaded) detail += ", " + Plural(entry->second->rows, "row");
    if (entry != ledger.end() && entry->second->state == FileState::kQuarantined) {
      detail += ", quarantined: " + entry->second->error;
    }
    lines.push_back({"File", f.key, detail});
    if (f.size > 0 && !trial->readables[i].empty() && (loaded || !trial->loaded.ok())) {
      read.push_back(trial->readables[i]);
    }
  }
  if (!read.empty()) {
    MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::Connection> conn, config_.db->Connect());
    MR_RETURN_IF_ERROR(UseDatabase(*conn, database));
    AddReading(*conn, trial->spec, read, &lines);
  }

  for (const FilteredRow& row : filtered) {
    lines.push_back(
        {"Filtered", row.file + " line " + std::to_string(row.line),
         "column " + row.column_name + ": " + row.reason + " (value '" + row.value + "')"});
  }
  if (trial->loaded.ok()) {
    const int64_t more = trial->loaded->stats.filtered_rows - static_cast<int64_t>(filtered.size());
    if (more > 0) {
      lines.push_back({"Filtered", "more", Plural(more, "more filtered row") + " not shown"});
    }
  }
  return lines;
}

}  // namespace millrace::job
