#include "job/job_model.h"

#include "common/json.h"

namespace millrace::job {

std::string_view JobStateName(JobState state) {
  switch (state) {
    case JobState::kPending:
      return "PENDING";
    case JobState::kRunning:
      return "RUNNING";
    case JobState::kPaused:
      return "PAUSED";
    case JobState::kStopped:
      return "STOPPED";
    case JobState::kFinished:
      return "FINISHED";
  }
  return "PENDING";
}

std::string_view TaskStateName(TaskState state) {
  switch (state) {
    case TaskState::kPending:
      return "PENDING";
    case TaskState::kRunning:
      return "RUNNING";
    case TaskState::kSuccess:
      return "SUCCESS";
    case TaskState::kFailed:
      return "FAILED";
    case TaskState::kCanceled:
      return "CANCELED";
  }
  return "PENDING";
}

std::string_view FileStateName(FileState state) {
  switch (state) {
    case FileState::kLoaded:
      return "LOADED";
    case FileState::kSkipped:
      return "SKIPPED";
    case FileState::kQuarantined:
      return "QUARANTINED";
    case FileState::kRetrying:
      return "RETRYING";
  }
  return "LOADED";
}

Result<JobState> ParseJobState(std::string_view name) {
  for (JobState s : {JobState::kPending, JobState::kRunning, JobState::kPaused, JobState::kStopped,
                     JobState::kFinished}) {
    if (JobStateName(s) == name) return s;
  }
  return Status::DataLoss("unknown job state '" + std::string(name) + "' in the job catalog");
}

Result<TaskState> ParseTaskState(std::string_view name) {
  for (TaskState s : {TaskState::kPending, TaskState::kRunning, TaskState::kSuccess,
                      TaskState::kFailed, TaskState::kCanceled}) {
    if (TaskStateName(s) == name) return s;
  }
  return Status::DataLoss("unknown task state '" + std::string(name) + "' in the job catalog");
}

Result<FileState> ParseFileState(std::string_view name) {
  for (FileState s :
       {FileState::kLoaded, FileState::kSkipped, FileState::kQuarantined, FileState::kRetrying}) {
    if (FileStateName(s) == name) return s;
  }
  return Status::DataLoss("unknown file state '" + std::string(name) + "' in the job catalog");
}

LoadStatistic& LoadStatistic::operator+=(const LoadStatistic& other) {
  scanned_rows += other.scanned_rows;
  load_bytes += other.load_bytes;
  file_number += other.file_number;
  file_size += other.file_size;
  filtered_rows += other.filtered_rows;
  return *this;
}

std::string LoadStatistic::ToJson() const {
  return "{\"scannedRows\":" + std::to_string(scanned_rows) +
         ",\"loadBytes\":" + std::to_string(load_bytes) +
         ",\"fileNumber\":" + std::to_string(file_number) +
         ",\"fileSize\":" + std::to_string(file_size) +
         ",\"filteredRows\":" + std::to_string(filtered_rows) + "}";
}

std::string JobRecord::ErrorMsgJson() const {
  if (error_code.empty()) return "";
  return "{\"code\":" + JsonQuote(error_code) + ",\"msg\":" + JsonQuote(error_msg) + "}";
}

std::string TaskRecord::Label() const {
  return std::to_string(job_id) + "_" + std::to_string(task_id);
}

std::string TaskRecord::RunningOffsetJson() const {
  return "{\"startFileName\":" + JsonQuote(start_file) + ",\"endFileName\":" + JsonQuote(end_file) +
         "}";
}

}  // namespace millrace::job
