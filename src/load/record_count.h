// How many records a file holds, counted by Millrace and not by DuckDB's readers, so that a
// reader that drops records in silence is caught: per file, rows loaded + rows filtered must
// equal this count when the job's SELECT keeps every row (job/file_load_rounds.cc).
//
// Contract
// - CountCsvRecords: the records after the skipped lines (skip_lines, then the header line of
//   csv_with_names, or two of csv_with_names_and_types), one per line end outside quotes, blank
//   lines not counted (DuckDB skips them), a last record without its line end counted. Quotes
//   open only at the start of a field, and only when the dialect has a quote character
//   ("enclose", or trim_double_quotes), as reader_sql.cc reads the first record.
// - JsonRecords: from the nesting scan (json_nesting.h), the records DuckDB's JSON reader makes:
//   the documents, or the elements of the one top-level array; nullopt when Millrace cannot
//   tell (json_root or jsonpaths pick the rows, a top-level scalar, arrays among documents).
// - Parquet is not counted here: the loader compares the rows its footer declares with the
//   rows read (a mutated footer has been seen to declare 12 rows of 20).
// - CountCsvRecordsIn counts the same of a file's bytes held in memory.
// - One pass, constant memory; IO_ERROR when the file cannot be read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "load/file_params.h"
#include "load/json_nesting.h"

namespace millrace::load {

Result<int64_t> CountCsvRecords(const std::string& path, const CsvOptions& csv,
                                int64_t header_lines);
int64_t CountCsvRecordsIn(std::string_view bytes, const CsvOptions& csv, int64_t header_lines);

std::optional<int64_t> JsonRecords(const JsonCounts& counts, const JsonOptions& json);

// The lines before a CSV file's first record under `format` and `csv` (skip_lines and headers).
int64_t CsvHeaderLines(Format format, const CsvOptions& csv);

}  // namespace millrace::load
