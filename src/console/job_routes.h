// The jobs API on the HTTP port (docs/http_api.md), for logged-in users:
//   GET /api/jobs[?limit=&after=]                       the jobs the user may see, by name
//   GET /api/jobs/{name}                                one job, with its task history
//   GET /api/jobs/{name}/tasks                          its task history
//   GET /api/jobs/{name}/files[?limit=&after=&state=&search=]   its file ledger, by key
//   GET /api/jobs/{name}/filtered_rows[?limit=&after=]  the rows its tasks filtered out
//
// Contract
// - Bodies are the documents of job/job_api.h. Errors are {"error": "..."}: 404 for a job
//   that does not exist or the user may not see, 400 for a bad parameter, 500 otherwise.
// - Thread-safety: handlers run on the HTTP server's threads; the service must outlive it.
#pragma once

#include "http/http_server.h"
#include "job/job_service.h"

namespace millrace::console {

void RegisterJobRoutes(http::HttpServer* server, job::JobService* jobs);

}  // namespace millrace::console
