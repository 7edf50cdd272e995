// The load rounds of a file batch: how a task's files get into the job's table, inside one
// transaction of the sink, without committing it (the commit gate does that).
//
// Rounds: fast first (small files of one shape many to a statement, BatchLoader::CanGroup;
// plain CSV without quotes read as one file joined in the work directory, load/csv_join.h);
// a row-level error turns the whole batch careful (bad rows filtered and recorded); with
// on_error = skip_file a file that cannot be loaded is set aside (QUARANTINED in the ledger)
// and the batch loaded again without it; a group of files that fails otherwise is loaded
// again file by file, which names the bad one. With skip_file the rows also go to the sink at
// the end of each round (SinkTransaction::Flush: a sink that copies elsewhere meets the
// target's refusals then), and file by file once a round's were refused, which names the file
// the target refuses. Each round starts a fresh transaction because a
// DuckDB error aborts the one it happens in. Too many filtered rows
// (session.insert_max_filter_ratio) fail the batch.
//
// Contract
// - Returns the transaction open with the batch's rows, its ledger entries (one per file,
//   LOADED or QUARANTINED) and statistics; or an error carrying its JobErrorCode: kLoad,
//   kGetRemoteData (a download failed), kTooManyFailureRows. An interrupted statement (PAUSE,
//   DROP, stop) is returned CANCELLED and never makes a file bad.
// - A file that changed since it was listed (the source's ABORTED), or a file read in place
//   that changed during the round's reads (BatchFetcher::Unchanged, checked after every round),
//   fails the task as kGetRemoteData, whatever on_error says: it is not a bad file, and the
//   task runner has the job list again at once (task_runner.h).
// - Files in `set_aside` are never read: they are QUARANTINED with the error given, whatever
//   on_error says (crash_suspects.h).
// - Crash window: fail point "task.after_download" (scope: the job name) once the first file
//   is fetched, before anything is inserted. Fail point "task.reading" (scope: the file's key)
//   just before a statement reads the file: "crash" there stands in for a reader that kills the
//   process.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/fail_point.h"
#include "files/batch_loader.h"
#include "job/job_properties.h"
#include "job/job_source.h"
#include "load/batch.h"

namespace millrace::files {

struct FileLoadRequest {
  const LoadSpec* spec = nullptr;                  // statement, options; not owned
  const job::JobProperties* properties = nullptr;  // strict, on_error, filter ratio; not owned
  const std::vector<source::FileInfo>* files = nullptr;  // not owned
  load::BatchFetcher* fetcher = nullptr;                 // fetching `files`; not owned
  const FailPoints* fail_points = nullptr;               // may be null
  std::string* first_error = nullptr;  // set to the first filtered row (also on failure)
  // Dry runs (job_dry_run.h): when set, a batch with too many filtered rows is returned with
  // its transaction open, and the error its task fails with (kTooManyFailureRows) is put here.
  Status* over_filter_ratio = nullptr;
  // Files not to read (index in `files` -> the reason they are quarantined); may be null.
  const std::map<size_t, Status>* set_aside = nullptr;
};

Result<job::LoadedBatch> LoadFileRounds(job::Sink& sink, const job::TaskContext& task,
                                        const FileLoadRequest& request);

// The largest file that may join a small-file group (BatchLoader::LoadGroupFast). The fetcher
// keeps the bytes of CSV files up to this size (load::FetchOptions::keep_bytes_max): a group
// takes their shape and joins them from memory.
inline constexpr uint64_t kGroupFileBytes = 64 << 10;

}  // namespace millrace::files
