// The jobs API on the HTTP port (docs/http_api.md), for logged-in users:
//   GET /api/jobs[?limit=&after=]                       the jobs the user may see, by name
//   GET /api/jobs/{name}                                one job, with its task history
//   GET /api/jobs/{name}/tasks                          its task history
//   GET /api/jobs/{name}/files[?limit=&after=&state=&search=]   its file ledger, by key
//   GET /api/jobs/{name}/filtered_rows[?limit=&after=]  the rows its tasks filtered out
//   POST /api/jobs/{name}/pause                         PAUSE JOB
//   POST /api/jobs/{name}/resume                        RESUME JOB
//   POST /api/jobs/{name}/retry  {"files":["key",...]} or {"all":true}   ALTER JOB ... RETRY
//
// Contract
// - Bodies are the documents of job/job_api.h; an action answers {"message": "..."}. Errors are
//   {"error": "..."} (console/responses.h): 404 for a job that does not exist or the user may
//   not see, 400 for a bad parameter, 403 for an action the user lacks the privilege for,
//   409 for a job in the wrong state, 500 otherwise.
// - An action is the job statement it names, run as the request's user from its address, with
//   the same privilege checks as over SQL (job_access.h), and recorded in `audit` (when not
//   null) as the statement would be.
// - Thread-safety: handlers run on the HTTP server's threads; the service must outlive it.
#pragma once

#include "access/audit_log.h"
#include "http/http_server.h"
#include "job/job_service.h"

namespace millrace::console {

void RegisterJobRoutes(http::HttpServer* server, job::JobService* jobs, access::AuditLog* audit);

}  // namespace millrace::console
