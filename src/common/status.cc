#include "common/status.h"

namespace millrace {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kCancelled:
      return "CANCELLED";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kAlreadyExists:
      return "ALREADY_EXISTS";
    case StatusCode::kPermissionDenied:
      return "PERMISSION_DENIED";
    case StatusCode::kUnauthenticated:
      return "UNAUTHENTICATED";
    case StatusCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case StatusCode::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case StatusCode::kAborted:
      return "ABORTED";
    case StatusCode::kOutOfRange:
      return "OUT_OF_RANGE";
    case StatusCode::kNotSupported:
      return "NOT_SUPPORTED";
    case StatusCode::kInternal:
      return "INTERNAL";
    case StatusCode::kUnavailable:
      return "UNAVAILABLE";
    case StatusCode::kDeadlineExceeded:
      return "DEADLINE_EXCEEDED";
    case StatusCode::kDataLoss:
      return "DATA_LOSS";
    case StatusCode::kIoError:
      return "IO_ERROR";
  }
  return "UNKNOWN";
}

Status::Status(StatusCode code, std::string message) {
  // An "error" with code kOk would be a contradiction; treat it as OK rather than carry it.
  if (code == StatusCode::kOk) return;
  state_ = std::make_shared<const State>(State{code, std::move(message), ErrorDetail{}});
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return state_ ? state_->message : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(StatusCodeName(code()));
  out += ": ";
  out += state_->message;
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string msg(context);
  msg += ": ";
  msg += state_->message;
  Status out(code(), std::move(msg));
  return out.WithDetail(state_->detail);
}

const ErrorDetail& Status::detail() const {
  static const ErrorDetail kNoDetail;
  return state_ ? state_->detail : kNoDetail;
}

Status Status::WithDetail(ErrorDetail detail) const {
  if (ok()) return *this;
  Status out;
  out.state_ = std::make_shared<const State>(State{state_->code, state_->message, detail});
  return out;
}

}  // namespace millrace
