#include "console/audit_routes.h"

#include <nlohmann/json.hpp>

#include "common/json.h"
#include "common/strings.h"
#include "console/responses.h"
#include "job/job_api.h"

namespace millrace::console {

void RegisterAuditRoutes(http::HttpServer* server, access::AuditLog* audit,
                         const access::AccessControl* access) {
  server->Get("/api/audit", [audit, access](const http::HttpRequest& request) {
    if (access != nullptr && !access->IsAdmin(request.user)) {
      return http::JsonError(403, "the audit log is for administrators (ADMIN_PRIV)");
    }
    Result<job::ApiPage> page = job::ParseApiPage(request.Param("limit"), "");
    if (!page.ok()) return Answer(page.status());
    int64_t before = access::AuditStore::kFromNewest;
    if (const std::string text = request.Param("before"); !text.empty()) {
      const std::optional<int64_t> parsed = ParseInt64(text);
      if (!parsed) return http::JsonError(400, "before must be a page's next, not '" + text + "'");
      before = *parsed;
    }
    // One more than the page: whether another follows.
    Result<std::vector<access::AuditEvent>> events = audit->Page(before, page->limit + 1);
    if (!events.ok()) return Answer(events.status());
    const bool more = static_cast<int64_t>(events->size()) > page->limit;
    if (more) events->resize(page->limit);
    nlohmann::json out = nlohmann::json::array();
    for (const access::AuditEvent& e : *events) {
      out.push_back({{"seq", e.seq},
                     {"timeUs", e.time_us},
                     {"user", e.user},
                     {"host", e.host},
                     {"kind", e.kind},
                     {"action", e.action},
                     {"statement", e.statement},
                     {"error", e.error.empty() ? nlohmann::json() : nlohmann::json(e.error)}});
    }
    nlohmann::json next = more ? nlohmann::json(events->back().seq) : nlohmann::json();
    return Answer(RenderJson(nlohmann::json{{"events", std::move(out)}, {"next", next}}));
  });
}

}  // namespace millrace::console
