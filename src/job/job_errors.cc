#include "job/job_errors.h"

#include <array>
#include <utility>

namespace millrace::job {
namespace {

constexpr std::array<std::pair<JobErrorCode, std::string_view>, 7> kNames = {{
    {JobErrorCode::kLoad, "LOAD_ERR"},
    {JobErrorCode::kGetRemoteData, "GET_REMOTE_DATA_ERROR"},
    {JobErrorCode::kTooManyFailureRows, "TOO_MANY_FAILURE_ROWS_ERR"},
    {JobErrorCode::kManualPause, "MANUAL_PAUSE_ERR"},
    {JobErrorCode::kCannotResume, "CANNOT_RESUME_ERR"},
    {JobErrorCode::kAccessDenied, "ACCESS_DENIED_ERR"},
    {JobErrorCode::kSuperseded, "TASK_SUPERSEDED"},
}};

}  // namespace

std::string_view JobErrorName(JobErrorCode code) {
  for (const auto& [c, name] : kNames) {
    if (c == code) return name;
  }
  return "LOAD_ERR";
}

std::optional<JobErrorCode> ParseJobErrorName(std::string_view name) {
  for (const auto& [c, n] : kNames) {
    if (n == name) return c;
  }
  return std::nullopt;
}

Status JobError(JobErrorCode code, const Status& cause) {
  return cause.WithDetail({ErrorDomain::kJob, static_cast<int32_t>(code), 0});
}

Status SupersededError() {
  return JobError(JobErrorCode::kSuperseded,
                  Status::Cancelled("the job was paused, altered or dropped"));
}

std::optional<JobErrorCode> JobErrorOf(const Status& status) {
  if (status.ok() || status.detail().domain != ErrorDomain::kJob) return std::nullopt;
  return static_cast<JobErrorCode>(status.detail().code);
}

bool IsFinalTaskError(const Status& status) {
  if (status.code() == StatusCode::kCancelled) return true;
  const auto code = JobErrorOf(status);
  return code == JobErrorCode::kSuperseded || code == JobErrorCode::kTooManyFailureRows;
}

bool IsStaleBatch(const Status& status) {
  return status.code() == StatusCode::kAborted &&
         JobErrorOf(status) == JobErrorCode::kGetRemoteData;
}

bool AllowsAutoResume(JobErrorCode code) {
  return code != JobErrorCode::kManualPause && code != JobErrorCode::kTooManyFailureRows &&
         code != JobErrorCode::kCannotResume && code != JobErrorCode::kAccessDenied;
}

}  // namespace millrace::job
