#include "load/bad_file.h"

namespace millrace::load {

std::string_view BadFileName(BadFile reason) {
  switch (reason) {
    case BadFile::kReaderError:
      return "READER_ERROR";
    case BadFile::kUnreadable:
      return "UNREADABLE";
    case BadFile::kVanished:
      return "VANISHED";
    case BadFile::kCorruptStream:
      return "CORRUPT_STREAM";
    case BadFile::kDecompressionBomb:
      return "DECOMPRESSION_BOMB";
    case BadFile::kJsonTooDeep:
      return "JSON_TOO_DEEP";
    case BadFile::kJsonTruncated:
      return "JSON_TRUNCATED";
    case BadFile::kLastLineTooLong:
      return "LAST_LINE_TOO_LONG";
    case BadFile::kRecordsMismatch:
      return "RECORDS_MISMATCH";
    case BadFile::kCrashedServer:
      return "CRASHED_SERVER";
    case BadFile::kPartitionNotInPath:
      return "PARTITION_NOT_IN_PATH";
  }
  return "READER_ERROR";
}

Status BadFileError(const Status& status, BadFile reason) {
  return status.WithDetail({ErrorDomain::kBadFile, static_cast<int32_t>(reason), 0});
}

BadFile ReasonOf(const Status& status) {
  if (status.detail().domain != ErrorDomain::kBadFile) return BadFile::kReaderError;
  return static_cast<BadFile>(status.detail().code);
}

}  // namespace millrace::load
