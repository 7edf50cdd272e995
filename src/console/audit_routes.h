// The audit log on the HTTP port (docs/http_api.md), for administrators:
//   GET /api/audit[?limit=&before=]   events newest first: {"events":[...],"next":seq|null}
//
// Contract
// - Only holders of ADMIN_PRIV (as audit_log() in SQL): anyone else gets 403.
// - A page is one keyset query: up to `limit` (1 to 1000, default 100) events whose seq is below
//   `before` (absent: from the newest); "next" is the `before` of the next page.
#pragma once

#include "access/access_control.h"
#include "access/audit_log.h"
#include "http/http_server.h"

namespace millrace::console {

void RegisterAuditRoutes(http::HttpServer* server, access::AuditLog* audit,
                         const access::AccessControl* access);

}  // namespace millrace::console
