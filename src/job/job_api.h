// The JSON documents of the jobs API (docs/http_api.md), served on the HTTP port for the
// console: the jobs a user may see, one job with its tasks, its file ledger and its filtered
// rows paged by key.
//
// Contract
// - Every call is made for the user the request was admitted as. A job on a table the user
//   may not read (SELECT_PRIV, as jobs() shows) is NOT_FOUND, like one that does not exist.
// - Pages (ApiPage): up to `limit` items (1 to 1000) whose key is greater than `after` ("" from
//   the first), in key order; the document's "next" is the `after` of the next page, or null
//   when none follows. A page is one query (keyset: it costs O(limit), wherever it starts),
//   so every page of a ledger that does not change is the same size but the last, and the
//   pages together hold each entry once.
// - Errors: NOT_FOUND, or INVALID_ARGUMENT naming the parameter (limit, state, after).
// - Thread-safety: the functions read published views and the catalog: any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "job/job_access.h"
#include "job/job_registry.h"
#include "job/job_store.h"
#include "job/scheduler.h"

namespace millrace::job {

struct ApiPage {
  std::string after;
  int64_t limit = 100;
};
inline constexpr int64_t kMaxApiPage = 1000;

// Reads `limit` and `after` from request parameters (text, "" when absent).
Result<ApiPage> ParseApiPage(const std::string& limit, const std::string& after);

struct JobApiContext {
  const JobRegistry* registry;
  JobStore* catalog;
  const JobAccess* access;
  Scheduler* scheduler;  // for when a job's next turn is due
  Clock* clock;
};

// The most recent ended tasks a job document's "throughput" holds (the console's sparkline).
inline constexpr size_t kThroughputTasks = 30;

// {"jobs":[{job}...],"next":...}, by name. Each job also has "nextPollInSeconds" (null unless the
// job is RUNNING and its next turn is scheduled, i.e. not running now) and "throughput":
// {"timeUs":[...],"rows":[...]}, the finish time and rows loaded of its last kThroughputTasks ended
// tasks, oldest first.
Result<std::string> ApiJobs(const JobApiContext& ctx, const std::string& user, const ApiPage& page);
// OK when `user` may see job `name` (its table is one the user may read); otherwise NOT_FOUND
// worded as for a job that does not exist, so that a name tells nothing of a job the user may
// not see. For the /metrics series of a job and the console's job actions.
Status ApiJobVisible(const JobApiContext& ctx, const std::string& user, const std::string& name);
// {job..., "tasks":[{task}...]} (the task history, oldest first), with the fields ApiJobs adds.
Result<std::string> ApiJob(const JobApiContext& ctx, const std::string& user,
                           const std::string& name);
// {"files":[{file}...],"next":...}: the ledger by key; only entries in `state` when given
// (LOADED, SKIPPED, QUARANTINED, RETRYING), and only keys containing `search` when not empty.
Result<std::string> ApiFiles(const JobApiContext& ctx, const std::string& user,
                             const std::string& name, const ApiPage& page, const std::string& state,
                             const std::string& search);

// {"tasks":[{task}...]}: the task history, oldest first.
Result<std::string> ApiTasks(const JobApiContext& ctx, const std::string& user,
                             const std::string& name);
// {"rows":[{row}...],"next":...}: the rows the job's tasks filtered out, in (task, file, line)
// order; a page's key is "<taskId>/<line>/<file>".
Result<std::string> ApiFilteredRows(const JobApiContext& ctx, const std::string& user,
                                    const std::string& name, const ApiPage& page);

}  // namespace millrace::job
