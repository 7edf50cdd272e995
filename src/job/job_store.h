// JobStore: where the job layer keeps what must survive a restart: jobs, their task history,
// file ledgers and reading marks. It is one of the catalog's three stores, beside
// access::UserStore (users and grants) and access::AuditStore (the audit log); the job layer
// depends on this interface only. The implementation is catalog::SqlJobStore (src/catalog/),
// over the embedded database file (beside the users' tables) or, in cluster mode, PostgreSQL;
// wired by the server (cli).
//
// Contract
// - The store is open (its schema created or migrated: catalog/catalog_version.h) before the
//   job layer is given it; opening is the catalog's business, not the job layer's.
// - Each method is one transaction of its own: it commits whole or not at all.
// - Writes that must commit with a task's rows (offset, ledger, task record) do not go through
//   this interface but through the job's Sink (sink.h), inside the task's transaction.
// - Thread-safety: all methods may be called concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "job/job_model.h"

namespace millrace::job {

class JobStore {
 public:
  virtual ~JobStore() = default;

  // Every job, by id, with its properties parsed.
  virtual Result<std::vector<JobRecord>> LoadJobs() = 0;
  // One job, as LoadJobs reads it; NOT_FOUND when the store has no such job.
  virtual Result<JobRecord> LoadJob(int64_t job_id) = 0;
  // The newest `limit` tasks of a job, oldest first.
  virtual Result<std::vector<TaskRecord>> LoadTasks(int64_t job_id, int limit) = 0;

  virtual Status InsertJob(const JobRecord& job) = 0;
  // Writes every mutable field of the job (state, epoch, offsets, counters, errors, statement,
  // properties). NOT_FOUND when the job is not in the store; ABORTED, writing nothing, when the
  // stored epoch is newer than the record's: a stored epoch never goes back, so a server that
  // lost the job (cluster mode: another took its lease, which moved the epoch past every epoch
  // the server's own statements reach, pgcatalog/leases.h) cannot overwrite the row of the
  // job's new holder.
  virtual Status SaveJob(const JobRecord& job) = 0;
  // An ALTER JOB that set the offset: SaveJob and, in the same transaction, every file of the
  // job's ledger after the new offset marked RETRYING: the job loads each of them again from
  // there (a file source otherwise passes over files its ledger holds after the offset, which
  // concurrent tasks committed ahead of it: file_job_source.h).
  virtual Status SaveJobFromOffset(const JobRecord& job) = 0;
  // The job and everything recorded of it (tasks, ledger, filtered rows, reading marks).
  virtual Status DeleteJob(int64_t job_id) = 0;

  // The job's ledger, by key; only entries in `state` when given.
  virtual Result<std::vector<LedgerEntry>> LedgerEntries(int64_t job_id,
                                                         std::optional<FileState> state) = 0;
  // Up to `limit` ledger entries of the job with keys after `after`, in key order; only those
  // in `state` when given, and whose key contains `search` when it is not empty.
  virtual Result<std::vector<LedgerEntry>> LedgerPage(int64_t job_id, const std::string& after,
                                                      int64_t limit, std::optional<FileState> state,
                                                      const std::string& search) = 0;
  // Up to `limit` filtered rows of the job after `after`, in (task_id, file, line) order.
  virtual Result<std::vector<FilteredRow>> FilteredRowsPage(int64_t job_id,
                                                            const FilteredRow& after,
                                                            int64_t limit) = 0;
  // How many files of each job's ledger are in `state`, by job id (jobs with none left out).
  virtual Result<std::map<int64_t, int64_t>> CountFiles(FileState state) = 0;
  // How many QUARANTINED files of each job there are by reason (LedgerEntry::reason; "UNKNOWN"
  // for files quarantined before reasons were recorded), by job id.
  virtual Result<std::map<int64_t, std::map<std::string, int64_t>>> CountQuarantinedByReason() = 0;
  // Records (or replaces, by key) ledger entries outside a task: files skipped or noted by
  // reconciliation, files marked for a retry.
  virtual Status RecordFiles(const std::vector<LedgerEntry>& entries) = 0;

  // Files a task is about to read, recorded before the read (replacing a mark of the same key)
  // and cleared after it: marks still there at start-up name the files the server was reading
  // when it stopped (crash_suspects.h).
  virtual Status MarkReading(int64_t job_id, const std::vector<ReadingMark>& marks) = 0;
  // Removes the marks task `task_id` of the job wrote.
  virtual Status ClearReading(int64_t job_id, int64_t task_id) = 0;
  virtual Result<std::vector<ReadingMark>> ReadingMarks(int64_t job_id) = 0;
};

}  // namespace millrace::job
