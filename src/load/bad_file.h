// Why a file is a bad one, as a typed reason (ErrorDetail domain kBadFile) set where the error
// is made, so that the ledger (files.reason, job_files().Reason), the console and the metrics
// (millrace_job_files_quarantined_by_reason) say it without reading the message.
//
// Contract
// - BadFileError(status, reason) returns `status` with the reason as its detail; ReasonOf
//   reads it back (kReaderError for an error without one: DuckDB's readers refused the file).
// - BadFileName gives the stable upper-case name stored and shown, e.g. "JSON_TOO_DEEP".
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace millrace::load {

enum class BadFile : int32_t {
  kReaderError = 1,     // DuckDB's reader refused it (its message says why)
  kUnreadable,          // cannot be opened or read (permission, not a regular file, I/O)
  kVanished,            // deleted after the listing
  kCorruptStream,       // compressed stream truncated, corrupt, or not compressed at all
  kDecompressionBomb,   // expands past max_decompressed_bytes
  kJsonTooDeep,         // nested deeper than kMaxJsonDepth
  kJsonTruncated,       // ends inside a value
  kLastLineTooLong,     // a CSV last line longer than DuckDB's reader takes
  kRecordsMismatch,     // rows loaded + filtered differ from the records it holds
  kCrashedServer,       // the server crashed reading it (files/crash_suspects.h)
  kPartitionNotInPath,  // path_partition_keys names a key its path has no directory for
};

std::string_view BadFileName(BadFile reason);
Status BadFileError(const Status& status, BadFile reason);
BadFile ReasonOf(const Status& status);

}  // namespace millrace::load
