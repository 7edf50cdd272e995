// FileJobSource::DryRun: EXPLAIN CREATE JOB of a file job (job/job_dry_run.h describes the
// lines): the first batch loaded by the task's own code (LoadFirstBatch), rolled back, and
// read again for its columns and rows.
#include <map>
#include <memory>

#include "files/batch_loader.h"
#include "files/file_job_source.h"
#include "job/job_errors.h"
#include "job/sink.h"

namespace millrace::files {
namespace {

std::string Plural(uint64_t n, std::string_view one) {
  return std::to_string(n) + " " + std::string(one) + (n == 1 ? "" : "s");
}

std::string FailsWith(const Status& status) {
  // The code the task runner pauses the job with (TaskRunner::PauseAfterFailure).
  const job::JobErrorCode code = job::JobErrorOf(status).value_or(job::JobErrorCode::kLoad);
  return "would fail: " + std::string(JobErrorName(code)) + ": " + status.message();
}

// Task / batch: what the listing took.
std::string BatchDetail(const TrialBatch& trial, const job::JobProperties& props,
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
  const job::LoadStatistic& stats = trial.loaded->stats;
  std::string out = "would commit: " + Plural(stats.scanned_rows - stats.filtered_rows, "row") +
                    " loaded, " + std::to_string(stats.filtered_rows) + " filtered, from " +
                    Plural(stats.file_number, "file");
  size_t quarantined = 0;
  for (const job::LedgerEntry& e : trial.loaded->ledger)
    quarantined += e.state == job::FileState::kQuarantined ? 1 : 0;
  if (quarantined > 0) out += "; " + Plural(quarantined, "file") + " quarantined";
  return out;
}

// Column and Row lines: the reader over `paths` and the job's SELECT over it, read again
// (outside the load's transaction: a failing read there would abort it).
void AddReading(engine::Connection& conn, const LoadSpec& spec,
                const std::vector<std::string>& paths, int64_t rows_shown,
                std::vector<job::DryRunLine>* lines) {
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
                reading->select + "\n) LIMIT " + std::to_string(rows_shown) +
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

Result<std::vector<job::DryRunLine>> FileJobSource::DryRun(
    const job::JobRecord& job, job::Sink& sink, const job::DryRunContext& context) const {
  const job::JobProperties& properties = job.properties;
  const job::TaskContext& task = context.task;
  const job::BatchLimits limits = job::BatchLimits::Of(properties);
  MR_ASSIGN_OR_RETURN(std::unique_ptr<TrialBatch> trial, LoadFirstBatch(job, limits, sink, task));

  std::vector<job::DryRunLine> lines;
  lines.push_back({"Task", "batch", BatchDetail(*trial, properties, Describe())});
  if (trial->listing.files.empty()) return lines;

  // The filtered rows are read in the load's transaction, then nothing of it stays.
  std::vector<job::FilteredRow> filtered;
  if (trial->loaded.ok()) {
    MR_ASSIGN_OR_RETURN(filtered, trial->loaded->txn->TaskFilteredRows(task.job_id, task.task_id,
                                                                       context.filtered_shown));
    MR_RETURN_IF_ERROR(trial->loaded->txn->Rollback());
  }
  lines.push_back({"Task", "outcome", OutcomeDetail(*trial)});

  std::map<std::string, const job::LedgerEntry*> ledger;
  if (trial->loaded.ok()) {
    for (const job::LedgerEntry& e : trial->loaded->ledger)
      ledger[e.key] = &e;
  }
  // The reader reads the files the task loaded (all fetched ones when the load failed); empty
  // files hold no rows and no columns.
  std::vector<std::string> read;
  for (size_t i = 0; i < trial->listing.files.size(); ++i) {
    const source::FileInfo& f = trial->listing.files[i];
    std::string detail = Plural(f.size, "byte");
    auto entry = ledger.find(f.key);
    const bool loaded = entry != ledger.end() && entry->second->state == job::FileState::kLoaded;
    if (loaded) detail += ", " + Plural(entry->second->rows, "row");
    if (entry != ledger.end() && entry->second->state == job::FileState::kQuarantined) {
      detail += ", quarantined: " + entry->second->error;
    }
    lines.push_back({"File", f.key, detail});
    if (f.size > 0 && !trial->readables[i].empty() && (loaded || !trial->loaded.ok())) {
      read.push_back(trial->readables[i]);
    }
  }
  if (!read.empty()) {
    MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::Connection> conn, context.db->Connect());
    MR_RETURN_IF_ERROR(job::UseDatabase(*conn, task.database));
    AddReading(*conn, trial->spec, read, context.rows_shown, &lines);
  }

  for (const job::FilteredRow& row : filtered) {
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

}  // namespace millrace::files
