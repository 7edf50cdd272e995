// The last line of a CSV file, measured before DuckDB's reader sees it. DuckDB refuses a line
// longer than its max_line_size (2 MiB), except a last line longer than its read buffer,
// which it drops without an error while the rows before it load: one row lost in silence.
//
// Contract
// - CheckCsvLastLine reads at most the file's last `max_line_bytes` + 2 bytes. A last line
//   (the text after the last `line_end`, or the last line when the file ends with one) longer
//   than `max_line_bytes` is INVALID_ARGUMENT saying so, without quoting it; IO_ERROR when
//   the file cannot be read.
// - CheckCsvLastLineIn is the same check of a file's bytes held in memory.
// - Thread-safety: pure functions of the file or the bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace millrace::load {

// DuckDB's default max_line_size, which Millrace does not change.
inline constexpr uint64_t kMaxCsvLineBytes = 2 << 20;

Status CheckCsvLastLine(const std::string& path, char line_end = '\n',
                        uint64_t max_line_bytes = kMaxCsvLineBytes);
Status CheckCsvLastLineIn(std::string_view bytes, char line_end = '\n',
                          uint64_t max_line_bytes = kMaxCsvLineBytes);

}  // namespace millrace::load
