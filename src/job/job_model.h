// The records of the job service: jobs, tasks, ledger entries, and their statistics.
//
// These are plain values. The catalog (job_catalog.h) persists them; the views (job_views.h)
// render them in Doris's column layout.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "job/job_properties.h"

namespace millrace::job {

enum class JobState { kPending, kRunning, kPaused, kStopped, kFinished };
enum class TaskState { kPending, kRunning, kSuccess, kFailed, kCanceled };
// RETRYING: a quarantined file the user asked to load again (ALTER JOB ... RETRY).
enum class FileState { kLoaded, kSkipped, kQuarantined, kRetrying };
enum class SourceType { kS3, kLocal };

std::string_view JobStateName(JobState state);
std::string_view TaskStateName(TaskState state);
std::string_view FileStateName(FileState state);
Result<JobState> ParseJobState(std::string_view name);

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

// Error codes of ErrorMsg (SPEC section 3).
inline constexpr std::string_view kGetRemoteDataErr = "GET_REMOTE_DATA_ERROR";
inline constexpr std::string_view kTooManyFailureRowsErr = "TOO_MANY_FAILURE_ROWS_ERR";
inline constexpr std::string_view kManualPauseErr = "MANUAL_PAUSE_ERR";
inline constexpr std::string_view kCannotResumeErr = "CANNOT_RESUME_ERR";
inline constexpr std::string_view kLoadErr = "LOAD_ERR";

struct JobRecord {
  int64_t id = 0;
  std::string name;
  std::string definer = "root";
  // The CREATE JOB statement as the user wrote it (secrets included: the job needs them to run;
  // never shown — views use masked_sql).
  std::string definition;
  std::string masked_sql;  // the INSERT ... with secrets masked, for ExecuteSql
  std::string comment;
  // The database (DuckDB schema) selected when the job was created: unqualified names in its
  // INSERT resolve there. "" means DuckDB's default schema.
  std::string database;
  JobProperties properties;
  JobState state = JobState::kPending;
  int64_t create_time_us = 0;
  std::string current_offset;  // key of the last file loaded in key order; "" none yet
  std::string end_offset;      // greatest matching key seen
  int64_t succeed_tasks = 0;
  int64_t failed_tasks = 0;
  int64_t canceled_tasks = 0;
  LoadStatistic stats;
  std::string error_code;  // "" when none
  std::string error_msg;
  std::string runtime_msg;
  int64_t last_success_time_us = 0;
  // Bumped by every PAUSE, RESUME, ALTER and DROP: a task commits only while the epoch it
  // started under is still the job's.
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
};

}  // namespace millrace::job
