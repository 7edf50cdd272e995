// S3Source: a FileSource over an S3 prefix, for patterns like "s3://landing/ev/2026-*/*.csv".
//
// Contract (beyond file_source.h)
// - List sends ListObjectsV2 for the pattern's literal prefix only, with start-after = the
//   greater of the caller's start_after and the glob's lower bound (Glob::ExclusiveLowerBound),
//   so a poll costs O(keys past the offset): one LIST when nothing new arrived (and none when
//   start_after is past every key the prefix can hold). Pages (1000 keys) are read until the
//   batch is full; the rest of the last page still counts toward `more` and
//   last_matching_key, but no further page is read for them.
// - Download is GetObjectToFile with If-Match on the listed ETag: a replaced object fails with
//   ABORTED, a deleted one with NOT_FOUND; transient errors are retried by the client within
//   its RetryPolicy. Error messages come from the client and name the bucket and key.
// - Thread-safety: all methods may be called concurrently (the client is thread-safe and the
//   source holds no mutable state).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "s3/s3_client.h"
#include "source/file_source.h"
#include "source/glob.h"

namespace millrace::source {

class S3Source final : public FileSource {
 public:
  // `uri` is "s3://bucket/pattern".
  static Result<std::unique_ptr<S3Source>> Create(std::string_view uri,
                                                  std::unique_ptr<s3::S3Client> client);

  Result<Listing> List(const ListOptions& options) override;
  Result<FileInfo> Stat(const std::string& key) override;
  Status Download(const FileInfo& file, const std::string& local_path) override;
  bool Fetches() const override { return true; }
  Result<std::string> Fetch(const FileInfo& file) override;
  std::string Describe() const override { return uri_; }
  // "s3://bucket/key" of this source's bucket whose key the glob matches; no directories.
  bool Covers(const std::string& path, bool directory) const override;
  std::string KeyOf(const std::string& path) const override;

  // The client, e.g. for its request counters.
  s3::S3Client& client() { return *client_; }

 private:
  // ABORTED unless an object of `size` bytes is the version listed as `file`.
  Status SizeListed(const FileInfo& file, uint64_t size) const;
  S3Source(std::string uri, std::string bucket, Glob glob, std::unique_ptr<s3::S3Client> client)
      : uri_(std::move(uri)),
        bucket_(std::move(bucket)),
        glob_(std::move(glob)),
        client_(std::move(client)) {}

  FileInfo ToFileInfo(s3::ObjectInfo object) const;

  const std::string uri_;
  const std::string bucket_;
  const Glob glob_;  // over the key, without "s3://bucket/"
  const std::unique_ptr<s3::S3Client> client_;
};

}  // namespace millrace::source
