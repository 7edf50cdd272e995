// The HTTP server's view of a request and a response, apart from the HTTP library, so the
// routes and the access rules (http_access.h) can be tested without a socket.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace millrace::http {

struct HttpRequest {
  std::string method = "GET";
  std::string path;
  // Query parameters, and the fields of an application/x-www-form-urlencoded body.
  std::map<std::string, std::string> params;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  std::string remote_address;
  bool secure = false;  // over TLS

  // Set when the request is admitted (http_access.h).
  std::string user;
  std::string session_id;  // a cookie session's
  std::string csrf_token;  // a cookie session's

  // The value of header `name` (lower case), or "".
  std::string Header(std::string_view name) const {
    auto it = headers.find(std::string(name));
    return it == headers.end() ? std::string() : it->second;
  }
  std::string Param(std::string_view name) const {
    auto it = params.find(std::string(name));
    return it == params.end() ? std::string() : it->second;
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// {"error":"<message>"} with `status` (http_access.cc).
HttpResponse JsonError(int status, std::string_view message);

}  // namespace millrace::http
