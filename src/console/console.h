// The web console on the HTTP port (docs/console.md): a single page served from assets built
// into the binary, over the jobs API (job_routes.h) and the audit API (audit_routes.h).
//
// Contract
// - RegisterConsole adds, for logged-in users: GET / (the console's page; a browser without a
//   login is sent to /login, and the login form comes back here), GET /assets/<file> (its
//   scripts and styles, console/assets.h), the jobs API with its actions, and the audit API.
// - Pages carry a Content-Security-Policy that allows only this server's own scripts and
//   styles, and refuse to be framed: nothing is fetched from elsewhere, and a page cannot be
//   turned against its user by another site.
// - The parts are borrowed and must outlive the server.
#pragma once

#include "access/access_control.h"
#include "access/audit_log.h"
#include "http/http_server.h"

namespace millrace::job {
class JobService;
}  // namespace millrace::job

namespace millrace::console {

struct ConsoleConfig {
  job::JobService* jobs = nullptr;                // required
  access::AuditLog* audit = nullptr;              // null: no audit page, actions not recorded
  const access::AccessControl* access = nullptr;  // null: no privilege checks (tests, tools)
};

void RegisterConsole(http::HttpServer* server, const ConsoleConfig& config);

}  // namespace millrace::console
