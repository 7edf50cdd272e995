// Lsn: a position in PostgreSQL's write-ahead log, and its text form "16/B374D848".
//
// Contract
// - FormatLsn prints the upper and lower 32 bits in upper-case hex, as PostgreSQL does;
//   ParseLsn reads that form back (either case) and is INVALID_ARGUMENT naming the text for
//   anything else. ParseLsn(FormatLsn(x)) == x.
// - Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace millrace::pg {

using Lsn = uint64_t;

Result<Lsn> ParseLsn(std::string_view text);
std::string FormatLsn(Lsn lsn);

}  // namespace millrace::pg
