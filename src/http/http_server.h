// HttpServer: Millrace's HTTP endpoints (port 8030 by default), over cpp-httplib.
//
// Endpoints
// - GET /api/health: 200 with {"status":"ok", "version":..., "uptime_seconds":..., ...} when
//   the health check passes, 503 with "status":"unavailable" and the reason otherwise.
// - GET /metrics: every metric of the registry in the Prometheus text format.
// - GET routes added with Get() (the JSON API of later modules).
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

namespace millrace::http {

struct HttpServerOptions {
  std::string bind_address = "127.0.0.1";
  uint16_t port = 8030;
  std::shared_ptr<const TlsCredentials> tls;  // null: plain HTTP
};

struct HealthReport {
  bool healthy = true;
  std::string reason;  // why not healthy
  // Extra fields of the health document: name -> JSON value (already encoded).
  std::vector<std::pair<std::string, std::string>> fields;
};

struct HttpRequest {
  std::string path;
  std::map<std::string, std::string> params;  // query parameters
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

class HttpServer {
 public:
  using HealthCheck = std::function<HealthReport()>;
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  HttpServer(HttpServerOptions options, MetricsRegistry* metrics, HealthCheck health, Clock* clock);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Adds a GET route; call before Start().
  void Get(std::string path, Handler handler);

  Status Start();
  // The bound port (after Start).
  uint16_t port() const { return port_; }
  // Stops serving and joins the server thread; idempotent.
  void Stop();

 private:
  struct Impl;
  HttpResponse Health();

  HttpServerOptions options_;
  MetricsRegistry* metrics_;
  HealthCheck health_;
  Clock* clock_;
  Clock::SteadyTime started_;
  Counter* requests_;
  std::vector<std::pair<std::string, Handler>> routes_;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
  uint16_t port_ = 0;
};

}  // namespace millrace::http
