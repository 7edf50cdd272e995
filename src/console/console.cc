#include "console/console.h"

#include <string>

#include "console/assets.h"
#include "console/audit_routes.h"
#include "console/job_routes.h"

namespace millrace::console {
namespace {

// Only this server's own scripts and styles; no frames, no plug-ins, forms post back here.
constexpr std::string_view kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

std::optional<std::string_view> Asset(std::string_view path) {
  for (const EmbeddedAsset& asset : ConsoleAssets()) {
    if (asset.path == path) return asset.body;
  }
  return std::nullopt;
}

http::HttpResponse Serve(std::string_view path) {
  std::optional<std::string_view> body = Asset(path);
  if (!body) return http::JsonError(404, "no such file: " + std::string(path));
  return http::HttpResponse{200,
                            std::string(ContentType(path)),
                            std::string(*body),
                            {{"Content-Security-Policy", std::string(kContentSecurityPolicy)},
                             {"X-Content-Type-Options", "nosniff"},
                             {"X-Frame-Options", "DENY"},
                             {"Referrer-Policy", "same-origin"},
                             {"Cache-Control", "no-cache"}}};
}

}  // namespace

std::string_view ContentType(std::string_view path) {
  if (path.ends_with(".html")) return "text/html; charset=utf-8";
  if (path.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (path.ends_with(".css")) return "text/css; charset=utf-8";
  return "application/octet-stream";
}

void RegisterConsole(http::HttpServer* server, const ConsoleConfig& config) {
  server->GetPage("/", [](const http::HttpRequest&) { return Serve("/index.html"); });
  server->Get("/assets/[^/]+", [](const http::HttpRequest& request) {
    // index.html is the page at /, not an asset of its own.
    if (request.path == "/assets/index.html") return Serve("");
    return Serve(std::string_view(request.path).substr(std::string_view("/assets").size()));
  });
  RegisterJobRoutes(server, config.jobs, config.audit);
  if (config.audit != nullptr) RegisterAuditRoutes(server, config.audit, config.access);
}

}  // namespace millrace::console
