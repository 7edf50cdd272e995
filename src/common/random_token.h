// Unguessable tokens and their comparison: session ids, CSRF tokens, the secrets that
// authenticate pushed events.
//
// Contract
// - RandomToken: `bytes` bytes from OpenSSL's RAND_bytes, in lower-case hex. A generator that
//   fails (no entropy source) stops the process: a guessable token would be worse.
// - TokensEqual compares in time that depends only on the lengths.
// - Thread-safety: both may be called from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace millrace {

std::string RandomToken(size_t bytes = 32);
bool TokensEqual(std::string_view a, std::string_view b);

}  // namespace millrace
