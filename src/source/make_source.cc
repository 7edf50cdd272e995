#include <memory>
#include <string>

#include "source/file_source.h"
#include "source/local_source.h"
#include "source/s3_source.h"

namespace millrace::source {

Result<std::unique_ptr<FileSource>> MakeSource(std::string_view pattern,
                                               const SourceOptions& options) {
  if (pattern.starts_with("s3://")) {
    MR_ASSIGN_OR_RETURN(std::unique_ptr<s3::S3Client> client,
                        s3::S3Client::Create(options.s3, options.clock));
    MR_ASSIGN_OR_RETURN(std::unique_ptr<S3Source> source,
                        S3Source::Create(pattern, std::move(client)));
    return std::unique_ptr<FileSource>(std::move(source));
  }
  if (pattern.starts_with('/')) {
    MR_ASSIGN_OR_RETURN(std::unique_ptr<LocalSource> source,
                        LocalSource::Create(pattern, {.clock = options.clock,
                                                      .settle_time = options.settle_time,
                                                      .roots = options.local_roots,
                                                      .watcher = options.watcher}));
    return std::unique_ptr<FileSource>(std::move(source));
  }
  return Status::InvalidArgument("source pattern \"" + std::string(pattern) +
                                 "\" is neither s3://bucket/pattern nor an absolute path");
}

}  // namespace millrace::source
