// FileJobSource: the JobSource of a file job — an S3 prefix or a local directory read in key
// order, with late files found by reconciliation and the next batch read ahead. The file room
// (src/files/) holds it with its parts: the load rounds (file_load_rounds.h), the batch loader
// (batch_loader.h), reconciliation (reconcile.h), crash suspects (crash_suspects.h) and the
// dry run (file_dry_run.cc). The job layer builds it through MakeFileJobSource only.
//
// Contract (beyond job_source.h)
// - The offset is {"fileName": key}: the last key loaded in key order. Poll lists matching
//   files after it (ListObjectsV2 start-after: O(new files)), at most max_items files and
//   stopping after the file that reaches max_bytes.
// - Late files and retries first: every reconcile_interval (and at once after a RETRY) the
//   source lists what is between the job's floor and its offset and compares it with the
//   ledger (reconcile.h). Files to load become batches that do not advance the offset; files
//   skipped (late_files = ignore) and loaded files that changed are recorded in the ledger and
//   reported in JobRuntimeMsg. A failed reconciliation is logged and retried at the next
//   interval: it never holds up new files.
// - Read ahead (one task at a time only: concurrent tasks each download their own batch): a
//   batch of at most kReadAheadMaxBytes that leaves files after it lists the next batch at once
//   and downloads it once its own downloads have all started, so that the downloads run batch
//   after batch through each load and commit; the next Poll takes it only if the job is at the
//   same epoch and offset it was listed for.
// - A batch loads in rounds (file_load_rounds.h); its files download in the background while
//   earlier ones load.
// - Crash suspects (crash_suspects.h): a task marks its files in the catalog before it reads
//   them and clears the marks after. The first Poll reads the marks a stopped server left; while
//   any is left, a batch that holds one is cut so that it is read alone (no read ahead then),
//   and a file that stopped the server too often is quarantined unread.
// - Files in the ledger above the offset were committed by concurrent tasks (task_window.h)
//   whose job row a crash did not write, or past a batch whose task failed: a listing that
//   starts at the committed offset skips them (read from the ledger at the first such listing
//   of each epoch, and after a turn of concurrent tasks), and the batch's end still covers
//   them, so the offset moves past them with the next commit. A listing of only such files is
//   a batch of no files that moves the offset.
// - BatchLimits::after (concurrent tasks): the batch lists after it; reconciliation and the
//   late files' batches still go by the committed offset.
// - Polled's lag (files, bytes, and the last-modified time of the oldest) covers the files of
//   the batch returned, at most max_items of them: not what lies past the batch's limits.
// - Thread-safety: see job_source.h; LookAgain may be called from any thread.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <set>
#include <string>

#include "common/clock.h"
#include "common/fail_point.h"
#include "common/thread_annotations.h"
#include "files/batch_loader.h"
#include "job/job_plan.h"
#include "job/job_source.h"
#include "job/job_store.h"
#include "load/batch.h"
#include "source/file_source.h"

namespace millrace::files {

class CrashSuspects;
class NextBatch;

// A dry run of a new job's first task (FileJobSource::LoadFirstBatch, for EXPLAIN CREATE JOB):
// the batch the task would take, fetched and loaded by the task's own code into a transaction
// that is never committed. Destroying it rolls that transaction back, stops the downloads and
// removes the work directory with the files.
struct TrialBatch {
  TrialBatch() = default;
  TrialBatch(const TrialBatch&) = delete;
  TrialBatch& operator=(const TrialBatch&) = delete;

  // Declared in this order so that they are destroyed in the reverse one: the transaction
  // first, then the fetcher (which reads `listing.files` and writes into `work`), the
  // directory last.
  std::unique_ptr<load::WorkDir> work;
  source::Listing listing;  // .files: the batch; none: nothing to load yet
  LoadSpec spec;            // how the task loads them
  std::unique_ptr<load::BatchFetcher> fetcher;
  // Each file's readable path in the work directory, "" when it could not be fetched.
  std::vector<std::string> readables;
  // The transaction open with the batch's rows, ledger entries and statistics
  // (LoadFileRounds), or the error the task would fail with.
  Result<job::LoadedBatch> loaded = Status::Unavailable("not loaded");
  // More rows filtered than session.insert_max_filter_ratio allows: the error the task would
  // fail with (`loaded` holds the batch all the same).
  Status over_filter_ratio;
  std::string first_error;  // the first filtered row, "" when none
};

class FileJobSource final : public job::JobSource {
 public:
  explicit FileJobSource(job::FileSourceRequest config);
  ~FileJobSource() override;

  Result<job::Polled> Poll(const job::JobRecord& job, const job::BatchLimits& limits) override;
  void Committed(const job::Offset& offset) override {}
  // The next Poll reconciles first.
  void LookAgain() override;
  // Drops the read ahead (its downloads stop), unless the turn ended only for other jobs' turn
  // (kDueAgain): the next turn's Poll takes it if the job is still where it was listed for.
  void TurnEnded(job::TurnEnd end) override;
  // While crash suspects are left (or cannot be read): they are read alone.
  bool OneTaskAtATime(const job::JobRecord& job) override;
  std::string Describe() const override { return config_.files->Describe(); }
  // Covered paths wake the job; one at or below the offset also makes its turn reconcile.
  bool WantsEvent(const std::string& path, bool directory, const job::Offset& offset) override;
  // EXPLAIN CREATE JOB (file_dry_run.cc): LoadFirstBatch, then the lines job_dry_run.h lists.
  Result<std::vector<job::DryRunLine>> DryRun(const job::JobRecord& job, job::Sink& sink,
                                              const job::DryRunContext& context) const override;

  // Dry runs (EXPLAIN CREATE JOB, job_dry_run.h): the first task of `job`, a job that has not
  // run, up to its commit. Lists the batch as Poll does (the files after the job's offset,
  // within `limits`; a new job has nothing below its offset to reconcile; no read ahead
  // starts), fetches it as the task does and loads it with LoadFileRounds into a transaction
  // of `sink` (no fail points). A listing that fails is the task's GET_REMOTE_DATA_ERROR; a
  // load that fails is TrialBatch::loaded.
  Result<std::unique_ptr<TrialBatch>> LoadFirstBatch(const job::JobRecord& job,
                                                     const job::BatchLimits& limits,
                                                     job::Sink& sink,
                                                     const job::TaskContext& task) const;

  // Files that are still being written are looked at again after this.
  static constexpr std::chrono::milliseconds kUnsettledPoll{200};

 private:
  // Removes from `listing` the files committed above the offset (see the contract), reading
  // them from the ledger first when due; true when it removed any.
  Result<bool> SkipCommittedAhead(const job::JobRecord& job, const job::BatchLimits& limits,
                                  const std::string& after, source::Listing& listing);
  // Lists below the offset and compares with the ledger; returns the news for JobRuntimeMsg
  // ("" when none).
  Result<std::string> Reconcile(const job::JobRecord& job, bool* unsettled);
  load::FetchOptions FetchOptions() const;
  // The crash suspects of `job`, read from the catalog on the first call.
  Result<std::shared_ptr<CrashSuspects>> Suspects(const job::JobRecord& job);

  const job::FileSourceRequest config_;
  const LoadSpec spec_template_;
  // A batch's downloads and its read ahead's, taken together (load/download_slots.h): no more
  // in flight than a task may have (s3.connection.maximum, the server's bound). A concurrent
  // turn's tasks download beside each other, each within its own bound.
  const std::shared_ptr<load::DownloadSlots> chain_slots_;
  Mutex mu_;
  Clock::SteadyTime next_reconcile_ GUARDED_BY(mu_){};
  // Files at or below the offset still to load (late files, retries), from the last
  // reconciliation.
  std::deque<source::FileInfo> pending_ GUARDED_BY(mu_);
  std::unique_ptr<NextBatch> ahead_ GUARDED_BY(mu_);
  // Keys in the ledger above the committed offset (SkipCommittedAhead), as of `ahead_epoch_`
  // (-1: to be read at the next listing from the offset).
  std::set<std::string> committed_ahead_ GUARDED_BY(mu_);
  int64_t ahead_epoch_ GUARDED_BY(mu_) = -1;
  bool concurrent_turn_ GUARDED_BY(mu_) = false;  // this turn listed with BatchLimits::after
  // From the marks left at start-up; null until the first Poll read them.
  std::shared_ptr<CrashSuspects> suspects_ GUARDED_BY(mu_);
};

// The job layer's FileSourceFactory (job_plan.h): the server and tests wire it.
Result<std::shared_ptr<job::JobSource>> MakeFileJobSource(job::FileSourceRequest request);

}  // namespace millrace::files
