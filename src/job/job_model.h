// The records of the job service: jobs, tasks, ledger entries, and their statistics.
//
// These are plain values. A catalog store (job_store.h) persists them; the registry
// (job_registry.h) holds the live ones; the views (job_views.h) render them in Doris's column
// layout.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "job/job_properties.h"
#include "job/offset.h"

namespace millrace::job {

enum class JobState { kPending, kRunning, kPaused, kStopped, kFinished };
enum class TaskState { kPending, kRunning, kSuccess, kFailed, kCanceled };
// RETRYING: a quarantined file the user asked to load again (ALTER JOB ... RETRY).
enum class FileState { kLoaded, kSkipped, kQuarantined, kRetrying };

std::string_view JobStateName(JobState state);
std::string_view TaskStateName(TaskState state);
std::string_view FileStateName(FileState state);
Result<JobState> ParseJobState(std::string_view name);
Result<TaskState> ParseTaskState(std::string_view name);
Result<FileState> ParseFileState(std::string_view name);

struct LoadStatistic {
  int64_t scanned_rows = 0;
  int64_t load_bytes = 0;
  int64_t file_number = 0;
  int64_t file_size = 0;
  int64_t filtered_rows = 0;

  LoadStatistic& operator+=(const LoadStatistic& other);
  // {"scannedRows":..,"loadBytes":..,"fileNumber":..,"fileSize":..,"filteredRows":..}
  std::string ToJson() const;
};

// The epochs of one server's time with a job in a cluster: a lease taken moves the job's epoch
// to the next multiple of this (pgcatalog::Leases::Take).
inline constexpr int64_t kEpochsPerLease = int64_t{1} << 32;

struct JobRecord {
  int64_t id = 0;
  std::string name;
  std::string definer = "root";
  // The job's INSERT ... SELECT as the user wrote it, credentials included: the job needs them
  // to run after a restart. Never shown: views use masked_sql.
  std::string insert_sql;
  // Why the stored statement could not be opened (the data directory's key is not the one it
  // was sealed with); "" normally. Such a job loads PAUSED with this error, insert_sql empty,
  // and its stored statement is kept as it is until an ALTER JOB ... DO replaces it.
  std::string statement_error;
  std::string masked_sql;  // the INSERT ... with secrets masked, for ExecuteSql
  std::string comment;
  // The database (DuckDB schema) selected when the job was created: unqualified names in its
  // INSERT resolve there. "" means DuckDB's default schema.
  std::string database;
  JobProperties properties;
  JobState state = JobState::kPending;
  int64_t create_time_us = 0;
  Offset current_offset;  // where the next batch starts (files: the last key loaded in order)
  Offset end_offset;      // the newest position seen in the source (files: greatest key)
  int64_t succeed_tasks = 0;
  int64_t failed_tasks = 0;
  int64_t canceled_tasks = 0;
  LoadStatistic stats;
  std::string error_code;  // JobErrorName of the error that paused the job; "" when none
  std::string error_msg;
  std::string runtime_msg;
  int64_t last_success_time_us = 0;
  // Bumped by every PAUSE, RESUME, ALTER and DROP: a task commits only while the epoch it
  // started under is still the job's. In a cluster each lease taken starts a block of
  // kEpochsPerLease (pgcatalog/leases.h), which the holder's own bumps never leave.
  int64_t epoch = 0;
  int64_t auto_resume_count = 0;
  bool manual_pause = false;
  int64_t next_task_id = 1;
  // Keys at or below this one are never late files: the job was told to start after it (the
  // `offset` property at CREATE, or an ALTER that set the offset).
  std::string reconcile_floor;

  // {"code":"..","msg":".."} or "" when no error.
  std::string ErrorMsgJson() const;
};

struct TaskRecord {
  int64_t task_id = 0;
  int64_t job_id = 0;
  std::string job_name;
  TaskState state = TaskState::kPending;
  std::string error_msg;
  int64_t create_time_us = 0;
  int64_t start_time_us = 0;
  int64_t finish_time_us = 0;
  LoadStatistic stats;
  std::string first_error_msg;
  std::string start_file;
  std::string end_file;

  // "<jobId>_<taskId>"
  std::string Label() const;
  // {"startFileName":"..","endFileName":".."}
  std::string RunningOffsetJson() const;
};

// A row a task filtered out (bad value, or left out by the job's WHERE).
struct FilteredRow {
  int64_t task_id = 0;
  std::string file;
  int64_t line = 0;
  std::string column_name;
  std::string value;
  std::string reason;
  int64_t time_us = 0;
};

struct LedgerEntry {
  int64_t job_id = 0;
  std::string key;
  std::string etag;
  int64_t size = 0;
  FileState state = FileState::kLoaded;
  int64_t task_id = 0;
  int64_t rows = 0;
  int64_t load_time_us = 0;
  std::string error;
  // QUARANTINED: why, as load::BadFileName names it ("JSON_TOO_DEEP"); "" otherwise.
  std::string reason;
};

// A file a task is reading (JobStore::MarkReading): written before the read and cleared
// after it, so a mark found at start-up names a file the server was reading when it stopped
// (crash_suspects.h).
struct ReadingMark {
  std::string key;
  int64_t task_id = 0;
  // How many files the job was reading together: the task's, one more when other tasks of the
  // job may have been reading too (max_concurrent_tasks); 1 only for a file read alone.
  int64_t batch_files = 0;
  int64_t alone_crashes = 0;  // earlier stops while this file was read alone
  int64_t started_us = 0;
};

}  // namespace millrace::job
