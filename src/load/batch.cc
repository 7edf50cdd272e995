#include "load/batch.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <thread>

#include "common/file_rewrite.h"
#include "load/bad_file.h"
#include "load/csv_last_line.h"
#include "load/decompress.h"
#include "load/json_nesting.h"
#include "load/json_numbers.h"
#include "load/path_partition.h"
#include "load/read_error.h"
#include "load/reader_sql.h"
#include "load/record_count.h"

namespace millrace::load {
namespace {

// The suffix that names the file's compression (".csv.gz" keeps ".gz"), so a downloaded copy
// is recognized like the original.
std::string SuffixOf(const std::string& key) {
  const size_t slash = key.find_last_of('/');
  const std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
  const size_t dot = name.find_last_of('.');
  if (dot == std::string::npos || dot == 0) return "";
  std::string suffix = name.substr(dot);
  for (char c : suffix) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.') return "";
  }
  return suffix;
}

Status CancelledFetch(const source::FileInfo& file) {
  return Status::Cancelled("the fetch of file " + file.key + " was cancelled");
}

// The bytes of the file at `path`, expected to be `size` bytes long (read to its end whatever
// its size).
Result<std::string> ReadWhole(const std::string& path, uint64_t size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IoError("cannot open " + path + " to read it");
  std::string bytes(size + 1, '\0');  // one byte more: a read of 0 then tells the end at once
  size_t got = 0;
  while (true) {
    if (got == bytes.size()) bytes.resize(bytes.size() * 2);
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      if (n < 0) return Status::IoError("cannot read " + path);
      break;
    }
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  return bytes;
}

}  // namespace

BatchFetcher::BatchFetcher(source::FileSource& source, SourceKind kind,
                           const std::vector<source::FileInfo>& files, const FetchOptions& options,
                           std::string work_dir)
    : source_(source),
      kind_(kind),
      files_(files),
      options_(options),
      work_dir_(std::move(work_dir)),
      all_started_(started_.get_future().share()),
      out_(files.size()) {
  {
    MutexLock lock(&mu_);
    done_.assign(files.size(), false);
    NoteStarted();  // no file at all
  }
  // Within shared slots a thread preparing a file has given its slot back: one thread more
  // downloads meanwhile (the slots still bound the downloads in flight).
  const int wanted = options.parallelism + (options.slots != nullptr ? 1 : 0);
  const int threads =
      files.empty() ? 0 : std::clamp<int>(wanted, 1, static_cast<int>(files.size()));
  for (int t = 0; t < threads; ++t)
    threads_.emplace_back([this] { Work(); });
}

Status BatchFetcher::Materialize(size_t i) {
  const FetchedFile& fetched = Wait(i);
  if (fetched.on_disk || !fetched.status.ok() || !fetched.bytes) return Status::Ok();
  MR_ASSIGN_OR_RETURN(std::unique_ptr<FileRewrite> file, FileRewrite::Open(fetched.path));
  MR_RETURN_IF_ERROR(file->Write(*fetched.bytes));
  MR_RETURN_IF_ERROR(file->Finish());
  // Only the reading thread calls this, after Wait(i): out_[i] is no longer written else.
  out_[i].on_disk = true;
  return Status::Ok();
}

BatchFetcher::~BatchFetcher() {
  Cancel();
  for (auto& t : threads_)
    t.join();
}

Status BatchFetcher::Unchanged() {
  std::vector<size_t> placed;
  {
    MutexLock lock(&mu_);
    for (size_t i = 0; i < files_.size(); ++i) {
      if (done_[i] && out_[i].placed != nullptr) placed.push_back(i);
    }
  }
  // out_[i] is not written again once done_[i] is set: read without the lock, across the I/O.
  for (const size_t i : placed) {
    MR_RETURN_IF_ERROR(out_[i].placed->CheckUnchanged());
  }
  return Status::Ok();
}

void BatchFetcher::Cancel() {
  {
    MutexLock lock(&mu_);
    cancelled_ = true;
    // Files never started will not be: report them so no Wait blocks on them.
    for (size_t i = next_; i < files_.size(); ++i) {
      if (done_[i]) continue;
      out_[i].status = CancelledFetch(files_[i]);
      done_[i] = true;
    }
    next_ = files_.size();
    NoteStarted();
    done_cv_.notify_all();
  }
  // A thread waiting for a slot reports its file cancelled (FetchOne).
  if (options_.slots != nullptr) options_.slots->Wake();
}

void BatchFetcher::NoteStarted() {
  if (started_set_ || next_ < files_.size()) return;
  started_set_ = true;
  started_.set_value();
}

const FetchedFile& BatchFetcher::Wait(size_t i) {
  MutexLock lock(&mu_);
  WaitOn(done_cv_, &mu_, [&]() NO_THREAD_SAFETY_ANALYSIS { return done_[i]; });
  return out_[i];
}

void BatchFetcher::Work() {
  while (true) {
    size_t i = 0;
    {
      MutexLock lock(&mu_);
      WaitOn(done_cv_, &mu_, [&]() NO_THREAD_SAFETY_ANALYSIS {
        return cancelled_ || next_ >= files_.size() || in_flight_ == 0 ||
               bytes_in_flight_ + files_[next_].size <= options_.max_bytes_in_flight;
      });
      if (cancelled_ || next_ >= files_.size()) return;
      i = next_++;
      NoteStarted();
      ++in_flight_;
      bytes_in_flight_ += files_[i].size;
    }
    FetchedFile fetched = FetchOne(i);
    MutexLock lock(&mu_);
    --in_flight_;
    bytes_in_flight_ -= files_[i].size;
    out_[i] = std::move(fetched);
    done_[i] = true;
    done_cv_.notify_all();
  }
}

bool BatchFetcher::TakeInPlace(const source::FileInfo& file) {
  if (kind_ != SourceKind::kLocal || options_.local_files != FetchOptions::LocalFiles::kInPlace ||
      file.size < options_.in_place_min_bytes) {
    return false;
  }
  MutexLock lock(&mu_);
  if (in_place_ >= options_.max_in_place) return false;
  ++in_place_;
  return true;
}

Status BatchFetcher::PlaceInPlace(const source::FileInfo& file, FetchedFile* out) {
  auto placed = source_.Place(file, out->path);
  if (placed.ok()) out->placed = *std::move(placed);
  if (out->placed == nullptr) {  // failed, or copied after all: holds nothing open
    MutexLock lock(&mu_);
    --in_place_;
  }
  return placed.status();
}

FetchedFile BatchFetcher::FetchOne(size_t i) {
  const source::FileInfo& file = files_[i];
  FetchedFile out;
  // The batches sharing slots are one job's, in key order: the earliest first key goes first.
  if (options_.slots != nullptr && !options_.slots->Acquire(files_.front().key, cancelled_)) {
    out.status = CancelledFetch(file);
    return out;
  }
  out.path = work_dir_ + "/d" + std::to_string(i) + SuffixOf(file.key);
  const bool csv = options_.format != Format::kJson && options_.format != Format::kParquet;
  // Kept without a file: a plain CSV (not compressed, by name or declared) of a source that
  // fetches into memory.
  const bool in_memory =
      options_.kept_in_memory_only && csv && file.size > 0 &&
      options_.path_partition_keys.empty() && file.size <= options_.keep_bytes_max &&
      source_.Fetches() &&
      options_.compression.value_or(Compression::kPlain) == Compression::kPlain &&
      CompressionFromSuffix(out.path) == Compression::kPlain;
  Status downloaded = Status::Ok();
  if (in_memory) {
    auto fetched = source_.Fetch(file);
    downloaded = fetched.status();
    if (fetched.ok()) {
      out.bytes = *std::move(fetched);
      out.on_disk = false;
    }
  } else {
    downloaded = TakeInPlace(file) ? PlaceInPlace(file, &out) : source_.Download(file, out.path);
  }
  // What follows reads the local copy only: another download may take the slot meanwhile.
  if (options_.slots != nullptr) options_.slots->Release();
  if (!downloaded.ok()) {
    out.status = BadFileError(
        DescribeReadError(downloaded, file.key, {work_dir_}),
        downloaded.code() == StatusCode::kNotFound ? BadFile::kVanished : BadFile::kUnreadable);
    out.download_failed = true;
    out.path.clear();
    return out;
  }
  // A 0-byte file holds no rows, whatever its name says about compression.
  if (file.size == 0) return out;
  // A file kept in memory only is plain: nothing to prepare.
  const std::string downloaded_to = out.path;
  if (out.on_disk) {
    auto prepared = PrepareLocalFile(out.path, options_.compression, work_dir_, static_cast<int>(i),
                                     options_.max_decompressed_bytes);
    if (!prepared.ok()) {
      out.status = DescribeReadError(prepared.status(), file.key, {work_dir_});
      out.path.clear();
      return out;
    }
    out.path = std::move(prepared).value();
  }
  // What DuckDB's readers would crash on or drop in silence makes the file a bad one first.
  // Its records are counted in the same pass (JSON) or the next (CSV), here in the background.
  Status shape = Status::Ok();
  const int64_t header_lines = CsvHeaderLines(options_.format, options_.csv);
  if (options_.format == Format::kJson) {
    JsonCounts counts;
    shape = CheckJsonNesting(out.path, kMaxJsonDepth, &counts);
    if (shape.ok()) out.records = JsonRecords(counts, options_.json);
  } else if (csv && file.size <= options_.keep_bytes_max && out.path == downloaded_to) {
    // Not decompressed: the bytes fetched, or downloaded and read once, for the check, the
    // count and the caller.
    if (!out.bytes) {
      auto bytes = ReadWhole(out.path, file.size);
      shape = bytes.status();
      if (bytes.ok()) out.bytes = *std::move(bytes);
    }
    if (shape.ok()) shape = CheckCsvLastLineIn(*out.bytes, options_.csv_line_end);
    if (shape.ok()) out.records = CountCsvRecordsIn(*out.bytes, options_.csv, header_lines);
  } else if (csv) {
    shape = CheckCsvLastLine(out.path, options_.csv_line_end);
    if (shape.ok()) {
      auto counted = CountCsvRecords(out.path, options_.csv, header_lines);
      if (counted.ok()) out.records = *counted;
      shape = counted.status();
    }
  }
  // num_as_string: the numbers become strings of their own digits before DuckDB parses them.
  if (shape.ok() && options_.format == Format::kJson && options_.json.num_as_string) {
    const std::string quoted = work_dir_ + "/n" + std::to_string(i) + ".json";
    shape = QuoteJsonNumbers(out.path, quoted);
    if (shape.ok()) out.path = quoted;
  }
  if (shape.ok() && !options_.path_partition_keys.empty()) {
    const std::vector<std::string>& keys = options_.path_partition_keys;
    auto values = PathPartitionValues(file.key, keys);
    auto linked =
        values.ok() ? LinkPartitioned(out.path, keys, *values, work_dir_ + "/p" + std::to_string(i))
                    : Result<std::string>(values.status());
    shape = linked.status();
    if (linked.ok()) out.path = *std::move(linked);
  }
  if (!shape.ok()) {
    out.status = DescribeReadError(shape, file.key, {work_dir_});
    out.path.clear();
  }
  return out;
}

FetchOptions FetchOptions::For(const FileFunctionOptions& options) {
  FetchOptions fetch;
  fetch.compression = options.compression;
  fetch.format = options.format;
  fetch.max_decompressed_bytes = options.max_decompressed_bytes;
  if (!options.csv.line_delimiter.empty()) fetch.csv_line_end = options.csv.line_delimiter.back();
  fetch.csv = options.csv;
  fetch.json = options.json;
  fetch.path_partition_keys = options.path_partition_keys;
  return fetch;
}

Result<std::vector<std::string>> FetchFiles(source::FileSource& source, SourceKind kind,
                                            const std::vector<source::FileInfo>& files,
                                            const FetchOptions& options,
                                            const std::string& work_dir) {
  BatchFetcher fetcher(source, kind, files, options, work_dir);
  std::vector<std::string> readable;
  for (size_t i = 0; i < files.size(); ++i) {
    const FetchedFile& file = fetcher.Wait(i);
    if (!file.status.ok()) return file.status;  // the fetcher cancels the rest
    readable.push_back(file.path);
  }
  return readable;
}

}  // namespace millrace::load
