#include "http/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>

#include "common/json.h"
#include "common/logging.h"
#include "common/strings.h"
#include "common/version.h"

namespace millrace::http {
namespace {

constexpr size_t kMaxRequestBody = 64 * 1024;

}  // namespace

struct HttpServer::Impl {
  std::unique_ptr<httplib::Server> server;  // an httplib::SSLServer with TLS; set by Start
};

HttpServer::HttpServer(HttpServerOptions options, MetricsRegistry* metrics, HealthCheck health,
                       Clock* clock)
    : options_(std::move(options)),
      metrics_(metrics),
      health_(std::move(health)),
      clock_(clock),
      started_(clock->SteadyNow()),
      requests_(metrics->AddCounter("millrace_http_requests_total", "HTTP requests served")),
      auth_refusals_(metrics->AddCounter("millrace_http_auth_refusals_total",
                                         "HTTP requests refused for want of a valid login")),
      access_(options_.authenticator, clock, options_.sessions),
      impl_(std::make_unique<Impl>()) {
  const auto metrics_audience = options_.metrics_public ? Audience::kAnyone : Audience::kUser;
  routes_.push_back(
      {"GET", "/api/health", Audience::kAnyone, [this](const HttpRequest&) { return Health(); }});
  routes_.push_back(
      {"GET", "/metrics", metrics_audience, [this](const HttpRequest& request) {
         // A logged-in user sees the series of the jobs it may see (job names are not for
         // everyone); a public scrape sees every series, as the operator chose.
         SampleFilter keep;
         if (!options_.metrics_public && options_.may_see_job) {
           // A job has many samples: each is decided once per render.
           auto decided = std::make_shared<std::map<std::string, bool, std::less<>>>();
           keep = [this, user = request.user, decided](const Labels& labels) {
             for (const auto& [key, value] : labels) {
               if (key != "job") continue;
               auto it = decided->find(value);
               if (it == decided->end()) {
                 it = decided->emplace(value, options_.may_see_job(user, value)).first;
               }
               return it->second;
             }
             return true;
           };
         }
         return HttpResponse{
             200, "text/plain; version=0.0.4; charset=utf-8", metrics_->RenderPrometheus(keep), {}};
       }});
  routes_.push_back({"GET", "/login", Audience::kAnyone,
                     [](const HttpRequest&) { return HttpAccess::LoginPage(); }});
  routes_.push_back({"POST", "/api/login", Audience::kAnyone,
                     [this](const HttpRequest& request) { return access_.Login(request); }});
  routes_.push_back({"POST", "/api/logout", Audience::kUser,
                     [this](const HttpRequest& request) { return access_.Logout(request); }});
  routes_.push_back({"GET", "/api/session", Audience::kUser,
                     [this](const HttpRequest& request) { return access_.Session(request); }});
  routes_.push_back({"GET", "/", Audience::kUserPage, &HttpAccess::HomePage});
}

HttpServer::~HttpServer() {
  Stop();
}

void HttpServer::AddRoute(Route route) {
  for (Route& existing : routes_) {
    if (existing.method == route.method && existing.path == route.path) {
      existing = std::move(route);
      return;
    }
  }
  routes_.push_back(std::move(route));
}

void HttpServer::Get(std::string path, Handler handler) {
  AddRoute({"GET", std::move(path), Audience::kUser, std::move(handler)});
}

void HttpServer::GetPage(std::string path, Handler handler) {
  AddRoute({"GET", std::move(path), Audience::kUserPage, std::move(handler)});
}

void HttpServer::Post(std::string path, Handler handler) {
  AddRoute({"POST", std::move(path), Audience::kUser, std::move(handler)});
}

void HttpServer::PostOpen(std::string path, Handler handler) {
  AddRoute({"POST", std::move(path), Audience::kAnyone, std::move(handler)});
}

HttpResponse HttpServer::Serve(const Route& route, HttpRequest request) {
  if (route.audience != Audience::kAnyone) {
    if (std::optional<HttpResponse> refusal = access_.Admit(&request)) {
      auth_refusals_->Add();
      // A browser asking for a page is shown the login form instead of an API error.
      if (route.audience == Audience::kUserPage && refusal->status == 401) {
        return HttpResponse{303, "text/plain", "log in first\n", {{"Location", "/login"}}};
      }
      return std::move(*refusal);
    }
  }
  return route.handler(request);
}

HttpResponse HttpServer::Health() {
  HealthReport report = health_ ? health_() : HealthReport{};
  const auto uptime =
      std::chrono::duration_cast<std::chrono::seconds>(clock_->SteadyNow() - started_).count();
  std::string body = "{\"status\":" + JsonQuote(report.healthy ? "ok" : "unavailable");
  if (!report.healthy) body += ",\"reason\":" + JsonQuote(report.reason);
  body += ",\"version\":" + JsonQuote(kMillraceVersion);
  body += ",\"uptime_seconds\":" + std::to_string(uptime);
  for (const auto& [name, value] : report.fields)
    body += "," + JsonQuote(name) + ":" + value;
  body += "}\n";
  return HttpResponse{report.healthy ? 200 : 503, "application/json", std::move(body)};
}

Status HttpServer::Start() {
  if (options_.tls == nullptr) {
    impl_->server = std::make_unique<httplib::Server>();
  } else {
    Status configured = Status::Ok();
    impl_->server = std::make_unique<httplib::SSLServer>([&](SSL_CTX& ctx) {
      configured = options_.tls->ConfigureServer(&ctx);
      return configured.ok();
    });
    if (!impl_->server->is_valid()) {
      return Status::Internal("cannot set up HTTPS: " +
                              (configured.ok() ? "no TLS context" : configured.message()));
    }
  }
  httplib::Server& server = *impl_->server;
  const bool secure = options_.tls != nullptr;
  for (const Route& route : routes_) {
    auto handler = [this, &route, secure](const httplib::Request& req, httplib::Response& res) {
      requests_->Add();
      HttpRequest request;
      request.method = req.method;
      request.path = req.path;
      // Only a small form or JSON document is ever read (the payload limit below).
      request.body = req.body;
      request.remote_address = req.remote_addr;
      request.secure = secure;
      for (const auto& [name, value] : req.headers)
        request.headers.emplace(ToLower(name), value);
      for (const auto& [key, value] : req.params)
        request.params.emplace(key, value);
      if (StartsWithIgnoreCase(request.Header("content-type"),
                               "application/x-www-form-urlencoded")) {
        httplib::Params form;
        httplib::detail::parse_query_text(req.body, form);
        for (const auto& [key, value] : form)
          request.params.emplace(key, value);
      }
      HttpResponse response = Serve(route, std::move(request));
      res.status = response.status;
      for (const auto& [name, value] : response.headers)
        res.set_header(name, value);
      res.set_content(response.body, response.content_type.c_str());
    };
    if (route.method == "POST") {
      server.Post(route.path, std::move(handler));
    } else {
      server.Get(route.path, std::move(handler));
    }
  }
  server.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr) {
        MR_LOG(kError) << "HTTP handler for " << req.path << " failed with an exception";
        res.status = 500;
        res.set_content("{\"error\":\"internal error\"}\n", "application/json");
      });

  // No route reads more than a login form: a large body is refused (413) before it is held in
  // memory, whoever sends it.
  server.set_payload_max_length(kMaxRequestBody);
  // httplib's default also sets SO_REUSEPORT, which would let a second server share the port
  // silently; SO_REUSEADDR alone allows quick restarts and still refuses a busy port.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    if (setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes)) != 0) {
      MR_LOG(kWarning) << "cannot set SO_REUSEADDR on the HTTP socket";
    }
  });
  int port = options_.port;
  if (port == 0) {
    port = server.bind_to_any_port(options_.bind_address);
  } else if (!server.bind_to_port(options_.bind_address, port)) {
    port = -1;
  }
  if (port <= 0) {
    return Status::Unavailable("cannot listen for HTTP on " + options_.bind_address + ":" +
                               std::to_string(options_.port));
  }
  port_ = static_cast<uint16_t>(port);
  auto listen_returned = std::make_shared<std::atomic<bool>>(false);
  thread_ = std::thread([&server, listen_returned] {
    if (!server.listen_after_bind()) {
      MR_LOG(kError) << "the HTTP server stopped on an error";
    }
    listen_returned->store(true);
  });
  // stop() is a no-op until the server runs: wait for it so Stop() cannot be lost.
  while (!server.is_running() && !listen_returned->load())
    std::this_thread::yield();
  return Status::Ok();
}

void HttpServer::Stop() {
  if (!thread_.joinable()) return;
  impl_->server->stop();
  thread_.join();
}

}  // namespace millrace::http
