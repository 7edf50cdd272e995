// mysql_native_password: the only form in which Millrace keeps or checks a password.
//
// Contract
// - A stored password is SHA1(SHA1(password)), 20 bytes (NativePasswordHash); no password is
//   the empty string, and so is its hash. The plain password is never kept.
// - Its text form is MySQL's: "*" and 40 upper-case hex digits, as PASSWORD() printed it and
//   as `IDENTIFIED BY PASSWORD '*...'` takes it.
// - A client proves it knows the password by answering the server's scramble with
//   SHA1(password) XOR SHA1(scramble + SHA1(SHA1(password))) (NativePasswordResponse); the
//   server recovers SHA1(password) from the answer and the stored hash and checks that its SHA1
//   is the stored hash (VerifyNativeResponse, constant time). An empty password is answered by
//   an empty response.
// - Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.h"

namespace millrace::access {

inline constexpr size_t kNativeHashLength = 20;

// SHA1(SHA1(password)), 20 bytes; empty for an empty password.
std::string NativePasswordHash(std::string_view password);
// "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"; empty for an empty hash.
std::string NativeHashText(std::string_view hash);
// The hash of a text form (either case of hex); "" is the empty hash. Anything else is
// INVALID_ARGUMENT (the message does not repeat the text).
Result<std::string> ParseNativeHashText(std::string_view text);

// What a client answers to `scramble` for `password` (empty for an empty password).
std::string NativePasswordResponse(std::string_view password, std::string_view scramble);
// True when `response` answers `scramble` for the password whose hash is `stored_hash`.
bool VerifyNativeResponse(std::string_view stored_hash, std::string_view scramble,
                          std::string_view response);
// True when `password` is the one whose hash is `stored_hash` (constant time; for clients that
// send the password itself, as HTTP Basic does over TLS or loopback).
bool VerifyPassword(std::string_view stored_hash, std::string_view password);

}  // namespace millrace::access
