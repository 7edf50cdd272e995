// A file's states in a job's ledger and the moves between them, in one place (as ClickHouse's
// ObjectStorageQueue keeps a file's metadata): the load rounds, reconciliation and ALTER JOB
// ... RETRY make their ledger entries here and never set a state themselves.
//
//   (new)        --Loaded-->       LOADED       a task loaded it (files/file_load_rounds.h)
//   (new)        --Quarantined-->  QUARANTINED  a task set it aside: a bad file, with its reason
//   (new)        --Skipped-->      SKIPPED      a late file with late_files = ignore (reconcile.h)
//   QUARANTINED  --Retried-->      RETRYING     ALTER JOB ... RETRY
//   RETRYING     --Loaded / Quarantined-->      the next reconciliation reads it again
//   LOADED       --NotedChanged--> LOADED       reconciliation: changed after it was loaded, with
//                                               the change noted and the file not loaded again
//
// Contract
// - Every function returns the entry to record (JobStore::RecordFiles, or the task's Sink);
//   none writes anything.
// - Retried refuses (FAILED_PRECONDITION) an entry that is not QUARANTINED.
// - LoadsAgain is true of the states reconciliation takes as files to load (RETRYING).
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "job/job_model.h"
#include "source/file_source.h"

namespace millrace::job {

// Who records a file, and when.
struct FileRecorder {
  int64_t job_id = 0;
  int64_t task_id = 0;  // 0 outside a task (reconciliation)
  int64_t now_us = 0;
};

LedgerEntry Loaded(const FileRecorder& by, const source::FileInfo& file, int64_t rows);
// `why` is the bad file's error: its message and its typed reason (load::BadFileName) go to the
// ledger.
LedgerEntry Quarantined(const FileRecorder& by, const source::FileInfo& file, const Status& why);
LedgerEntry Skipped(const FileRecorder& by, const source::FileInfo& file, std::string why);
Result<LedgerEntry> Retried(LedgerEntry quarantined);
// A LOADED file listed again with another ETag or size.
LedgerEntry NotedChanged(LedgerEntry loaded, const source::FileInfo& now);
// Whether reconciliation loads a file in this state again.
bool LoadsAgain(const LedgerEntry& entry);
// Whether a loaded file's listing shows a change not noted yet.
bool ChangedSinceLoaded(const LedgerEntry& entry, const source::FileInfo& now);

}  // namespace millrace::job
