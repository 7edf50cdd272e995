// A reader's error as a person can act on it, rewritten once at the edge where a file's load
// fails: the file's key, what is wrong and where (DuckDB's "Line: N", ours "line N"), what to
// set; never the SQL Millrace ran, the path of the work copy that was read, DuckDB's dump of its
// CSV options or its advice about options a job cannot set; and a bounded length, however long
// the offending value (a 3 MiB CSV line is quoted in DuckDB's error).
//
// Contract
// - DescribeReadError returns `error` with its code and detail kept and its message rewritten:
//   "file <key>: " then the message, where every path that starts with one of `work_paths`
//   (the copy read, the batch's work directory) reads as the key; DuckDB's query context
//   ("LINE 1: ..." and its caret), "Possible Solution:" lines and option dump are cut; a line
//   keeps at most kMaxLineBytes and the message at most kMaxMessageBytes, saying how many
//   bytes were cut; bytes that are not UTF-8 read as U+FFFD (the message is valid UTF-8, fit
//   for the ledger's VARCHAR). OK stays OK.
// - Presentation only: what the error is is decided by its code and detail, never here.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"

namespace millrace::load {

inline constexpr size_t kMaxLineBytes = 240;
inline constexpr size_t kMaxMessageBytes = 800;

Status DescribeReadError(const Status& error, const std::string& key,
                         const std::vector<std::string>& work_paths);

}  // namespace millrace::load
