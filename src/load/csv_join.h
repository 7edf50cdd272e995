// Joining small CSV files into one file for DuckDB's reader. DuckDB's multi-file CSV reader sets
// each file up on its own (a scan, a buffer manager, the first batch), which for files of a few
// KB costs more than reading them: 256 files of 2 KB took 40-50 ms a statement, and 17-20 ms
// as one file of their bytes (docs/PERFORMANCE.md). A job's small-file group is therefore read
// as one joined file when nothing of a file's parsing can depend on where it starts.
//
// Contract
// - CsvJoinable(options): true only for plain CSV without a quote character, an escape
//   character, skipped lines or path partition columns. In such a dialect a record never spans
//   a line end, so a file's records are the same whether it is read alone or after another
//   file that ends with a line end; with quotes, a quote left open at one file's end would
//   swallow the next file's lines into one row.
// - JoinCsvFiles(paths, line_delimiter, out) writes the files' bytes into `out` in order, each
//   without a leading UTF-8 byte order mark (DuckDB drops one at a file's start, and would read
//   one inside a file as data) and followed by `line_delimiter` when it does not end with it
//   (DuckDB ends a file's last record at the end of the file; the delimiter ends it the same
//   way in the joined file). `out` is rewritten from its start (common/file_rewrite.h): a work
//   directory keeps its files' inodes between batches. IO_ERROR naming the file when one cannot
//   be read or `out` written; `out` is then removed. `contents`, when given (one per path),
//   holds the bytes of the files it does not leave null, which are then not read.
// - Thread-safety: pure functions of their arguments and the files.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "load/file_params.h"

namespace millrace::load {

bool CsvJoinable(const FileFunctionOptions& options);

Status JoinCsvFiles(const std::vector<std::string>& paths, const std::string& line_delimiter,
                    const std::string& out, const std::vector<const std::string*>& contents = {});

}  // namespace millrace::load
