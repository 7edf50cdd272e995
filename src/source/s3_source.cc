#include "source/s3_source.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "source/listing_builder.h"

namespace millrace::source {
namespace {

// S3's largest page. The first page of a listing asks only for what the batch can take, plus
// one key to tell whether more follow: a store reads (and a client receives) every key of a
// page, and a job lists each batch from its offset, so a full page for a batch of 256 files
// read each key four times (s3rver, per key a batch took, spent about half as long on those
// LISTs as on its GET). A page whose keys the glob passed over is followed by full ones.
constexpr int kPageKeys = 1000;

}  // namespace

Result<std::unique_ptr<S3Source>> S3Source::Create(std::string_view uri,
                                                   std::unique_ptr<s3::S3Client> client) {
  if (client == nullptr) return Status::InvalidArgument("S3 source needs a client");
  MR_ASSIGN_OR_RETURN(s3::S3Uri parsed, s3::S3Uri::Parse(uri));
  if (parsed.key.empty()) {
    return Status::InvalidArgument("S3 URI \"" + std::string(uri) +
                                   "\" names no key or pattern after the bucket");
  }
  MR_ASSIGN_OR_RETURN(Glob glob, Glob::Compile(parsed.key));
  return std::unique_ptr<S3Source>(
      new S3Source(std::string(uri), std::move(parsed.bucket), std::move(glob), std::move(client)));
}

FileInfo S3Source::ToFileInfo(s3::ObjectInfo object) const {
  return FileInfo{std::move(object.key), std::move(object.etag), object.size, object.last_modified};
}

Result<Listing> S3Source::List(const ListOptions& options) {
  const std::string& prefix = glob_.LiteralPrefix();
  const std::string after = std::max(options.start_after, glob_.ExclusiveLowerBound());
  ListingBuilder builder(options);
  // Every key under the prefix is <= `after`: nothing to ask S3 for.
  if (after > prefix && !after.starts_with(prefix)) return std::move(builder).Finish();

  s3::ListRequest request{
      .bucket = bucket_,
      .prefix = prefix,
      .max_keys = static_cast<int>(std::min<size_t>(kPageKeys, options.max_files + 1))};
  if (after > prefix) request.start_after = after;
  while (true) {
    MR_ASSIGN_OR_RETURN(s3::ListPage page, client_->ListObjectsV2(request));
    request.max_keys = kPageKeys;
    for (s3::ObjectInfo& object : page.objects) {
      // start-after already excludes these; a server that ignored it must not resend them.
      if (object.key <= options.start_after || !glob_.Matches(object.key)) continue;
      builder.Offer(ToFileInfo(std::move(object)));
    }
    if (!page.truncated || page.next_continuation_token.empty()) break;
    if (builder.full()) {
      builder.set_more();  // unknown without another LIST; the next List finds out
      break;
    }
    request.continuation_token = std::move(page.next_continuation_token);
  }
  return std::move(builder).Finish();
}

Result<FileInfo> S3Source::Stat(const std::string& key) {
  if (!glob_.Matches(key)) {
    return Status::InvalidArgument("key " + key + " does not match " + uri_);
  }
  MR_ASSIGN_OR_RETURN(s3::ObjectInfo object, client_->HeadObject(bucket_, key));
  return ToFileInfo(std::move(object));
}

Status S3Source::Download(const FileInfo& file, const std::string& local_path) {
  s3::GetRequest request{.bucket = bucket_, .key = file.key, .if_match = file.etag};
  MR_ASSIGN_OR_RETURN(s3::ObjectInfo object, client_->GetObjectToFile(request, local_path));
  Status sized = SizeListed(file, object.size);
  if (!sized.ok()) ::unlink(local_path.c_str());
  return sized;
}

Result<std::string> S3Source::Fetch(const FileInfo& file) {
  s3::GetRequest request{.bucket = bucket_, .key = file.key, .if_match = file.etag};
  std::string bytes;
  bytes.reserve(file.size);
  MR_ASSIGN_OR_RETURN(s3::ObjectInfo object,
                      client_->GetObject(request, [&](std::string_view chunk) {
                        bytes.append(chunk);
                        return Status::Ok();
                      }));
  // GetObject returns only once every byte of the object reached the sink.
  MR_RETURN_IF_ERROR(SizeListed(file, object.size));
  return bytes;
}

Status S3Source::SizeListed(const FileInfo& file, uint64_t size) const {
  if (size == file.size) return Status::Ok();
  // Same ETag, different size cannot be one version; never hand the bytes on.
  return Status::Aborted("s3://" + bucket_ + "/" + file.key + " has size " + std::to_string(size) +
                         ", listed as " + std::to_string(file.size));
}

bool S3Source::Covers(const std::string& path, bool directory) const {
  const std::string prefix = "s3://" + bucket_ + "/";
  return !directory && path.starts_with(prefix) && glob_.Matches(path.substr(prefix.size()));
}

std::string S3Source::KeyOf(const std::string& path) const {
  const std::string prefix = "s3://" + bucket_ + "/";
  return path.starts_with(prefix) ? path.substr(prefix.size()) : path;
}

}  // namespace millrace::source
