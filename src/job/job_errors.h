// Job error codes: what a task or job statement failed with, in the vocabulary of Doris's
// ErrorMsg ({"code": "...", "msg": "..."}, SPEC section 3).
//
// Contract
// - The code is set where the error is made (JobError) as the Status's typed detail
//   (ErrorDomain::kJob); the task runner and the scheduler branch on JobErrorOf(status), never
//   on the message. The message is kept whole.
// - JobErrorName is the stable upper-case name shown in ErrorMsg and stored in the catalog.
#pragma once

#include <optional>
#include <string_view>

#include "common/status.h"

namespace millrace::job {

enum class JobErrorCode : int32_t {
  kLoad = 1,            // LOAD_ERR: a file or batch could not be loaded
  kGetRemoteData,       // GET_REMOTE_DATA_ERROR: listing or downloading failed
  kTooManyFailureRows,  // TOO_MANY_FAILURE_ROWS_ERR: more rows filtered than allowed
  kManualPause,         // MANUAL_PAUSE_ERR: paused by a user
  kCannotResume,        // CANNOT_RESUME_ERR: the definition no longer works
  kSuperseded,          // the job was paused, altered or dropped while the task ran
  kAccessDenied,        // ACCESS_DENIED_ERR: the definer lost a privilege the job needs
};

std::string_view JobErrorName(JobErrorCode code);
// The code whose name is `name`; nullopt for an unknown name.
std::optional<JobErrorCode> ParseJobErrorName(std::string_view name);

// `cause` carrying `code` as its detail (its code and message unchanged).
Status JobError(JobErrorCode code, const Status& cause);
// CANCELLED with code kSuperseded: the job was paused, altered or dropped while the task ran.
Status SupersededError();
// The job error code of `status`, if it carries one.
std::optional<JobErrorCode> JobErrorOf(const Status& status);

// True for failures that retrying the task cannot fix: a superseded task, an interrupted
// statement, too many filtered rows.
bool IsFinalTaskError(const Status& status);
// True when the task's batch is stale: a file changed since it was listed or while it was read
// (kGetRemoteData with ABORTED). Retrying the same batch cannot help; listing again can.
bool IsStaleBatch(const Status& status);

// The job may pause after the error and resume itself later (SPEC: not after a manual pause,
// too many bad rows, or a definition that cannot run).
bool AllowsAutoResume(JobErrorCode code);

}  // namespace millrace::job
