// TaskPolicy: how hard a job tries before it gives up, and how it comes back (SPEC section 3:
// a failing task is retried task_retries times, then the job is PAUSED and resumes itself after
// min(2^n * auto_resume_base, auto_resume_cap), up to auto_resume_limit times).
#pragma once

#include <chrono>

namespace millrace::job {

struct TaskPolicy {
  int task_retries = 3;
  std::chrono::milliseconds retry_backoff{500};  // times the attempt number
  int task_history = 100;                        // task records kept per job
  std::chrono::seconds auto_resume_base{10};
  std::chrono::seconds auto_resume_cap{300};
  int auto_resume_limit = 10;
  // How often a PAUSED job (not about to resume by itself) is asked what its source holds
  // upstream meanwhile (JobSource::WhilePaused), for JobRuntimeMsg.
  std::chrono::seconds paused_check{60};
};

}  // namespace millrace::job
