#include "files/file_job_source.h"

#include <algorithm>
#include <future>
#include <limits>
#include <thread>

#include "common/logging.h"
#include "files/crash_suspects.h"
#include "files/file_load_rounds.h"
#include "files/reconcile.h"
#include "job/job_errors.h"
#include "load/csv_join.h"

namespace millrace::files {
namespace {

// A task whose batch is at most kReadAheadMaxBytes and leaves files after it lists and starts
// downloading the next batch while it loads (NextBatch).
constexpr uint64_t kReadAheadMaxBytes = 64 << 20;
// Reconciliation lists below the offset in pages of this many files.
constexpr size_t kReconcilePage = 1000;

// A task's listing: the files after `offset`, within the batch limits.
source::ListOptions ListAfter(const std::string& offset, const job::BatchLimits& limits) {
  source::ListOptions list;
  list.start_after = offset;
  list.max_files = static_cast<size_t>(limits.max_items);
  list.max_bytes = static_cast<uint64_t>(limits.max_bytes);
  return list;
}

// The last-modified time of the oldest of `files` ({} when none tells one): the backlog's age.
Clock::WallTime OldestModified(const std::vector<source::FileInfo>& files) {
  Clock::WallTime oldest{};
  for (const source::FileInfo& f : files) {
    if (f.last_modified != Clock::WallTime{} &&
        (oldest == Clock::WallTime{} || f.last_modified < oldest)) {
      oldest = f.last_modified;
    }
  }
  return oldest;
}

}  // namespace

// The next batch of a job, listed and downloading on a thread of its own while the current
// batch loads. Only a read ahead: the task that takes it checks that the job's epoch and offset
// are still the ones it was listed for, and loads and commits it like any batch.
//
// It lists at once but downloads only once the current batch's downloads have all started
// (`after`, BatchFetcher::AllStarted; not valid when the current batch has no fetcher yet):
// the downloads then run as one pipeline, batch after batch, through the current batch's load
// and commit. Started together, the two batches' downloads competed and ended together, and
// the source stood idle while the current batch loaded and committed (docs/PERFORMANCE.md).
// `after` is readied at the latest when the current batch's fetcher goes, which is before the
// next Poll or TurnEnded can destroy this read ahead: the wait never outlives its task.
class NextBatch {
 public:
  NextBatch(std::shared_ptr<source::FileSource> source, load::SourceKind kind,
            source::ListOptions list, load::FetchOptions fetch,
            std::shared_ptr<load::WorkDirs> work_dirs, int64_t epoch,
            std::shared_future<void> after)
      : source_(std::move(source)), start_after_(list.start_after), epoch_(epoch) {
    lister_ = std::thread(
        [this, kind, list, fetch, work_dirs = std::move(work_dirs), after = std::move(after)] {
          listing_ = source_->List(list);
          if (!listing_.ok() || listing_->files.empty()) return;
          if (after.valid()) after.wait();
          auto work = work_dirs->Take();
          if (!work.ok()) return;
          work_ = std::move(work).value();
          fetcher_ = std::make_unique<load::BatchFetcher>(*source_, kind, listing_->files, fetch,
                                                          work_->path());
        });
  }
  ~NextBatch() {
    if (lister_.joinable()) lister_.join();
    fetcher_.reset();  // before the directory it writes to
  }
  NextBatch(const NextBatch&) = delete;
  NextBatch& operator=(const NextBatch&) = delete;

  // True when the listing is done, downloading, and for this epoch and offset.
  bool Matches(int64_t epoch, const std::string& offset) {
    if (lister_.joinable()) lister_.join();
    return epoch == epoch_ && offset == start_after_ && fetcher_ != nullptr;
  }
  const source::Listing& listing() const { return *listing_; }
  load::BatchFetcher* fetcher() { return fetcher_.get(); }

 private:
  const std::shared_ptr<source::FileSource> source_;  // the fetcher's threads read it
  const std::string start_after_;
  const int64_t epoch_;
  // Written by lister_ before it ends; read after it is joined.
  Result<source::Listing> listing_ = Status::Unavailable("not listed yet");
  std::unique_ptr<load::WorkDir> work_;
  std::unique_ptr<load::BatchFetcher> fetcher_;
  std::thread lister_;
};

namespace {

// A batch of files: loads in rounds from a fetcher that started with the batch (or with the
// read ahead that listed it).
class FileBatch final : public job::SourceBatch {
 public:
  // No `files`: the listing held only files committed already (SkipCommittedAhead); the batch
  // writes nothing and moves the offset to `end`.
  FileBatch(const job::Offset& start, const job::Offset& end, std::vector<source::FileInfo> files,
            LoadSpec spec, job::JobProperties properties, const job::FileSourceRequest* config,
            load::FetchOptions fetch, std::shared_ptr<CrashSuspects> suspects,
            std::unique_ptr<NextBatch> ahead, bool with_others)
      : job::SourceBatch(start, end,
                         files.empty() ? end.Text(job::kFileNamePart) : files.front().key,
                         files.empty() ? end.Text(job::kFileNamePart) : files.back().key,
                         static_cast<int64_t>(files.size()), TotalBytes(files)),
        files_(std::move(files)),
        spec_(std::move(spec)),
        properties_(std::move(properties)),
        config_(config),
        fetch_(fetch),
        suspects_(std::move(suspects)),
        ahead_(std::move(ahead)),
        with_others_(with_others) {}

  Result<job::LoadedBatch> Load(job::Sink& sink, const job::TaskContext& task,
                                int attempt) override {
    first_error_.clear();
    if (files_.empty()) {
      auto txn = sink.Begin(task.database);
      if (!txn.ok()) return JobError(job::JobErrorCode::kLoad, txn.status());
      return job::LoadedBatch{std::move(txn).value(), {}, {}, ""};
    }
    spec_.job_id = task.job_id;
    spec_.task_id = task.task_id;
    spec_.with_other_tasks = with_others_;
    spec_.now_us = task.now_us;
    // A retry fetches again: the read ahead's downloads (or the first attempt's) may be what
    // failed.
    std::unique_ptr<load::WorkDir> work;
    std::unique_ptr<load::BatchFetcher> own;
    load::BatchFetcher* fetcher = attempt == 0 && ahead_ ? ahead_->fetcher() : nullptr;
    if (fetcher == nullptr) {
      auto created = config_->work_dirs->Take();
      if (!created.ok()) return JobError(job::JobErrorCode::kLoad, created.status());
      work = std::move(created).value();
      own = std::make_unique<load::BatchFetcher>(*config_->files, spec_.options.kind, files_,
                                                 fetch_, work->path());
      fetcher = own.get();
    }
    const CrashSuspects::Reading reading =
        suspects_->BeforeReading(files_, task.task_id, task.now_us, with_others_);
    if (Status marked = config_->catalog->MarkReading(task.job_id, reading.marks); !marked.ok()) {
      return JobError(job::JobErrorCode::kLoad, marked.WithContext("marking the files being read"));
    }
    FileLoadRequest request{&spec_,  &properties_,         &files_,
                            fetcher, config_->fail_points, &first_error_};
    request.set_aside = &reading.set_aside;
    auto loaded = LoadFileRounds(sink, task, request);
    own.reset();  // before the directory it writes to
    // The server is still up: whatever the load did, these files did not stop it.
    suspects_->Read(files_);
    if (Status cleared = config_->catalog->ClearReading(task.job_id, task.task_id); !cleared.ok()) {
      // Left marks only make these files suspects after a restart (read alone once more).
      MR_LOG(kWarning) << "job " << task.job_name
                       << ": could not clear the marks of the files read: " << cleared.message();
    }
    return loaded;
  }

 private:
  static int64_t TotalBytes(const std::vector<source::FileInfo>& files) {
    int64_t bytes = 0;
    for (const auto& f : files)
      bytes += static_cast<int64_t>(f.size);
    return bytes;
  }

  const std::vector<source::FileInfo> files_;
  LoadSpec spec_;
  const job::JobProperties properties_;
  const job::FileSourceRequest* const config_;
  const load::FetchOptions fetch_;
  const std::shared_ptr<CrashSuspects> suspects_;
  std::unique_ptr<NextBatch> ahead_;  // holds the read ahead's fetcher and its directory
  const bool with_others_;            // a concurrent task's batch (BatchLimits::after)
};

}  // namespace

FileJobSource::FileJobSource(job::FileSourceRequest config)
    : config_(std::move(config)),
      spec_template_(LoadSpec{.insert_sql = config_.insert_sql,
                              .analysis = config_.analysis,
                              .options = config_.options,
                              .key_counts = std::make_shared<KeyCountPolicy>()}),
      chain_slots_(std::make_shared<load::DownloadSlots>(FetchOptions().parallelism)) {}

FileJobSource::~FileJobSource() = default;

void FileJobSource::LookAgain() {
  MutexLock lock(&mu_);
  next_reconcile_ = Clock::SteadyTime{};
}

bool FileJobSource::OneTaskAtATime(const job::JobRecord& job) {
  auto suspects = Suspects(job);
  return !suspects.ok() || !(*suspects)->empty();
}

bool FileJobSource::WantsEvent(const std::string& path, bool directory, const job::Offset& offset) {
  if (!config_.files->Covers(path, directory)) return false;
  if (directory) return true;
  const std::string after = offset.Text(job::kFileNamePart);
  if (!after.empty() && config_.files->KeyOf(path) <= after) {
    // A late file: instead of waiting for reconcile_interval, the turn this event wakes
    // reconciles (lists below the offset).
    MutexLock lock(&mu_);
    next_reconcile_ = Clock::SteadyTime{};
  }
  return true;
}

void FileJobSource::TurnEnded(job::TurnEnd end) {
  std::unique_ptr<NextBatch> ahead;
  {
    MutexLock lock(&mu_);
    // Due again at once: the read ahead keeps downloading for the next turn, whose Poll takes
    // it only for the same epoch and offset (dropping it would waste its downloads and start
    // that turn's first batch with nothing downloaded; docs/PERFORMANCE.md).
    if (end == job::TurnEnd::kDueAgain && !concurrent_turn_) return;
    ahead = std::move(ahead_);
    // A turn of concurrent tasks may have left files committed above the offset: the next
    // turn's first listing reads them (SkipCommittedAhead).
    if (concurrent_turn_) ahead_epoch_ = -1;
    concurrent_turn_ = false;
  }
  // Destroyed here, without the lock: it waits for its lister and downloads in progress.
}

load::FetchOptions FileJobSource::FetchOptions() const {
  load::FetchOptions fetch = load::FetchOptions::For(config_.options);
  fetch.parallelism = config_.download_parallelism;
  // s3.connection.maximum narrows it for this job; it never widens the server's bound.
  if (config_.options.max_connections) {
    fetch.parallelism = std::min(fetch.parallelism, *config_.options.max_connections);
  }
  // Read in place; the ledger records the version read, checked unchanged after the read
  // (file_load_rounds.h).
  fetch.local_files = load::FetchOptions::LocalFiles::kInPlace;
  // Small CSV files are checked, counted, shaped and joined from memory (at most
  // kGroupFileBytes a file, so a batch of 256 holds 16 MiB at most); in a dialect whose groups
  // are joined they are not written to files unless a read needs one (file_load_rounds.cc).
  fetch.keep_bytes_max = kGroupFileBytes;
  fetch.kept_in_memory_only = load::CsvJoinable(config_.options);
  return fetch;
}

Result<std::shared_ptr<CrashSuspects>> FileJobSource::Suspects(const job::JobRecord& job) {
  {
    MutexLock lock(&mu_);
    if (suspects_ != nullptr) return suspects_;
  }
  MR_ASSIGN_OR_RETURN(std::vector<job::ReadingMark> left, config_.catalog->ReadingMarks(job.id));
  if (!left.empty()) {
    MR_LOG(kWarning) << "job " << job.name << ": the server stopped while reading " << left.size()
                     << " file(s), first " << left.front().key << "; they are read one at a time";
  }
  auto suspects = std::make_shared<CrashSuspects>(left, config_.last_stop_was_fault);
  MutexLock lock(&mu_);
  suspects_ = suspects;
  return suspects;
}

Result<bool> FileJobSource::SkipCommittedAhead(const job::JobRecord& job,
                                               const job::BatchLimits& limits,
                                               const std::string& after, source::Listing& listing) {
  const std::string committed = job.current_offset.Text(job::kFileNamePart);
  bool read = false;
  {
    MutexLock lock(&mu_);
    // Only concurrent tasks leave files committed above the offset (a window a crash, a failure
    // or a stale batch stopped), and only before this epoch or turn: within a turn its own
    // tasks' files are never listed again.
    read = after == committed && job.epoch != ahead_epoch_;
    if (limits.after.has_value()) concurrent_turn_ = true;
  }
  if (read) {
    MR_ASSIGN_OR_RETURN(auto entries, config_.catalog->LedgerPage(
                                          job.id, committed, std::numeric_limits<int64_t>::max(),
                                          std::nullopt, ""));
    std::set<std::string> keys;
    for (const job::LedgerEntry& e : entries) {
      if (e.state != job::FileState::kRetrying) keys.insert(e.key);
    }
    if (!keys.empty()) {
      MR_LOG(kInfo) << "job " << job.name << ": " << keys.size()
                    << " file(s) after the offset were committed already, first " << *keys.begin()
                    << "; the listing passes over them";
    }
    MutexLock lock(&mu_);
    committed_ahead_ = std::move(keys);
    ahead_epoch_ = job.epoch;
  }
  MutexLock lock(&mu_);
  // Those at or before where this listing starts are behind every later listing.
  committed_ahead_.erase(committed_ahead_.begin(), committed_ahead_.upper_bound(after));
  if (committed_ahead_.empty()) return false;
  const size_t listed = listing.files.size();
  std::erase_if(listing.files, [&](const source::FileInfo& f) NO_THREAD_SAFETY_ANALYSIS {
    return committed_ahead_.contains(f.key);
  });
  return listing.files.size() != listed;
}

Result<std::string> FileJobSource::Reconcile(const job::JobRecord& job, bool* unsettled) {
  const job::JobProperties& props = job.properties;
  const std::string offset = job.current_offset.Text(job::kFileNamePart);
  if (offset.empty() || offset <= job.reconcile_floor) return std::string();  // nothing below
  // Everything between the floor and the offset, page by page.
  std::vector<source::FileInfo> listed;
  source::ListOptions list;
  list.start_after = job.reconcile_floor;
  list.max_files = kReconcilePage;
  list.max_bytes = UINT64_MAX;
  while (true) {
    MR_ASSIGN_OR_RETURN(source::Listing page, config_.files->List(list));
    *unsettled = *unsettled || page.unsettled_files > 0;
    const bool past_offset = !page.files.empty() && page.files.back().key > offset;
    for (source::FileInfo& f : page.files) {
      if (f.key <= offset) listed.push_back(std::move(f));
    }
    if (past_offset || !page.more || page.files.empty()) break;
    list.start_after = listed.back().key;
  }
  MR_ASSIGN_OR_RETURN(auto ledger, config_.catalog->LedgerEntries(job.id, std::nullopt));
  Reconciliation found =
      files::Reconcile(listed, ledger, offset, job.reconcile_floor, props.late_files, job.id,
                       MicrosSinceEpoch(config_.clock->WallNow()));
  std::vector<job::LedgerEntry> record = found.skipped;
  record.insert(record.end(), found.changed.begin(), found.changed.end());
  MR_RETURN_IF_ERROR(config_.catalog->RecordFiles(record));
  if (!found.late.empty()) {
    MR_LOG(kInfo) << "job " << job.name << ": " << found.late.size()
                  << " late or retried file(s) to load, first " << found.late.front().key;
  }
  {
    MutexLock lock(&mu_);
    pending_.assign(found.late.begin(), found.late.end());
  }
  if (!found.changed.empty()) {
    return std::to_string(found.changed.size()) +
           " loaded file(s) changed after they were loaded (not reloaded), first " +
           found.changed.front().key;
  }
  if (!found.skipped.empty()) {
    return std::to_string(found.skipped.size()) +
           " late file(s) skipped (late_files = ignore), first " + found.skipped.front().key;
  }
  return std::string();
}

Result<job::Polled> FileJobSource::Poll(const job::JobRecord& job, const job::BatchLimits& limits) {
  auto suspects = Suspects(job);
  if (!suspects.ok()) return JobError(job::JobErrorCode::kLoad, suspects.status());
  job::Polled polled;
  const Clock::SteadyTime now = config_.clock->SteadyNow();
  bool reconcile_due = false;
  {
    MutexLock lock(&mu_);
    reconcile_due = now >= next_reconcile_;
    if (reconcile_due) {
      next_reconcile_ = now + std::chrono::seconds(job.properties.reconcile_interval_seconds);
    }
  }
  if (reconcile_due) {
    bool unsettled = false;
    auto note = Reconcile(job, &unsettled);
    if (!note.ok()) {
      // Late files wait for the next reconciliation; new files are not held up by it.
      MR_LOG(kWarning) << "job " << job.name
                       << ": reconciliation failed: " << note.status().message();
    } else if (!note->empty()) {
      polled.note = std::move(note).value();
    }
    if (unsettled) {
      // Files still being written stop the listing: look again soon to see past them.
      MutexLock lock(&mu_);
      next_reconcile_ = now + kUnsettledPoll;
    }
  }

  // Where this batch starts: the committed offset, or with concurrent tasks the end of the
  // batch dispatched last.
  const job::Offset start = limits.after.value_or(job.current_offset);
  const bool concurrent = limits.after.has_value();
  const std::string offset = start.Text(job::kFileNamePart);
  LoadSpec spec = spec_template_;
  spec.strict = job.properties.strict;
  std::vector<source::FileInfo> files;
  std::unique_ptr<NextBatch> ahead;
  source::Listing listing;
  {
    // Late files and retries first: they are older than anything after the offset.
    MutexLock lock(&mu_);
    uint64_t bytes = 0;
    while (!pending_.empty() && static_cast<int64_t>(files.size()) < limits.max_items &&
           bytes < static_cast<uint64_t>(limits.max_bytes)) {
      bytes += pending_.front().size;
      files.push_back(std::move(pending_.front()));
      pending_.pop_front();
    }
    for (size_t keep = (*suspects)->BatchSize(files); files.size() > keep; files.pop_back())
      pending_.push_front(std::move(files.back()));
    ahead = std::move(ahead_);  // a read ahead not taken now is stale after this task
  }
  if (!files.empty()) {
    polled.more = true;  // new files may wait after the offset: look again at once
    polled.lag_items = static_cast<int64_t>(files.size());
    for (const auto& f : files)
      polled.lag_bytes += static_cast<int64_t>(f.size);
    polled.oldest_unloaded = OldestModified(files);
    polled.batch = std::make_unique<FileBatch>(
        job.current_offset, job.current_offset, std::move(files), std::move(spec), job.properties,
        &config_, FetchOptions(), *suspects, nullptr, concurrent);
    return polled;
  }

  const source::ListOptions list = ListAfter(offset, limits);
  if (ahead != nullptr && ahead->Matches(job.epoch, offset)) {
    listing = ahead->listing();  // listed and downloading since the last task
  } else {
    ahead.reset();
    auto listed = config_.files->List(list);
    if (!listed.ok()) return JobError(job::JobErrorCode::kGetRemoteData, listed.status());
    listing = std::move(listed).value();
  }
  // EndOffset: the greatest matching key seen, this listing's or an earlier one's.
  polled.end_offset = job::Offset::FileName(
      std::max(job.end_offset.Text(job::kFileNamePart), listing.last_matching_key));
  if (listing.unsettled_files > 0) polled.look_again = kUnsettledPoll;
  if (!listing.unlisted_directories.empty() && !polled.note) {
    polled.note = std::to_string(listing.unlisted_directories.size()) +
                  " directory(ies) passed over: " + listing.unlisted_directories.front() +
                  "; their files load once they can be listed";
  }
  if (listing.files.empty()) {
    polled.lag_items = static_cast<int64_t>(listing.unsettled_files);
    return polled;
  }
  // The batch covers what was listed, files committed already included.
  std::string end_key = listing.files.back().key;
  auto skipped = SkipCommittedAhead(job, limits, offset, listing);
  if (!skipped.ok()) return JobError(job::JobErrorCode::kLoad, skipped.status());
  if (*skipped) ahead.reset();  // its fetcher downloads the files as listed
  if (listing.files.empty()) {
    polled.more = listing.more || listing.unsettled_files > 0;
    polled.batch = std::make_unique<FileBatch>(
        start, job::Offset::FileName(end_key), std::vector<source::FileInfo>(), std::move(spec),
        job.properties, &config_, FetchOptions(), *suspects, nullptr, concurrent);
    return polled;
  }
  if (const size_t keep = (*suspects)->BatchSize(listing.files); keep < listing.files.size()) {
    // Read alone: neither the rest nor a read ahead listed after them joins this batch.
    listing.files.resize(keep);
    listing.more = true;
    end_key = listing.files.back().key;
    ahead.reset();
  }
  polled.more = listing.more || listing.unsettled_files > 0;
  polled.lag_items = static_cast<int64_t>(listing.files.size());
  uint64_t batch_bytes = 0;
  for (const auto& f : listing.files)
    batch_bytes += f.size;
  polled.lag_bytes = static_cast<int64_t>(batch_bytes);
  polled.oldest_unloaded = OldestModified(listing.files);
  load::FetchOptions fetch = FetchOptions();
  if (!concurrent) fetch.slots = chain_slots_;
  // Concurrent tasks read no batch ahead: each task's downloads start with its load, beside the
  // other tasks' (a read ahead queues its downloads behind the batch before it, which would
  // make the tasks' downloads one pipeline again).
  if (listing.more && batch_bytes <= kReadAheadMaxBytes && (*suspects)->empty() && !concurrent) {
    source::ListOptions after = list;
    after.start_after = end_key;
    // Queued behind this batch's downloads when they are under way already (a read ahead's);
    // this batch's own fetcher starts only when its task loads, so the next one starts now.
    std::shared_future<void> queued_behind;
    if (ahead != nullptr) queued_behind = ahead->fetcher()->AllStarted();
    auto next = std::make_unique<NextBatch>(config_.files, config_.options.kind, after, fetch,
                                            config_.work_dirs, job.epoch, std::move(queued_behind));
    MutexLock lock(&mu_);
    ahead_ = std::move(next);
  }
  const job::Offset end = job::Offset::FileName(end_key);
  polled.batch = std::make_unique<FileBatch>(start, end, std::move(listing.files), std::move(spec),
                                             job.properties, &config_, fetch, *suspects,
                                             std::move(ahead), concurrent);
  return polled;
}

Result<std::unique_ptr<TrialBatch>> FileJobSource::LoadFirstBatch(
    const job::JobRecord& job, const job::BatchLimits& limits, job::Sink& sink,
    const job::TaskContext& task) const {
  auto trial = std::make_unique<TrialBatch>();
  auto listed = config_.files->List(ListAfter(job.current_offset.Text(job::kFileNamePart), limits));
  if (!listed.ok()) return JobError(job::JobErrorCode::kGetRemoteData, listed.status());
  trial->listing = std::move(listed).value();
  if (trial->listing.files.empty()) return trial;
  auto work = config_.work_dirs->Take();
  if (!work.ok()) return JobError(job::JobErrorCode::kLoad, work.status());
  trial->work = std::move(work).value();
  // As Poll and FileBatch::Load make a task's.
  trial->spec = spec_template_;
  trial->spec.strict = job.properties.strict;
  trial->spec.job_id = task.job_id;
  trial->spec.task_id = task.task_id;
  trial->spec.now_us = task.now_us;
  trial->fetcher = std::make_unique<load::BatchFetcher>(*config_.files, config_.options.kind,
                                                        trial->listing.files, FetchOptions(),
                                                        trial->work->path());
  FileLoadRequest request{
      &trial->spec, &job.properties,     &trial->listing.files,    trial->fetcher.get(),
      nullptr,      &trial->first_error, &trial->over_filter_ratio};
  trial->loaded = LoadFileRounds(sink, task, request);
  for (size_t i = 0; i < trial->listing.files.size(); ++i) {
    const load::FetchedFile& fetched = trial->fetcher->Wait(i);
    // The dry run reads the files themselves (file_dry_run.cc).
    Status written = trial->fetcher->Materialize(i);
    if (!written.ok()) return JobError(job::JobErrorCode::kLoad, written);
    trial->readables.push_back(fetched.status.ok() ? fetched.path : std::string());
  }
  return trial;
}

Result<std::shared_ptr<job::JobSource>> MakeFileJobSource(job::FileSourceRequest request) {
  return std::shared_ptr<job::JobSource>(std::make_shared<FileJobSource>(std::move(request)));
}

}  // namespace millrace::files
