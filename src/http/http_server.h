// HttpServer: Millrace's HTTP endpoints (port 8030 by default), over cpp-httplib.
//
// Endpoints
// - GET /api/health: 200 with {"status":"ok", "version":..., "uptime_seconds":..., ...} when
//   the health check passes, 503 with "status":"unavailable" and the reason otherwise. Open to
//   anyone.
// - GET /metrics: every metric of the registry in the Prometheus text format; for a logged-in
//   user only, unless HttpServerOptions::metrics_public.
// - GET /login, POST /api/login, POST /api/logout, GET /api/session, GET /: logging in and out
//   (http_access.h). /login and /api/login are open; a browser sent to / without a login is
//   redirected to /login.
// - Routes added with PostOpen() answer anyone: their handler authenticates the request.
// - Routes added with Get() and Post() (the JSON API and console of later modules), for
//   logged-in users only (http_access.h: HTTP Basic or the session cookie, with the CSRF token
//   for Post()). The handler sees the user in HttpRequest::user. GetPage() is Get() for a page
//   a browser opens: without a login it is sent to /login rather than answered 401. A route
//   added for a method and path that already has one replaces it (the console's / replaces
//   the plain home page).
//
// Contract
// - Start() binds (port 0: any free port, see port()) and serves on background threads until
//   Stop() or destruction. Bind failures are returned, naming the address.
// - Handlers run on httplib's worker threads, concurrently: they must be thread-safe. An
//   exception escaping a handler becomes a 500 whose body names no secret.
// - Time (uptime) comes from the injected Clock, which must outlive the server.
// - TLS: with HttpServerOptions::tls the port serves HTTPS only (a plain HTTP request fails
//   its TLS handshake and the connection closes).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/json.h"
#include "common/metrics.h"
#include "common/status.h"
#include "common/tls.h"
#include "http/http_access.h"
#include "http/http_auth.h"
#include "http/http_types.h"

namespace millrace::http {

struct HttpServerOptions {
  std::string bind_address = "127.0.0.1";
  uint16_t port = 8030;
  std::shared_ptr<const TlsCredentials> tls;  // null: plain HTTP
  // Who may log in (borrowed; must outlive the server). Null: nobody, so only /api/health
  // (and /metrics when public) answer.
  HttpAuthenticator* authenticator = nullptr;
  bool metrics_public = false;  // --metrics-public: Prometheus scrapes without a password
  // Whether `user` may see job `job` (a sample labelled job="..." of /metrics): a logged-in
  // user sees only those series. Empty: every series (and always with metrics_public).
  std::function<bool(const std::string& user, const std::string& job)> may_see_job;
  SessionStoreOptions sessions;
};

struct HealthReport {
  bool healthy = true;
  std::string reason;  // why not healthy
  // Extra fields of the health document: name -> JSON value (already encoded).
  std::vector<std::pair<std::string, std::string>> fields;
};

class HttpServer {
 public:
  using HealthCheck = std::function<HealthReport()>;
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  HttpServer(HttpServerOptions options, MetricsRegistry* metrics, HealthCheck health, Clock* clock);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Adds a route for logged-in users; call before Start().
  void Get(std::string path, Handler handler);
  void GetPage(std::string path, Handler handler);
  void Post(std::string path, Handler handler);
  // A POST route open to anyone, without a login or CSRF token: its handler authenticates the
  // request itself (POST /api/s3-events: a job's event secret). Call before Start().
  void PostOpen(std::string path, Handler handler);

  Status Start();
  // The bound port (after Start).
  uint16_t port() const { return port_; }
  // Stops serving and joins the server thread; idempotent.
  void Stop();

 private:
  struct Impl;
  // Who may reach a route.
  enum class Audience { kAnyone, kUser, kUserPage };
  struct Route {
    std::string method;
    std::string path;
    Audience audience;
    Handler handler;
  };
  // Adds `route`, or replaces the route of its method and path.
  void AddRoute(Route route);
  HttpResponse Health();
  // Runs `route` for `request`, admitting it first unless the route is open to anyone.
  HttpResponse Serve(const Route& route, HttpRequest request);

  HttpServerOptions options_;
  MetricsRegistry* metrics_;
  HealthCheck health_;
  Clock* clock_;
  Clock::SteadyTime started_;
  Counter* requests_;
  Counter* auth_refusals_;
  HttpAccess access_;
  std::vector<Route> routes_;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
  uint16_t port_ = 0;
};

}  // namespace millrace::http
