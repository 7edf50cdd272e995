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
//   millrace_job_commit_duration_seconds (histograms, since the server started);
//   millrace_job_oldest_unloaded_file_age_seconds (file jobs: the clock's wall time minus the
//   last-modified time of the oldest file counted in the lag, 0 when none).
// - Object-store families, only for jobs whose definition reads S3 (none for local files or
//   change streams), from Job::object_store since the server started:
//   millrace_job_object_store_requests_total{kind,status} (every kind and status written, 0
//   included: 3 x 4 series a job), _retries_total, _bytes_downloaded_total and
//   _estimated_cost_total (LIST requests at prices.list_per_1000, GET and HEAD at
//   prices.get_per_1000, per 1,000 requests, whatever their status).
// - A failure to count quarantined files leaves that family out of the scrape (logged); the
//   other families are still written.
// - Thread-safety: reads published views and atomics; never waits for a job's lock.
#pragma once

#include "common/clock.h"
#include "common/metrics.h"
#include "job/job_registry.h"
#include "job/job_store.h"

namespace millrace::job {

// What object-store requests cost, per 1,000 requests (`serve --s3-list-price-per-1000`,
// `--s3-get-price-per-1000`); the defaults are AWS S3 Standard's (us-east-1), in US dollars.
struct ObjectStorePrices {
  double list_per_1000 = 0.005;
  double get_per_1000 = 0.0004;  // HEAD too, as AWS prices it
};

void WriteJobMetrics(const JobRegistry& registry, JobStore& catalog, Clock& clock,
                     const ObjectStorePrices& prices, MetricsWriter& out);

}  // namespace millrace::job
