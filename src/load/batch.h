// Fetching a batch of source files into a work directory where DuckDB's readers can open them.
//
// Contract
// - A WorkDir (work_dir.h) is the StatementResources that keeps downloaded files alive for a
//   statement.
// - FetchFiles downloads (S3) or copies (local, LocalFiles::kCopy) the listed version of each
//   file, or links a local one in place (LocalFiles::kInPlace: FileSource::Place),
//   `parallelism` at a time, then prepares each for DuckDB (see PrepareLocalFile). It returns
//   the readable paths in the order of `files`. A 0-byte file is returned as it is: it holds no
//   rows (see BatchLoader), even when named .gz. The first failure in list order is returned,
//   naming the file; downloads not started are abandoned, those running are let finish.
// - BatchFetcher fetches the same way in the background, files taken in list order, so a
//   caller loads file i while the files after it download: the transfer of a batch overlaps
//   its load instead of preceding it. Fetchers that share FetchOptions::slots (a batch and its
//   read ahead) have no more downloads in flight together than the slots, the batch of the
//   earlier first key served first.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"
#include "load/download_slots.h"
#include "load/file_params.h"
#include "load/work_dir.h"
#include "source/file_source.h"
#include "sql/doris_table_functions.h"

namespace millrace::load {

struct FetchOptions {
  std::optional<Compression> compression;  // nullopt: by suffix
  int parallelism = 4;
  // Shared with other fetchers (download_slots.h): each download also takes one of these while
  // it transfers; null: `parallelism` bounds this fetcher alone.
  std::shared_ptr<DownloadSlots> slots;
  // BatchFetcher starts another download only while the files in flight total less than this
  // (one file is always allowed): small files go `parallelism` at a time, where latency rules,
  // files larger than the budget one at a time, so each finishes sooner and the first load
  // starts sooner.
  uint64_t max_bytes_in_flight = 32ULL << 20;
  // Local files are never read by their own path (DuckDB may read only the work directory):
  // copied whole, or read in place (FileSource::Place), which a caller must check unchanged
  // after the read (BatchFetcher::Unchanged). In place only from in_place_min_bytes (a small
  // file costs as much to link as to copy) and for at most max_in_place files of a batch at
  // once (each holds a file open while the batch lives); the others are copied.
  enum class LocalFiles { kCopy, kInPlace };
  LocalFiles local_files = LocalFiles::kCopy;
  uint64_t in_place_min_bytes = 64 << 10;
  int max_in_place = 64;
  // JSON files are checked for nesting (json_nesting.h) once prepared, before DuckDB reads them.
  Format format = Format::kCsv;
  std::optional<uint64_t> max_decompressed_bytes;  // FileFunctionOptions'
  char csv_line_end = '\n';  // CSV files: the last character of their line delimiter
  // How the records of a file are counted (FetchedFile::records).
  CsvOptions csv;
  JsonOptions json;
  // Each file is linked under directories of these keys' values (path_partition.h).
  std::vector<std::string> path_partition_keys;
  // CSV files (any CSV format) of at most this many bytes, not compressed, are also kept in
  // memory (FetchedFile::bytes), read once after their download: their checks and count are
  // made on those bytes, and a caller may read them from there instead of the file again.
  // 0: none kept.
  uint64_t keep_bytes_max = 0;
  // With a source that Fetches (FileSource::Fetch), such files of a download are fetched into
  // memory only, and written to their path when BatchFetcher::Materialize asks: a caller that
  // reads them from FetchedFile::bytes has no file written, read or cut for them.
  bool kept_in_memory_only = false;

  // What a file function's options say of fetching (compression, format, bounds); the rest
  // keeps its defaults.
  static FetchOptions For(const FileFunctionOptions& options);
};

Result<std::vector<std::string>> FetchFiles(source::FileSource& source, SourceKind kind,
                                            const std::vector<source::FileInfo>& files,
                                            const FetchOptions& options,
                                            const std::string& work_dir);

// One file of a BatchFetcher: its readable path, or why it could not be fetched.
struct FetchedFile {
  std::string path;
  Status status;                 // names the file's key
  bool download_failed = false;  // the source failed (else the file's content is bad)
  // The records the file holds, counted by Millrace (record_count.h) while it is prepared;
  // nullopt when not counted (Parquet, an empty file, JSON whose rows are not its documents).
  std::optional<int64_t> records;
  // A local file read in place (FileSource::Place), held until the fetcher goes; null for a
  // download or a copy.
  std::shared_ptr<source::PlacedFile> placed;
  // The file's bytes, when kept (FetchOptions::keep_bytes_max).
  std::optional<std::string> bytes;
  // Whether `path` holds the file: false for bytes kept in memory only until Materialize.
  bool on_disk = true;
};

// Fetches `files` on `options.parallelism` background threads, starting at once, in list order
// and within options.max_bytes_in_flight.
// Thread-safety: Wait and Cancel may be called from any thread. The source, the file list and
// the work directory must outlive the fetcher; the destructor cancels and joins its threads
// (a download in progress runs to its end).
class BatchFetcher {
 public:
  BatchFetcher(source::FileSource& source, SourceKind kind,
               const std::vector<source::FileInfo>& files, const FetchOptions& options,
               std::string work_dir);
  ~BatchFetcher();
  BatchFetcher(const BatchFetcher&) = delete;
  BatchFetcher& operator=(const BatchFetcher&) = delete;

  // Blocks until files[i] is fetched (or failed) and returns its outcome. After Cancel, a file
  // that was never started reports CANCELLED.
  const FetchedFile& Wait(size_t i) EXCLUDES(mu_);
  // Starts no further download.
  void Cancel() EXCLUDES(mu_);
  // Waits for files[i]; when it was fetched into memory only (kept_in_memory_only), writes its
  // bytes to its path, once. Called by the thread that reads the files, before anything reads
  // the path. IO_ERROR when the file cannot be written.
  Status Materialize(size_t i) EXCLUDES(mu_);
  // Ready once every file has started downloading (or was cancelled): from then on this
  // fetcher's threads only end, and a batch queued behind it may start its own downloads
  // without two batches competing for the source. Outlives the fetcher.
  std::shared_future<void> AllStarted() const { return all_started_; }
  // After the files were read: OK when every file read in place so far is still the version
  // read (PlacedFile::CheckUnchanged), else the first one's ABORTED error. Copies always are.
  Status Unchanged() EXCLUDES(mu_);
  // Where the files are fetched to; a caller may write files of its own there whose names do
  // not start with the fetcher's prefixes ("d", "n", "p", and decompress.h's "f").
  const std::string& work_dir() const { return work_dir_; }

 private:
  void Work() EXCLUDES(mu_);
  // Readies AllStarted once next_ has reached the end.
  void NoteStarted() REQUIRES(mu_);
  FetchedFile FetchOne(size_t i);
  // Whether `file` is read in place (FetchOptions::local_files, in_place_min_bytes), taking
  // one of the max_in_place places when it is.
  bool TakeInPlace(const source::FileInfo& file) EXCLUDES(mu_);
  // FileSource::Place into out->path and out->placed; gives the place back unless a file is
  // held open.
  Status PlaceInPlace(const source::FileInfo& file, FetchedFile* out) EXCLUDES(mu_);

  source::FileSource& source_;
  const SourceKind kind_;
  const std::vector<source::FileInfo>& files_;
  const FetchOptions options_;
  const std::string work_dir_;

  Mutex mu_;
  std::condition_variable done_cv_;
  size_t next_ GUARDED_BY(mu_) = 0;
  int in_flight_ GUARDED_BY(mu_) = 0;
  int in_place_ GUARDED_BY(mu_) = 0;  // files held by a PlacedFile
  uint64_t bytes_in_flight_ GUARDED_BY(mu_) = 0;
  // Set under mu_ (Work waits on it there); atomic for a wait on options_.slots, which does not
  // take mu_.
  std::atomic<bool> cancelled_{false};
  // Set (once) when next_ reaches the end of files_.
  std::promise<void> started_ GUARDED_BY(mu_);
  bool started_set_ GUARDED_BY(mu_) = false;
  const std::shared_future<void> all_started_;
  // Written by the worker that fetched the file before it sets done_[i]; read after done_[i].
  std::vector<FetchedFile> out_;
  std::vector<bool> done_ GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

}  // namespace millrace::load
