#include "console/responses.h"

namespace millrace::console {
namespace {

int HttpStatus(StatusCode code) {
  switch (code) {
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kNotSupported:
      return 400;
    case StatusCode::kPermissionDenied:
    case StatusCode::kUnauthenticated:
      return 403;
    case StatusCode::kFailedPrecondition:
    case StatusCode::kAlreadyExists:
    case StatusCode::kAborted:
      return 409;
    default:
      return 500;
  }
}

}  // namespace

http::HttpResponse Answer(const Result<std::string>& body) {
  if (body.ok()) return http::HttpResponse{200, "application/json", *body + "\n", {}};
  return http::JsonError(HttpStatus(body.status().code()), body.status().message());
}

}  // namespace millrace::console
