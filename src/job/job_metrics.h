// Prometheus metrics of the jobs, label `job` (docs/metrics.md).
//
// Contract
// - WriteJobMetrics writes, for every job in the registry at that moment, the families below
//   from the job's published view, its duration histograms (Job::task_seconds,
//   Job::commit_seconds) and the ledger's count of quarantined files: a dropped job's series
//   are gone at the next scrape, and every family has one series per job (per outcome or unit
//   where labelled so), so the label set is bounded by the jobs that exist.
//   millrace_job_state{job,state} 1; millrace_job_files_loaded_total, _rows_loaded_total,
//   _rows_filtered_total, _bytes_loaded_total; millrace_job_files_quarantined;
//   millrace_job_tasks_total{outcome}; millrace_job_lag{unit} and millrace_job_lag_bytes;
//   millrace_job_last_success_timestamp_seconds and millrace_job_seconds_since_last_success
//   (since creation while none); millrace_job_task_duration_seconds and
//   millrace_job_commit_duration_seconds (histograms, since the server started).
// - A failure to count quarantined files leaves that family out of the scrape (logged); the
//   other families are still written.
// - Thread-safety: reads published views and atomics; never waits for a job's lock.
#pragma once

#include "common/clock.h"
#include "common/metrics.h"
#include "job/catalog_store.h"
#include "job/job_registry.h"

namespace millrace::job {

void WriteJobMetrics(const JobRegistry& registry, CatalogStore& catalog, Clock& clock,
                     MetricsWriter& out);

}  // namespace millrace::job
