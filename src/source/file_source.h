// FileSource: where a job's files come from — an S3 prefix or a local directory — behind one
// interface, so the job service plans, downloads and records files the same way for both.
//
// Contract
// - A source is built from a pattern (MakeSource): "s3://bucket/dir/*.csv" for S3, an
//   absolute path pattern like "/data/in/{a,b}/*.json" for a local directory. Glob syntax is
//   in source/glob.h: `*` (any run except '/'), `**` (any run, '/' included), `?`, `[abc]`,
//   `[a-z]`, `[!a]`, `{a,b}` (nestable), `\` escapes. Keys are matched whole. S3 lists only
//   the longest literal prefix of the pattern; a local source walks only from its directory.
// - A file is identified by (key, etag, size). For S3 the key is the object key and the etag
//   S3's ETag; for local files the key is the absolute path and the etag is derived from
//   (size, mtime in ns, inode) so a rewritten file gets a new one.
// - List returns matching files with key > start_after, in ascending byte order of key, at
//   most max_files of them and stopping after the file that reaches max_bytes (that file is
//   included). `more` tells whether matching files remain past the returned ones (an S3
//   listing that stopped exactly at a page boundary says true without knowing; the next List
//   then finds what is left, possibly nothing).
// - Local files still being written are held back (see local_source.h for the rule): the
//   listing stops before the first such file, so files are always handed out in key order
//   and an offset never skips one; `unsettled_files` tells the caller to poll again soon.
//   Local names starting with '.' or ending in .tmp, .part or ._COPYING_ (at any level below
//   the walked directory) are never listed: writers use them while a file is incomplete.
// - Download writes exactly the bytes of the listed version (S3: If-Match on the ETag) or
//   fails, removing what it wrote: a file gone since listing is NOT_FOUND, a changed one
//   ABORTED, an unreadable one PERMISSION_DENIED or IO_ERROR; messages name the key. Fetch
//   returns the same bytes in memory, with the same errors, where the source can (S3Source);
//   the others say NOT_SUPPORTED, and a caller downloads instead.
// - Stat of a key the pattern does not match is INVALID_ARGUMENT.
// - Thread-safety: all methods may be called concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "s3/s3_client.h"

namespace millrace::source {

struct FileInfo {
  std::string key;
  std::string etag;
  uint64_t size = 0;
  Clock::WallTime last_modified{};
};

struct ListOptions {
  std::string start_after;  // "" lists from the beginning
  size_t max_files = 256;
  uint64_t max_bytes = 10ULL * 1024 * 1024 * 1024;
};

struct Listing {
  std::vector<FileInfo> files;
  bool more = false;
  // The greatest matching key seen by this listing (may be past the returned files), for the
  // job's EndOffset; "" when none.
  std::string last_matching_key;
  // Matching files past the returned ones held back because they may still be written
  // (local sources only). When non-zero, poll again after the settle time, not max_interval.
  size_t unsettled_files = 0;
  // Subdirectories that could not be listed (no permission, an I/O error), "<path>: <why>"
  // (local sources only). Passed over so that one of them does not stop the job: the files in
  // them are not seen until they can be listed (then as late files, if below the offset).
  std::vector<std::string> unlisted_directories;
};

// A file FileSource::Place made readable where it lies; holds it (an open file) while it lives.
class PlacedFile {
 public:
  virtual ~PlacedFile() = default;
  // After the read: OK when what was read is the listed version whole; ABORTED naming the file
  // when it changed during the read (written in place, or its path now names another file), so
  // that the read counts for nothing and the file is listed again.
  virtual Status CheckUnchanged() = 0;
};

class FileSource {
 public:
  virtual ~FileSource() = default;
  virtual Result<Listing> List(const ListOptions& options) = 0;
  virtual Result<FileInfo> Stat(const std::string& key) = 0;
  virtual Status Download(const FileInfo& file, const std::string& local_path) = 0;
  // For small files (load::FetchOptions::keep_bytes_max): no file is written. Fetches() says
  // whether the source can.
  virtual bool Fetches() const { return false; }
  virtual Result<std::string> Fetch(const FileInfo& file) {
    return Status::NotSupported(Describe() + " downloads to files only");
  }
  // Makes the listed version of `file` readable at `local_path` without copying it where the
  // source can (LocalSource: a link to the file it opened), else by Download (then nullptr:
  // a copy cannot change). What it returns is kept until the file was read, then asked.
  virtual Result<std::unique_ptr<PlacedFile>> Place(const FileInfo& file,
                                                    const std::string& local_path) {
    MR_RETURN_IF_ERROR(Download(file, local_path));
    return std::unique_ptr<PlacedFile>();
  }
  // The pattern as the user wrote it, e.g. "s3://landing/ev/*.csv".
  virtual std::string Describe() const = 0;
  // Whether news of `path` (local_watcher.h) concerns this source: a file its pattern matches,
  // or a directory (`directory`) under which one could lie. It only wakes the job: what it
  // loads is still what it lists. Any thread.
  virtual bool Covers(const std::string& path, bool directory) const { return false; }
  // The key a file that Covers names lists under (the order of offsets): the path itself for
  // local files, the object key (after "s3://bucket/") for S3.
  virtual std::string KeyOf(const std::string& path) const { return path; }
};

class LocalWatcher;

struct SourceOptions {
  Clock* clock = Clock::Real();  // must outlive the source
  // Local sources: how long a file must be unchanged before it is taken.
  std::chrono::milliseconds settle_time{1000};
  // Local sources: the directories they may read under (LocalSourceOptions::roots).
  std::vector<std::string> local_roots;
  // S3 sources: endpoint, region, credentials, retries.
  s3::S3Config s3;
  // Local sources: watches their directory tree while they live (a job's; null for a SELECT's,
  // which lists once). Must outlive the source.
  LocalWatcher* watcher = nullptr;
};

// Builds an S3 source for "s3://bucket/pattern", a local one for an absolute path pattern.
// INVALID_ARGUMENT names the pattern when it is neither or its glob does not parse.
Result<std::unique_ptr<FileSource>> MakeSource(std::string_view pattern,
                                               const SourceOptions& options);

}  // namespace millrace::source
