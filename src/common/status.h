// Status: the outcome of an operation, carried across module boundaries as a value.
//
// Contract
// - A Status is OK or holds a code and a human-readable message. The message names what went
//   wrong (the file, the key, the statement) so a user can act on it; it never holds a secret.
// - Status is [[nodiscard]]: ignoring one is a compile warning (an error in our build).
// - Cheap to copy in the OK case (no allocation); error states own their message.
// - An error may carry a typed ErrorDetail, set where the error is made (the engine sets
//   DuckDB's error type, the SQL layer a MySQL errno, the job layer its ErrorMsg code). Callers
//   branch on code() and detail(), never on the message text. WithContext keeps the detail.
// - Thread-safety: a Status is a value; distinct objects may be used from distinct threads.
//
// Modelled on leveldb::Status, with codes close to absl::StatusCode so callers can branch on
// the kind of failure (retry Unavailable, report InvalidArgument) without parsing text.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace millrace {

enum class StatusCode : int {
  kOk = 0,
  kCancelled,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kPermissionDenied,
  kUnauthenticated,
  kResourceExhausted,
  kFailedPrecondition,
  kAborted,
  kOutOfRange,
  kNotSupported,
  kInternal,
  kUnavailable,
  kDeadlineExceeded,
  kDataLoss,
  kIoError,
};

// Returns the stable upper-case name of a code, e.g. "INVALID_ARGUMENT".
std::string_view StatusCodeName(StatusCode code);

// Which module's vocabulary an ErrorDetail's numbers are in.
enum class ErrorDomain : uint8_t {
  kNone = 0,
  kDuckDb,       // code: duckdb_error_type; reason: engine::DuckDbReason (engine/duckdb_status.h)
  kMySql,        // code: the MySQL errno the client is sent (sql/mysql_errors.h); reason: 0
  kJob,          // code: job::JobErrorCode (job/job_errors.h); reason: 0
  kPostgres,     // code: the SQLSTATE, packed by pg::PackSqlState (pg/pg_connection.h); reason: 0
  kMySqlSource,  // code: the errno a MySQL or MariaDB source server returned (mysql/); reason: 0
  kBadFile,      // code: load::BadFile, why a file cannot be loaded (load/bad_file.h); reason: 0
};

// What an error is, in a module's own terms, beyond its StatusCode.
struct ErrorDetail {
  ErrorDomain domain = ErrorDomain::kNone;
  int32_t code = 0;
  int32_t reason = 0;

  friend bool operator==(const ErrorDetail&, const ErrorDetail&) = default;
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message);

  static Status Ok() { return Status(); }
  static Status Cancelled(std::string msg) { return {StatusCode::kCancelled, std::move(msg)}; }
  static Status InvalidArgument(std::string msg) {
    return {StatusCode::kInvalidArgument, std::move(msg)};
  }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status AlreadyExists(std::string msg) {
    return {StatusCode::kAlreadyExists, std::move(msg)};
  }
  static Status PermissionDenied(std::string msg) {
    return {StatusCode::kPermissionDenied, std::move(msg)};
  }
  static Status Unauthenticated(std::string msg) {
    return {StatusCode::kUnauthenticated, std::move(msg)};
  }
  static Status ResourceExhausted(std::string msg) {
    return {StatusCode::kResourceExhausted, std::move(msg)};
  }
  static Status FailedPrecondition(std::string msg) {
    return {StatusCode::kFailedPrecondition, std::move(msg)};
  }
  static Status Aborted(std::string msg) { return {StatusCode::kAborted, std::move(msg)}; }
  static Status OutOfRange(std::string msg) { return {StatusCode::kOutOfRange, std::move(msg)}; }
  static Status NotSupported(std::string msg) {
    return {StatusCode::kNotSupported, std::move(msg)};
  }
  static Status Internal(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {StatusCode::kUnavailable, std::move(msg)}; }
  static Status DeadlineExceeded(std::string msg) {
    return {StatusCode::kDeadlineExceeded, std::move(msg)};
  }
  static Status DataLoss(std::string msg) { return {StatusCode::kDataLoss, std::move(msg)}; }
  static Status IoError(std::string msg) { return {StatusCode::kIoError, std::move(msg)}; }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  // The message without the code; empty for OK.
  const std::string& message() const;
  // "OK" or "<CODE_NAME>: <message>".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>" (code and detail kept); OK stays OK.
  Status WithContext(std::string_view context) const;

  // The typed detail; domain kNone when the error carries none (and for OK).
  const ErrorDetail& detail() const;
  // Returns a copy carrying `detail` (replacing any); OK stays OK.
  Status WithDetail(ErrorDetail detail) const;
  // True when the detail is in `domain` with `code`.
  bool Is(ErrorDomain domain, int32_t code) const {
    return detail().domain == domain && detail().code == code;
  }

  // Explicitly drops a status whose failure is deliberately irrelevant (e.g. best-effort
  // cleanup after an earlier error). Use sparingly and say why at the call site.
  void IgnoreError() const {}

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }

 private:
  struct State {
    StatusCode code;
    std::string message;
    ErrorDetail detail;
  };
  // shared_ptr keeps copies cheap; State is immutable once built.
  std::shared_ptr<const State> state_;
};

}  // namespace millrace

// Evaluates an expression yielding Status (or anything with .status()) and returns it from
// the enclosing function if it is not OK.
#define MR_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::millrace::Status mr_status_ = (expr);  \
    if (!mr_status_.ok()) return mr_status_; \
  } while (0)
