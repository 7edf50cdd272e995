// How deep a JSON file nests, and whether it ends whole, read before DuckDB's JSON reader
// sees it. DuckDB's reader
// recurses once per level: a value nested some 10,000 levels deep (a 200 KB file) overflows
// its stack and kills the server, at every restart while the file is still there. A file
// nested deeper than kMaxJsonDepth is a bad file instead, named with its line.
//
// Contract
// - CheckJsonNesting reads the file once, in blocks, keeping only the depth: memory is
//   constant whatever the file holds. Brackets inside strings ("[", with escapes) do not count.
//   INVALID_ARGUMENT naming the line (1-based) where the depth first passes `max_depth`, or
//   the last line when the file ends inside a string, array or object (a truncated file, which
//   DuckDB's reader may load in part); IO_ERROR when the file cannot be read. It does not
//   validate the JSON otherwise (DuckDB does, with its own errors). The counts are of a file
//   that passes; for one that does not they mean nothing.
// - Thread-safety: a pure function of the file.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace millrace::load {

// Deep enough for any real document (tests/load/json_nesting_test.cc reads this many levels
// through DuckDB), far below where DuckDB's reader runs out of stack.
inline constexpr int kMaxJsonDepth = 1000;

// What the same pass sees of a file's records (record_count.h turns it into a count).
struct JsonCounts {
  int64_t top_values = 0;      // values at the top level (documents)
  bool top_array = false;      // one of them is an array
  bool top_scalar = false;     // one of them is neither an object nor an array
  int64_t array_elements = 0;  // elements of the first top-level array
};

// `counts` (may be null) is filled as the file is scanned.
Status CheckJsonNesting(const std::string& path, int max_depth = kMaxJsonDepth,
                        JsonCounts* counts = nullptr);

namespace internal {
// CheckJsonNesting with its 64-byte windows (`windows`) or byte by byte only: the same answer
// either way (tests/load/json_nesting_test.cc compares them).
Status ScanJsonNesting(const std::string& path, int max_depth, JsonCounts* counts, bool windows);
}  // namespace internal

}  // namespace millrace::load
