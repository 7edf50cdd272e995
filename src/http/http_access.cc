#include "http/http_access.h"

#include <openssl/evp.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "common/json.h"
#include "common/strings.h"

namespace millrace::http {

HttpResponse JsonError(int status, std::string_view message) {
  return HttpResponse{status, "application/json", "{\"error\":" + JsonQuote(message) + "}\n", {}};
}

namespace {

// A browser shown a Basic challenge prompts for the password and then sends it with every
// request, cross-site ones included: only API clients are challenged.
HttpResponse Unauthorized(const HttpRequest& request, std::string_view message) {
  HttpResponse response = JsonError(401, message);
  if (request.Header("cookie").empty() &&
      request.Header("accept").find("text/html") == std::string::npos) {
    response.headers.emplace_back("WWW-Authenticate",
                                  "Basic realm=\"millrace\", charset=\"UTF-8\"");
  }
  return response;
}

HttpResponse Throttled(const HttpLoginResult& result) {
  HttpResponse response = JsonError(429, result.status.message());
  response.headers.emplace_back("Retry-After", std::to_string(result.retry_after.count()));
  return response;
}

bool ChangesState(const HttpRequest& request) {
  return request.method != "GET" && request.method != "HEAD";
}

// The decoded user:password of a Basic Authorization value, or nullopt when it is malformed.
std::optional<std::pair<std::string, std::string>> DecodeBasic(std::string_view encoded) {
  if (encoded.empty() || encoded.size() % 4 != 0 || encoded.size() > 4096) return std::nullopt;
  size_t padding = 0;
  while (padding < encoded.size() && encoded[encoded.size() - 1 - padding] == '=')
    ++padding;
  if (padding > 2) return std::nullopt;
  std::string decoded(encoded.size() / 4 * 3, '\0');
  const int size = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(decoded.data()),
                                   reinterpret_cast<const unsigned char*>(encoded.data()),
                                   static_cast<int>(encoded.size()));
  // EVP_DecodeBlock counts the padding as zero bytes.
  if (size < 0 || static_cast<size_t>(size) < padding) return std::nullopt;
  decoded.resize(static_cast<size_t>(size) - padding);
  const size_t colon = decoded.find(':');
  if (colon == std::string::npos) return std::nullopt;
  return std::make_pair(decoded.substr(0, colon), decoded.substr(colon + 1));
}

// The value of cookie `name` in a Cookie header, or "".
std::string CookieValue(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const size_t end = header.find(';');
    const std::string_view part = Trim(header.substr(0, end));
    const size_t eq = part.find('=');
    if (eq != std::string_view::npos && part.substr(0, eq) == name) {
      return std::string(part.substr(eq + 1));
    }
    if (end == std::string_view::npos) break;
    header.remove_prefix(end + 1);
  }
  return "";
}

std::string SessionCookie(std::string_view value, bool secure, bool expire) {
  std::string cookie = std::string(kSessionCookie) + "=" + std::string(value) +
                       "; Path=/; HttpOnly; SameSite=Strict";
  if (secure) cookie += "; Secure";
  if (expire) cookie += "; Max-Age=0";
  return cookie;
}

// A request from a page of another site (the browser names it in Origin) must not change
// anything here, whatever credentials the browser attaches.
bool ForeignOrigin(const HttpRequest& request) {
  const std::string origin = request.Header("origin");
  if (origin.empty()) return false;
  const std::string own = (request.secure ? "https://" : "http://") + request.Header("host");
  return !EqualsIgnoreCase(origin, own);
}

std::string HtmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

HttpResponse Page(int status, std::string_view title, std::string_view body) {
  HttpResponse response{status,
                        "text/html; charset=utf-8",
                        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>" +
                            std::string(title) + "</title></head>\n<body>\n" + std::string(body) +
                            "</body></html>\n",
                        {}};
  // The pages hold no script: nothing may run, and no other site may frame them.
  response.headers.emplace_back("Content-Security-Policy",
                                "default-src 'none'; form-action 'self'; frame-ancestors 'none'");
  response.headers.emplace_back("X-Frame-Options", "DENY");
  return response;
}

bool IsJson(const HttpRequest& request) {
  return request.Header("content-type").starts_with("application/json");
}

}  // namespace

HttpAccess::HttpAccess(HttpAuthenticator* authenticator, Clock* clock, SessionStoreOptions options)
    : authenticator_(authenticator), clock_(clock), sessions_(clock, options) {}

std::optional<HttpResponse> HttpAccess::Admit(HttpRequest* request) {
  if (ChangesState(*request) && ForeignOrigin(*request)) {
    return JsonError(403, "cross-origin request refused: Origin " + request->Header("origin") +
                              " is not this server");
  }
  if (authenticator_ == nullptr) return Unauthorized(*request, "this server has no HTTP logins");
  const std::string authorization = request->Header("authorization");
  if (!authorization.empty()) {
    if (!StartsWithIgnoreCase(authorization, "Basic ")) {
      return Unauthorized(*request, "only HTTP Basic authorization is accepted");
    }
    return AdmitBasic(request, Trim(std::string_view(authorization).substr(6)));
  }
  const std::string id = CookieValue(request->Header("cookie"), kSessionCookie);
  if (!id.empty()) return AdmitCookie(request, id);
  return Unauthorized(*request, "login required: HTTP Basic, or a session from POST /api/login");
}

std::optional<HttpResponse> HttpAccess::AdmitBasic(HttpRequest* request,
                                                   std::string_view credentials) {
  const std::string key = Sha256(request->remote_address + '\n' + std::string(credentials));
  const Clock::SteadyTime now = clock_->SteadyNow();
  {
    MutexLock lock(&mu_);
    auto it = basic_.find(key);
    if (it != basic_.end() && it->second.expires > now &&
        authenticator_->LoginStamp(it->second.user) == it->second.stamp) {
      request->user = it->second.user;
      return std::nullopt;
    }
    if (it != basic_.end()) basic_.erase(it);
  }
  auto decoded = DecodeBasic(credentials);
  if (!decoded) return Unauthorized(*request, "malformed Basic authorization");
  auto& [user, password] = *decoded;
  HttpLoginResult result =
      authenticator_->CheckPassword(user, password, request->remote_address, request->secure);
  if (!result.status.ok()) {
    return result.retry_after.count() > 0 ? Throttled(result)
                                          : Unauthorized(*request, result.status.message());
  }
  std::string stamp = authenticator_->LoginStamp(user);
  MutexLock lock(&mu_);
  // Bounded: a flood of distinct credentials forgets what it remembered rather than grow.
  if (basic_.size() >= 1000) basic_.clear();
  basic_[key] = Remembered{user, std::move(stamp), now + kBasicMemory};
  request->user = user;
  return std::nullopt;
}

std::optional<HttpResponse> HttpAccess::AdmitCookie(HttpRequest* request, std::string_view id) {
  std::optional<HttpSession> session = sessions_.Find(id);
  if (!session) return Unauthorized(*request, "the session has ended; log in again");
  if (authenticator_->LoginStamp(session->user) != session->stamp) {
    sessions_.Drop(id);
    return Unauthorized(*request,
                        "the session has ended: its user no longer exists or its login changed");
  }
  if (ChangesState(*request)) {
    std::string token = request->Header("x-csrf-token");
    if (token.empty()) token = request->Param("csrf_token");
    if (!TokensEqual(token, session->csrf_token)) {
      return JsonError(403,
                       "missing or wrong CSRF token: send the session's token (GET /api/session) "
                       "in X-CSRF-Token");
    }
  }
  request->user = session->user;
  request->session_id = session->id;
  request->csrf_token = session->csrf_token;
  return std::nullopt;
}

HttpResponse HttpAccess::Login(const HttpRequest& request) {
  const bool json = IsJson(request);
  if (ForeignOrigin(request)) {
    return JsonError(403, "cross-origin login refused: Origin " + request.Header("origin") +
                              " is not this server");
  }
  std::string user;
  std::string password;
  if (json) {
    auto body = ParseJson(request.body);
    if (!body.ok() || !body->is_object() || !(*body)["user"].is_string() ||
        !(*body)["password"].is_string()) {
      return JsonError(400, "the login takes {\"user\": \"...\", \"password\": \"...\"}");
    }
    user = (*body)["user"].get<std::string>();
    password = (*body)["password"].get<std::string>();
  } else {
    user = request.Param("user");
    password = request.Param("password");
  }
  if (user.empty()) {
    return json ? JsonError(400, "the login needs a user") : LoginPage("Enter a user name.");
  }
  HttpLoginResult result =
      authenticator_ == nullptr
          ? HttpLoginResult{Status::PermissionDenied("this server has no HTTP logins"), {}}
          : authenticator_->CheckPassword(user, password, request.remote_address, request.secure);
  if (!result.status.ok()) {
    const int status = result.retry_after.count() > 0 ? 429 : 401;
    HttpResponse response =
        json ? JsonError(status, result.status.message()) : LoginPage(result.status.message());
    response.status = status;
    if (status == 429) {
      response.headers.emplace_back("Retry-After", std::to_string(result.retry_after.count()));
    }
    return response;
  }
  const HttpSession session = sessions_.Create(user, authenticator_->LoginStamp(user));
  HttpResponse response =
      json ? HttpResponse{200,
                          "application/json",
                          "{\"user\":" + JsonQuote(user) +
                              ",\"csrf_token\":" + JsonQuote(session.csrf_token) + "}\n",
                          {}}
           : HttpResponse{303, "text/plain", "logged in\n", {{"Location", "/"}}};
  response.headers.emplace_back("Set-Cookie", SessionCookie(session.id, request.secure, false));
  return response;
}

HttpResponse HttpAccess::Logout(const HttpRequest& request) {
  if (!request.session_id.empty()) sessions_.Drop(request.session_id);
  const bool json = IsJson(request) || request.Header("x-csrf-token") != "";
  HttpResponse response =
      json ? HttpResponse{200, "application/json", "{\"logged_out\":true}\n", {}}
           : HttpResponse{303, "text/plain", "logged out\n", {{"Location", "/login"}}};
  response.headers.emplace_back("Set-Cookie", SessionCookie("", request.secure, true));
  return response;
}

HttpResponse HttpAccess::Session(const HttpRequest& request) {
  std::string body = "{\"user\":" + JsonQuote(request.user);
  if (!request.csrf_token.empty()) body += ",\"csrf_token\":" + JsonQuote(request.csrf_token);
  return HttpResponse{200, "application/json", body + "}\n", {}};
}

HttpResponse HttpAccess::LoginPage(std::string_view error) {
  std::string body = "<h1>Millrace</h1>\n";
  if (!error.empty()) body += "<p role=\"alert\">" + HtmlEscape(error) + "</p>\n";
  body +=
      "<form method=\"post\" action=\"/api/login\">\n"
      "<label>User <input name=\"user\" autocomplete=\"username\" required></label>\n"
      "<label>Password <input name=\"password\" type=\"password\" "
      "autocomplete=\"current-password\"></label>\n"
      "<button type=\"submit\">Log in</button>\n</form>\n";
  return Page(error.empty() ? 200 : 401, "Millrace: log in", body);
}

HttpResponse HttpAccess::HomePage(const HttpRequest& request) {
  std::string body =
      "<h1>Millrace</h1>\n<p>Logged in as <b>" + HtmlEscape(request.user) + "</b>.</p>\n";
  if (!request.csrf_token.empty()) {
    body +=
        "<form method=\"post\" action=\"/api/logout\">\n<input type=\"hidden\" "
        "name=\"csrf_token\" value=\"" +
        HtmlEscape(request.csrf_token) + "\">\n<button type=\"submit\">Log out</button>\n</form>\n";
  }
  return Page(200, "Millrace", body);
}

}  // namespace millrace::http
