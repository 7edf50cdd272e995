// Result<T>: a value of type T, or the Status that explains why there is none.
//
// Contract
// - Holds exactly one of: a T, or a non-OK Status. Constructing a Result from an OK Status is
//   a programming error and yields an INTERNAL status instead.
// - value() on an error Result aborts the process: check ok() first, or use MR_ASSIGN_OR_RETURN.
// - [[nodiscard]], like Status.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <utility>
#include <variant>

#include "common/status.h"

namespace millrace {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status)                         // NOLINT(google-explicit-constructor)
      : data_(status.ok() ? Status::Internal("Result constructed from an OK status")
                          : std::move(status)) {}

  bool ok() const { return std::holds_alternative<T>(data_); }

  // OK when a value is held.
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(data_); }

  T& value() & {
    CheckOk();
    return std::get<T>(data_);
  }
  const T& value() const& {
    CheckOk();
    return std::get<T>(data_);
  }
  T&& value() && {
    CheckOk();
    return std::get<T>(std::move(data_));
  }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The value, or `fallback` when this holds an error.
  T value_or(T fallback) const& { return ok() ? std::get<T>(data_) : std::move(fallback); }

 private:
  void CheckOk() const {
    if (!ok()) {
      std::fprintf(stderr, "Result::value() on error: %s\n",
                   std::get<Status>(data_).ToString().c_str());
      std::abort();
    }
  }

  std::variant<T, Status> data_;
};

}  // namespace millrace

#define MR_CONCAT_INNER_(a, b) a##b
#define MR_CONCAT_(a, b) MR_CONCAT_INNER_(a, b)

// MR_ASSIGN_OR_RETURN(auto x, Foo()); — declares/assigns from a Result, or returns its Status.
#define MR_ASSIGN_OR_RETURN(lhs, expr) \
  MR_ASSIGN_OR_RETURN_IMPL_(MR_CONCAT_(mr_result_, __COUNTER__), lhs, expr)
#define MR_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
