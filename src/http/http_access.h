// HttpAccess: who is behind an HTTP request, and the routes that log in and out.
//
// Contract
// - Every route but /api/health (and /metrics with --metrics-public) is admitted by Admit,
//   which names the user (HttpRequest::user) or answers the refusal:
//   - `Authorization: Basic` (API clients, Prometheus): the password is checked by the
//     HttpAuthenticator; a success is remembered for kBasicMemory per credentials and address,
//     so a scraper polling every few seconds is one audited login a minute, not one a request,
//     as long as the user's LoginStamp (http_auth.h) stays the one of the check.
//   - the `millrace_session` cookie set by POST /api/login (the web console): the session must
//     be live (SessionStore: idle expiry) and its user's LoginStamp the one of its login (a
//     dropped or re-made user, or a changed password, host or REQUIRE SSL, ends it).
//   - neither, or wrong: 401; with `WWW-Authenticate: Basic realm="millrace"` only for a
//     request that is neither a browser's page request (Accept: text/html) nor a session's,
//     so a browser never prompts for and caches Basic credentials. An address that must wait
//     after failed logins (access/login_throttle.h): 429 with Retry-After.
// - A request that changes state (any method but GET and HEAD) is refused with 403 when it
//   carries an Origin header other than this server's own, and, when admitted by the cookie,
//   unless it repeats the session's CSRF token in `X-CSRF-Token` or a `csrf_token` form field.
//   The cookie is HttpOnly and SameSite=Strict, and Secure over HTTPS.
// - POST /api/login takes `user` and `password` as a form (the login page: 303 to / on success,
//   the page again with the error otherwise) or as JSON (200 {"user","csrf_token"}, or 401/429
//   {"error"}). POST /api/logout ends the session. GET /api/session says who is logged in and,
//   for a cookie session, its CSRF token.
// - No password, session id or token is ever logged or put in an error.
// - Thread-safety: every method may be called concurrently.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/thread_annotations.h"
#include "http/http_auth.h"
#include "http/http_types.h"
#include "http/session_store.h"

namespace millrace::http {

inline constexpr std::string_view kSessionCookie = "millrace_session";
inline constexpr std::chrono::seconds kBasicMemory{60};

class HttpAccess {
 public:
  // `authenticator` may be null: then nobody is admitted (every protected route answers 401).
  HttpAccess(HttpAuthenticator* authenticator, Clock* clock, SessionStoreOptions options);

  // Admits `request` (setting user, and for a cookie session session_id and csrf_token), or
  // returns the response that refuses it.
  std::optional<HttpResponse> Admit(HttpRequest* request) EXCLUDES(mu_);

  HttpResponse Login(const HttpRequest& request);
  // The routes below run on admitted requests only.
  HttpResponse Logout(const HttpRequest& request);
  HttpResponse Session(const HttpRequest& request);
  // GET /login (anyone) and GET / (admitted: who is logged in, and a logout button; the web
  // console's start page).
  static HttpResponse LoginPage(std::string_view error = "");
  static HttpResponse HomePage(const HttpRequest& request);

 private:
  struct Remembered {
    std::string user;
    std::string stamp;
    Clock::SteadyTime expires;
  };
  std::optional<HttpResponse> AdmitBasic(HttpRequest* request, std::string_view credentials)
      EXCLUDES(mu_);
  std::optional<HttpResponse> AdmitCookie(HttpRequest* request, std::string_view id);

  HttpAuthenticator* const authenticator_;
  Clock* const clock_;
  SessionStore sessions_;
  Mutex mu_;
  // Basic credentials checked lately: SHA-256 of (address, header) -> user, until `expires`.
  std::map<std::string, Remembered, std::less<>> basic_ GUARDED_BY(mu_);
};

}  // namespace millrace::http
