#include "job/file_states.h"

#include "load/bad_file.h"

namespace millrace::job {
namespace {

LedgerEntry Entry(const FileRecorder& by, const source::FileInfo& file, FileState state) {
  LedgerEntry e;
  e.job_id = by.job_id;
  e.key = file.key;
  e.etag = file.etag;
  e.size = static_cast<int64_t>(file.size);
  e.state = state;
  e.task_id = by.task_id;
  e.load_time_us = by.now_us;
  return e;
}

}  // namespace

LedgerEntry Loaded(const FileRecorder& by, const source::FileInfo& file, int64_t rows) {
  LedgerEntry e = Entry(by, file, FileState::kLoaded);
  e.rows = rows;
  return e;
}

LedgerEntry Quarantined(const FileRecorder& by, const source::FileInfo& file, const Status& why) {
  LedgerEntry e = Entry(by, file, FileState::kQuarantined);
  e.error = why.message();
  e.reason = std::string(load::BadFileName(load::ReasonOf(why)));
  return e;
}

LedgerEntry Skipped(const FileRecorder& by, const source::FileInfo& file, std::string why) {
  LedgerEntry e = Entry(by, file, FileState::kSkipped);
  e.error = std::move(why);
  return e;
}

Result<LedgerEntry> Retried(LedgerEntry quarantined) {
  if (quarantined.state != FileState::kQuarantined) {
    return Status::FailedPrecondition("file '" + quarantined.key + "' is " +
                                      std::string(FileStateName(quarantined.state)) +
                                      ", not QUARANTINED: only a quarantined file is retried");
  }
  quarantined.state = FileState::kRetrying;
  quarantined.error = "retry requested";
  return quarantined;
}

LedgerEntry NotedChanged(LedgerEntry loaded, const source::FileInfo& now) {
  loaded.error = "changed after it was loaded (now ETag " + now.etag + ", " +
                 std::to_string(now.size) + " bytes); not reloaded";
  return loaded;
}

bool LoadsAgain(const LedgerEntry& entry) {
  return entry.state == FileState::kRetrying;
}

bool ChangedSinceLoaded(const LedgerEntry& entry, const source::FileInfo& now) {
  return entry.state == FileState::kLoaded && entry.error.empty() &&
         (entry.etag != now.etag || entry.size != static_cast<int64_t>(now.size));
}

}  // namespace millrace::job
