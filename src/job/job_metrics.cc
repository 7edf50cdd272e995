#include "job/job_metrics.h"

#include <algorithm>
#include <map>

#include "common/logging.h"

namespace millrace::job {
namespace {

struct Published {
  std::shared_ptr<Job> job;
  std::shared_ptr<const Job::View> view;
};

// A family with one sample per job.
void PerJob(MetricsWriter& out, const std::vector<Published>& jobs, std::string_view name,
            std::string_view help, std::string_view type,
            const std::function<double(const Published&)>& value) {
  out.Family(name, help, type);
  for (const Published& p : jobs)
    out.Sample(name, {{"job", p.job->name}}, value(p));
}

// The object-store families of the jobs that read S3 (see the contract).
void WriteObjectStoreMetrics(MetricsWriter& out, const std::vector<Published>& jobs,
                             const ObjectStorePrices& prices) {
  using s3::RequestKind;
  std::vector<Published> readers;
  for (const Published& p : jobs) {
    if (p.view->row.reads_object_store) readers.push_back(p);
  }
  out.Family("millrace_job_object_store_requests_total",
             "object-store requests sent (each attempt), by kind and how they ended", "counter");
  for (const Published& p : readers) {
    const s3::RequestStats& stats = *p.job->object_store;
    for (int kind = 0; kind < s3::kRequestKinds; ++kind) {
      for (int outcome = 0; outcome < s3::kRequestOutcomes; ++outcome) {
        const auto k = static_cast<RequestKind>(kind);
        const auto o = static_cast<s3::RequestOutcome>(outcome);
        out.Sample("millrace_job_object_store_requests_total",
                   {{"job", p.job->name},
                    {"kind", std::string(s3::RequestKindName(k))},
                    {"status", std::string(s3::RequestOutcomeName(o))}},
                   static_cast<double>(stats.requests(k, o)));
      }
    }
  }
  PerJob(out, readers, "millrace_job_object_store_retries_total",
         "object-store requests retried after a transient failure", "counter",
         [](const Published& p) { return static_cast<double>(p.job->object_store->retries()); });
  PerJob(out, readers, "millrace_job_object_store_bytes_downloaded_total",
         "bytes of objects downloaded (bytes fetched again after a broken transfer included)",
         "counter", [](const Published& p) {
           return static_cast<double>(p.job->object_store->bytes_downloaded());
         });
  PerJob(out, readers, "millrace_job_object_store_estimated_cost_total",
         "estimated cost of the object-store requests, at the configured prices per 1,000",
         "counter", [&](const Published& p) {
           const s3::RequestStats& stats = *p.job->object_store;
           const double lists = static_cast<double>(stats.requests(RequestKind::kList));
           const double gets = static_cast<double>(stats.requests(RequestKind::kGet) +
                                                   stats.requests(RequestKind::kHead));
           return (lists * prices.list_per_1000 + gets * prices.get_per_1000) / 1000;
         });
}

}  // namespace

void WriteJobMetrics(const JobRegistry& registry, JobStore& catalog, Clock& clock,
                     const ObjectStorePrices& prices, MetricsWriter& out) {
  std::vector<Published> jobs;
  for (std::shared_ptr<Job>& job : registry.All()) {
    std::shared_ptr<const Job::View> view = job->view();
    if (view != nullptr) jobs.push_back({std::move(job), std::move(view)});
  }
  auto record = [](const Published& p) -> const JobRecord& { return p.view->row.record; };

  out.Family("millrace_job_state", "the job's state (1 for the current one)", "gauge");
  for (const Published& p : jobs) {
    out.Sample("millrace_job_state",
               {{"job", p.job->name}, {"state", std::string(JobStateName(record(p).state))}}, 1);
  }
  PerJob(out, jobs, "millrace_job_files_loaded_total", "files loaded", "counter",
         [&](const Published& p) { return static_cast<double>(record(p).stats.file_number); });
  PerJob(out, jobs, "millrace_job_rows_loaded_total", "rows loaded into the target", "counter",
         [&](const Published& p) {
           const LoadStatistic& s = record(p).stats;
           return static_cast<double>(s.scanned_rows - s.filtered_rows);
         });
  PerJob(out, jobs, "millrace_job_rows_filtered_total",
         "rows filtered out (bad rows, or rows the WHERE clause left out)", "counter",
         [&](const Published& p) { return static_cast<double>(record(p).stats.filtered_rows); });
  PerJob(out, jobs, "millrace_job_bytes_loaded_total", "bytes of the files loaded", "counter",
         [&](const Published& p) { return static_cast<double>(record(p).stats.load_bytes); });

  Result<std::map<int64_t, int64_t>> quarantined = catalog.CountFiles(FileState::kQuarantined);
  if (quarantined.ok()) {
    PerJob(out, jobs, "millrace_job_files_quarantined",
           "files set aside by on_error = skip_file, not yet retried", "gauge",
           [&](const Published& p) {
             auto it = quarantined->find(p.job->id);
             return it == quarantined->end() ? 0.0 : static_cast<double>(it->second);
           });
  } else {
    MR_LOG(kWarning) << "metrics: cannot count quarantined files: "
                     << quarantined.status().ToString();
  }

  auto by_reason = catalog.CountQuarantinedByReason();
  if (by_reason.ok()) {
    out.Family("millrace_job_files_quarantined_by_reason",
               "quarantined files by why they are bad (load/bad_file.h)", "gauge");
    for (const Published& p : jobs) {
      auto job = by_reason->find(p.job->id);
      if (job == by_reason->end()) continue;
      for (const auto& [reason, count] : job->second) {
        out.Sample("millrace_job_files_quarantined_by_reason",
                   {{"job", p.job->name}, {"reason", reason}}, static_cast<double>(count));
      }
    }
  } else {
    MR_LOG(kWarning) << "metrics: cannot count quarantined files by reason: "
                     << by_reason.status().ToString();
  }

  out.Family("millrace_job_tasks_total", "tasks ended, by outcome", "counter");
  for (const Published& p : jobs) {
    const JobRecord& r = record(p);
    for (const auto& [outcome, count] :
         {std::pair{"succeeded", r.succeed_tasks}, std::pair{"failed", r.failed_tasks},
          std::pair{"canceled", r.canceled_tasks}}) {
      out.Sample("millrace_job_tasks_total", {{"job", p.job->name}, {"outcome", outcome}},
                 static_cast<double>(count));
    }
  }
  PerJob(out, jobs, "millrace_job_running_tasks",
         "tasks of the job running now (up to max_concurrent_tasks)", "gauge",
         [](const Published& p) { return static_cast<double>(p.view->RunningTasks()); });
  out.Family("millrace_job_lag",
             "what the source holds beyond the job's offset: files, or changes of a change "
             "stream",
             "gauge");
  for (const Published& p : jobs) {
    out.Sample("millrace_job_lag",
               {{"job", p.job->name}, {"unit", std::string(p.view->row.lag_unit)}},
               static_cast<double>(p.view->row.lag_items));
  }
  PerJob(out, jobs, "millrace_job_lag_bytes",
         "bytes beyond the job's offset: of files, or of the source's log for a change stream "
         "(replication lag)",
         "gauge", [](const Published& p) { return static_cast<double>(p.view->row.lag_bytes); });

  const int64_t now_us = MicrosSinceEpoch(clock.WallNow());
  std::vector<Published> file_jobs;
  for (const Published& p : jobs) {
    if (p.view->row.lag_unit == "files") file_jobs.push_back(p);
  }
  PerJob(out, file_jobs, "millrace_job_oldest_unloaded_file_age_seconds",
         "age (by its last-modified time) of the oldest file the job listed and has not loaded; "
         "0 when none",
         "gauge", [&](const Published& p) {
           const int64_t oldest = p.view->row.oldest_unloaded_us;
           // A store whose clock runs ahead of ours must not make the age negative.
           return oldest > 0 ? static_cast<double>(std::max<int64_t>(0, now_us - oldest)) / 1e6
                             : 0.0;
         });
  WriteObjectStoreMetrics(out, jobs, prices);
  PerJob(out, jobs, "millrace_job_last_success_timestamp_seconds",
         "when the job's last task committed (0: never)", "gauge", [&](const Published& p) {
           return static_cast<double>(record(p).last_success_time_us) / 1e6;
         });
  PerJob(out, jobs, "millrace_job_seconds_since_last_success",
         "seconds since the job's last task committed, or since it was created", "gauge",
         [&](const Published& p) {
           const JobRecord& r = record(p);
           const int64_t since =
               r.last_success_time_us > 0 ? r.last_success_time_us : r.create_time_us;
           return static_cast<double>(now_us - since) / 1e6;
         });

  out.Family("millrace_job_task_duration_seconds",
             "tasks from start to end, any outcome (since the server started)", "histogram");
  for (const Published& p : jobs) {
    out.Histogram("millrace_job_task_duration_seconds", {{"job", p.job->name}},
                  p.job->task_seconds.Read());
  }
  out.Family("millrace_job_commit_duration_seconds",
             "commits of the tasks' transactions (since the server started)", "histogram");
  for (const Published& p : jobs) {
    out.Histogram("millrace_job_commit_duration_seconds", {{"job", p.job->name}},
                  p.job->commit_seconds.Read());
  }
  out.Family("millrace_job_event_wake_to_commit_seconds",
             "from an event waking the job (a local file landing, an S3 event notification) to "
             "its next commit (since the server started)",
             "histogram");
  for (const Published& p : jobs) {
    out.Histogram("millrace_job_event_wake_to_commit_seconds", {{"job", p.job->name}},
                  p.job->wake_to_commit_seconds.Read());
  }
}

}  // namespace millrace::job
