#include "files/file_load_rounds.h"

#include <map>
#include <optional>

#include "common/logging.h"
#include "job/file_states.h"
#include "job/job_errors.h"
#include "load/bad_file.h"
#include "load/reader_sql.h"

namespace millrace::files {
namespace {

// Small-file groups (BatchLoader::LoadGroupFast): files up to kGroupFileBytes, at most
// kGroupMaxFiles files and kGroupMaxBytes per group, loaded by one statement: DuckDB spends
// about a millisecond on each statement, more than on a file of a few KB. Without counted
// records each file is read twice (the INSERT and the count by file), which costs less than a
// statement each only while they are small. Tables with a key (UNIQUE, AGGREGATE) group the
// same files: a statement over large files gains nothing there (DuckDB 1.4.4 upserted 4 files
// of a million rows in one statement as fast as one by one in a transaction, and 7 files
// slower: 14.4 s against about 10). kGroupFileBytes: file_load_rounds.h.
constexpr size_t kGroupMaxFiles = 1000;
constexpr uint64_t kGroupMaxBytes = 16 << 20;
// JSON files read in place with counted records group whatever their size (BatchLoader::
// GroupsJson): one statement over them costs DuckDB less than one each, and waiting for a group
// costs nothing when no file is downloaded. Up to this many bytes a group.
constexpr uint64_t kInPlaceGroupMaxBytes = 1ULL << 30;
const std::vector<std::string> kJsonShape = {"json"};

// One attempt at the whole batch, in one transaction. Says how the next round must differ
// when this one cannot be committed.
struct Round {
  job::LoadedBatch loaded;
  // A file that could not be loaded: the error as it was made (names the file, and its typed
  // reason, load/bad_file.h); wrapped as kLoad only when the task fails with it.
  Status file_error;
  size_t bad_file = 0;
  bool switch_to_careful = false;
  bool ungroup = false;
  // A keyed file written without counting its keys met one that was not new: count them.
  bool count_keys = false;
  // The sink refused a row of the round's files, sent together: send them file by file.
  bool flush_each = false;
};

class RoundRunner {
 public:
  RoundRunner(job::Sink& sink, const job::TaskContext& task, const FileLoadRequest& request)
      : sink_(sink),
        task_(task),
        spec_(*request.spec),
        props_(*request.properties),
        files_(*request.files),
        first_error_(request.first_error),
        over_filter_ratio_(request.over_filter_ratio),
        fetcher_(*request.fetcher),
        fail_points_(request.fail_points),
        shapes_(files_.size()) {
    if (request.set_aside != nullptr) quarantined_ = *request.set_aside;
  }

  Result<job::LoadedBatch> Run() {
    group_files_ = BatchLoader::CanGroup(spec_);
    if (spec_.key_counts != nullptr) spec_.count_keys = spec_.key_counts->CountKeys();
    // Rounds: at most one that counts keys, one that ungroups, one that turns careful, one that
    // flushes file by file, one per quarantined file and the one that commits.
    for (size_t round = 0; round < files_.size() + 5; ++round) {
      MR_ASSIGN_OR_RETURN(Round r, RunRound());
      // A file read in place that changed during the read explains whatever the round found
      // (bad rows, a bad file, counts that do not add up): nothing of it counts, and the job
      // lists the file again.
      if (Status changed = fetcher_.Unchanged(); !changed.ok()) {
        r.loaded.txn->Rollback().IgnoreError();
        return JobError(job::JobErrorCode::kGetRemoteData, changed);
      }
      if (r.count_keys || r.ungroup || r.switch_to_careful || r.flush_each || !r.file_error.ok()) {
        // The failed statement already aborted the transaction; nothing of it stays.
        r.loaded.txn->Rollback().IgnoreError();
      }
      if (r.count_keys) {
        spec_.count_keys = true;
        if (spec_.key_counts != nullptr) spec_.key_counts->KeysWereNotNew();
        continue;
      }
      if (r.ungroup) {
        group_files_ = false;
        continue;
      }
      if (r.switch_to_careful) {
        careful_ = true;
        continue;
      }
      if (r.flush_each) {
        flush_each_ = true;
        group_files_ = false;
        continue;
      }
      if (!r.file_error.ok()) {
        // An interrupted statement (PAUSE, DROP, stop) says nothing about the file.
        if (props_.on_error != job::OnError::kSkipFile ||
            r.file_error.code() == StatusCode::kCancelled) {
          return JobError(job::JobErrorCode::kLoad, r.file_error);
        }
        MR_LOG(kWarning) << "job " << task_.job_name << ": quarantining " << files_[r.bad_file].key
                         << ": " << r.file_error.message();
        quarantined_[r.bad_file] = r.file_error;
        continue;
      }
      const job::LoadStatistic& stats = r.loaded.stats;
      if (first_error_ != nullptr) *first_error_ = r.loaded.first_error;
      if (stats.filtered_rows > 0 &&
          static_cast<double>(stats.filtered_rows) >
              props_.max_filter_ratio * static_cast<double>(stats.scanned_rows)) {
        Status too_many = JobError(
            job::JobErrorCode::kTooManyFailureRows,
            Status::InvalidArgument(
                std::to_string(stats.filtered_rows) + " of " + std::to_string(stats.scanned_rows) +
                " rows were filtered, more than "
                "session.insert_max_filter_ratio = " +
                std::to_string(props_.max_filter_ratio) + "; first: " + r.loaded.first_error));
        if (over_filter_ratio_ != nullptr) {
          *over_filter_ratio_ = std::move(too_many);
          return std::move(r.loaded);
        }
        r.loaded.txn->Rollback().IgnoreError();
        return too_many;
      }
      return std::move(r.loaded);
    }
    return JobError(job::JobErrorCode::kLoad, Status::Internal("the batch could not be loaded"));
  }

 private:
  // The fetched file i, or why the task fails; a file that could not be fetched is
  // quarantined (skip_file) and reported as "".
  Result<std::string> Readable(size_t i) {
    const load::FetchedFile& fetched = fetcher_.Wait(i);
    if (!first_fetched_ && fail_points_ != nullptr) {
      Status s = fail_points_->Check("task.after_download", task_.job_name);
      if (!s.ok()) return JobError(job::JobErrorCode::kLoad, s);
    }
    first_fetched_ = true;
    if (fetched.status.ok()) return fetched.path;
    // A file that changed since it was listed (still being written, or replaced) is not a bad
    // one: the task fails, and a later listing sees the version to load.
    if (props_.on_error != job::OnError::kSkipFile ||
        fetched.status.code() == StatusCode::kAborted) {
      return JobError(
          fetched.download_failed ? job::JobErrorCode::kGetRemoteData : job::JobErrorCode::kLoad,
          fetched.status);
    }
    quarantined_[i] = fetched.status;
    return std::string();
  }

  // Writes file i when it was fetched into memory only (load::BatchFetcher::Materialize).
  Status Materialize(size_t i) {
    Status written = fetcher_.Materialize(i);
    return written.ok() ? written : JobError(job::JobErrorCode::kLoad, written);
  }

  // Every record of file i is a row loaded or filtered, when the job's SELECT keeps every
  // record and the file's records were counted (load/record_count.h; Parquet: the rows its
  // footer declares): a reader that dropped or made up records makes the file a bad one.
  Status Accounted(BatchLoader& loader, size_t i, const FileLoad& loaded) {
    const load::FetchedFile& fetched = fetcher_.Wait(i);
    std::optional<int64_t> records = fetched.records;
    if (!records && spec_.options.format == load::Format::kParquet) {
      MR_ASSIGN_OR_RETURN(records, loader.FooterRows(fetched.path));
    }
    if (!records) return Status::Ok();
    MR_ASSIGN_OR_RETURN(const bool keeps, loader.KeepsEveryRecord());
    if (!keeps || loaded.rows + loaded.filtered == *records) return Status::Ok();
    return load::BadFileError(
        Status::DataLoss("file " + files_[i].key + ": the reader returned " +
                         std::to_string(loaded.rows + loaded.filtered) +
                         " rows where the file holds " + std::to_string(*records) +
                         " records; no part of it is loaded"),
        load::BadFile::kRecordsMismatch);
  }

  // Crash window: the statement about to read `group`.
  Status BeforeReading(const std::vector<size_t>& group) const {
    if (fail_points_ == nullptr || fail_points_->empty()) return Status::Ok();
    for (size_t k : group) {
      Status s = fail_points_->Check("task.reading", files_[k].key);
      if (!s.ok()) return JobError(job::JobErrorCode::kLoad, s);
    }
    return Status::Ok();
  }

  // The shape of file i when it may join a group, else nullptr.
  const std::vector<std::string>* Groupable(size_t i, const std::string& path) {
    if (files_[i].size == 0 || path.empty()) return nullptr;
    if (spec_.options.format == load::Format::kJson) {
      const load::FetchedFile& fetched = fetcher_.Wait(i);
      if (!json_groups_ || !fetched.records) return nullptr;
      return fetched.placed != nullptr || files_[i].size <= kGroupFileBytes ? &kJsonShape : nullptr;
    }
    if (files_[i].size > kGroupFileBytes) return nullptr;
    if (!shapes_[i]) {
      const load::FetchedFile& fetched = fetcher_.Wait(i);
      auto shape = fetched.bytes ? load::CsvShapeIn(spec_.options, *fetched.bytes, path)
                                 : load::CsvShape(spec_.options, path);
      shapes_[i] = shape.ok() ? std::move(shape).value() : std::vector<std::string>();
    }
    return shapes_[i]->empty() ? nullptr : &*shapes_[i];
  }

  // A quarantined file (`why`: its error) goes to the ledger only; a loaded one counts too.
  void RecordQuarantined(Round& r, size_t i, const Status& why) {
    r.loaded.ledger.push_back(Quarantined(Recorder(), files_[i], why));
  }
  void RecordLoaded(Round& r, size_t i, const FileLoad& loaded) {
    const source::FileInfo& f = files_[i];
    r.loaded.ledger.push_back(Loaded(Recorder(), f, loaded.rows));
    job::LoadStatistic& stats = r.loaded.stats;
    stats.scanned_rows += loaded.rows + loaded.filtered;
    stats.filtered_rows += loaded.filtered;
    stats.load_bytes += static_cast<int64_t>(f.size);
    stats.file_size += static_cast<int64_t>(f.size);
    stats.file_number += 1;
    if (r.loaded.first_error.empty()) r.loaded.first_error = loaded.first_error;
  }

  // The files from i on that load with file i in one statement, and their paths.
  // `may_group`: BatchLoader::MayGroup. A group keeps the batch's order.
  Status Group(size_t i, std::string path, bool may_group, std::vector<size_t>* group,
               std::vector<std::string>* paths) {
    group->assign({i});
    paths->assign({path});
    const std::vector<std::string>* shape =
        !careful_ && may_group && group_files_ ? Groupable(i, path) : nullptr;
    auto in_place = [&](size_t k) { return fetcher_.Wait(k).placed != nullptr; };
    const uint64_t max_bytes =
        shape == &kJsonShape && in_place(i) ? kInPlaceGroupMaxBytes : kGroupMaxBytes;
    for (uint64_t bytes = files_[i].size;
         shape != nullptr && group->back() + 1 < files_.size() && group->size() < kGroupMaxFiles;) {
      const size_t j = group->back() + 1;
      if (bytes + files_[j].size > max_bytes || quarantined_.count(j) > 0) break;
      MR_ASSIGN_OR_RETURN(std::string next, Readable(j));
      const std::vector<std::string>* next_shape =
          quarantined_.count(j) > 0 ? nullptr : Groupable(j, next);
      if (next_shape == nullptr || *next_shape != *shape) break;
      group->push_back(j);
      paths->push_back(std::move(next));
      bytes += files_[j].size;
    }
    return Status::Ok();
  }

  job::FileRecorder Recorder() const { return {task_.job_id, task_.task_id, task_.now_us}; }

  Result<Round> RunRound() {
    Round r;
    std::vector<size_t> loaded_files;
    auto txn = sink_.Begin(task_.database);
    if (!txn.ok()) return JobError(job::JobErrorCode::kLoad, txn.status());
    r.loaded.txn = std::move(txn).value();
    BatchLoader loader(r.loaded.txn.get(), spec_);
    auto may_group = loader.MayGroup();
    if (!may_group.ok()) {
      // The loader's own code when it gives one (a target whose model forbids this task).
      const Status& failed = may_group.status();
      return job::JobErrorOf(failed) ? failed : JobError(job::JobErrorCode::kLoad, failed);
    }
    auto json_groups = loader.GroupsJson();
    if (!json_groups.ok()) return JobError(job::JobErrorCode::kLoad, json_groups.status());
    json_groups_ = *json_groups;
    size_t i = 0;
    while (i < files_.size()) {
      std::string path;
      if (quarantined_.count(i) == 0) {
        MR_ASSIGN_OR_RETURN(path, Readable(i));
      }
      if (auto q = quarantined_.find(i); q != quarantined_.end()) {
        RecordQuarantined(r, i, q->second);
        ++i;
        continue;
      }
      std::vector<size_t> group;
      std::vector<std::string> paths;
      MR_RETURN_IF_ERROR(Group(i, path, *may_group, &group, &paths));
      MR_RETURN_IF_ERROR(BeforeReading(group));
      Result<std::vector<FileLoad>> loaded = std::vector<FileLoad>();
      if (group.size() > 1) {
        std::vector<std::optional<int64_t>> records;
        std::vector<const std::string*> contents;
        for (size_t k : group) {
          const load::FetchedFile& fetched = fetcher_.Wait(k);
          records.push_back(fetched.records);
          contents.push_back(fetched.bytes ? &*fetched.bytes : nullptr);
        }
        // Joined, the group is read from `contents` only; else DuckDB reads its files.
        auto joins = loader.JoinsGroup(records);
        if (!joins.ok()) return JobError(job::JobErrorCode::kLoad, joins.status());
        if (!*joins) {
          for (size_t k : group)
            MR_RETURN_IF_ERROR(Materialize(k));
        }
        // Read as one file when the dialect allows it (BatchLoader::LoadGroupFast).
        loaded = loader.LoadGroupFast(
            paths, records, fetcher_.work_dir() + "/j" + std::to_string(i) + ".csv", contents);
      } else {
        MR_RETURN_IF_ERROR(Materialize(i));
        auto one = careful_ ? loader.LoadCareful(files_[i].key, path)
                            : loader.LoadFast(files_[i].key, path);
        if (one.ok()) {
          loaded->push_back(*one);
        } else {
          loaded = one.status();
        }
      }
      if (!loaded.ok()) {
        const Status& error = loaded.status();
        if (!spec_.count_keys && BatchLoader::IsKeysNotNew(error)) {
          r.count_keys = true;
        } else if (error.code() != StatusCode::kCancelled && !careful_ &&
                   BatchLoader::IsRowLevelError(error)) {
          r.switch_to_careful = true;
        } else if (error.code() != StatusCode::kCancelled && group.size() > 1) {
          MR_LOG(kInfo) << "job " << task_.job_name << ": loading " << group.size()
                        << " files one by one: " << error.message();
          r.ungroup = true;
        } else {
          r.file_error = error;
          r.bad_file = i;
        }
        return r;
      }
      for (size_t k = 0; k < group.size(); ++k) {
        if (Status counted = Accounted(loader, group[k], (*loaded)[k]); !counted.ok()) {
          r.file_error = counted;
          r.bad_file = group[k];
          return r;
        }
      }
      for (size_t k = 0; k < group.size(); ++k)
        RecordLoaded(r, group[k], (*loaded)[k]);
      if (flush_each_) MR_RETURN_IF_ERROR(Flush(r, {i}));
      if (!r.file_error.ok()) return r;
      loaded_files.insert(loaded_files.end(), group.begin(), group.end());
      i = group.back() + 1;
    }
    if (props_.on_error == job::OnError::kSkipFile && !flush_each_) {
      MR_RETURN_IF_ERROR(Flush(r, loaded_files));
    }
    return r;
  }

  // With on_error = skip_file the rows of `files` (just loaded) go to the sink now
  // (SinkTransaction::Flush): a refusal of one of them makes the file bad when it is one, else
  // the next round sends the files one by one. Another error fails the task.
  Status Flush(Round& r, const std::vector<size_t>& files) {
    Status flushed = r.loaded.txn->Flush();
    if (flushed.ok()) return Status::Ok();
    if (flushed.code() != StatusCode::kInvalidArgument) {
      return JobError(job::JobErrorCode::kLoad, flushed);
    }
    if (files.size() == 1) {
      r.file_error = flushed.WithContext("file " + files_[files.front()].key);
      r.bad_file = files.front();
    } else {
      r.flush_each = true;
    }
    return Status::Ok();
  }

  job::Sink& sink_;
  const job::TaskContext& task_;
  LoadSpec spec_;  // a copy: a round may turn count_keys on
  const job::JobProperties& props_;
  const std::vector<source::FileInfo>& files_;
  std::string* const first_error_;
  Status* const over_filter_ratio_;
  load::BatchFetcher& fetcher_;
  const FailPoints* const fail_points_;

  bool careful_ = false;
  bool group_files_ = false;
  bool flush_each_ = false;  // Round::flush_each
  bool first_fetched_ = false;
  bool json_groups_ = false;  // BatchLoader::GroupsJson, for the round running
  // Files set aside for this task (on_error = skip_file, or FileLoadRequest::set_aside), with
  // the reason.
  std::map<size_t, Status> quarantined_;
  std::vector<std::optional<std::vector<std::string>>> shapes_;
};

}  // namespace

Result<job::LoadedBatch> LoadFileRounds(job::Sink& sink, const job::TaskContext& task,
                                        const FileLoadRequest& request) {
  return RoundRunner(sink, task, request).Run();
}

}  // namespace millrace::files
