// `millrace s3 ls|cat|presign`: check a bucket and credentials from the shell, AWS-CLI style.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/clock.h"
#include "common/flags.h"
#include "s3/s3_client.h"
#include "s3/sigv4.h"
#include "source/glob.h"

namespace millrace::cli {
namespace {

constexpr char kUsage[] =
    "usage: millrace s3 ls <s3://bucket/prefix-or-pattern> [options]\n"
    "       millrace s3 cat <s3://bucket/key> [options]\n"
    "       millrace s3 presign <s3://bucket/key> [--expires SECONDS] [--at YYYYMMDDTHHMMSSZ]\n"
    "\n"
    "ls lists every object under the prefix (recursively) as\n"
    "  '<YYYY-MM-DD HH:MM:SS> <size> <key>', with times in UTC; the key part may be a glob\n"
    "  (*, **, ?, [a-z], {a,b}). cat writes the object to stdout. presign prints a GET URL.\n"
    "\n"
    "options:\n";

const std::vector<FlagSpec>& S3Flags() {
  static const std::vector<FlagSpec> kFlags = {
      {"endpoint", "AWS_ENDPOINT_URL", "",
       "S3 endpoint, e.g. http://127.0.0.1:9000 (default: AWS in --region)"},
      {"region", "AWS_REGION", "us-east-1", "region the requests are signed for"},
      {"path-style", "", "", "address buckets as <endpoint>/<bucket>/<key>", true},
      {"access-key", "AWS_ACCESS_KEY_ID", "", "access key id (none: anonymous requests)"},
      {"secret-key", "AWS_SECRET_ACCESS_KEY", "", "secret access key"},
      {"session-token", "AWS_SESSION_TOKEN", "", "session token of temporary credentials"},
      {"expires", "", "3600", "presign: seconds the URL stays valid, 1 to 604800"},
      {"at", "", "", "presign: signing time YYYYMMDDTHHMMSSZ in UTC (default: now)"},
  };
  return kFlags;
}

// Status messages may quote server text; the contract is one line on stderr.
int Fail(const std::string& subcommand, const Status& status) {
  std::string message = status.message();
  for (char& c : message) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(stderr, "millrace s3%s%s: %s\n", subcommand.empty() ? "" : " ", subcommand.c_str(),
               message.c_str());
  return 1;
}

Result<std::unique_ptr<s3::S3Client>> ClientFromFlags(const ParsedFlags& flags) {
  s3::S3Config config;
  config.endpoint = flags.GetOr("endpoint", "");
  config.region = flags.GetOr("region", "us-east-1");
  config.use_path_style = flags.GetBool("path-style");
  config.credentials = {flags.GetOr("access-key", ""), flags.GetOr("secret-key", ""),
                        flags.GetOr("session-token", "")};
  return s3::S3Client::Create(std::move(config), Clock::Real());
}

Status List(s3::S3Client& client, const s3::S3Uri& uri) {
  MR_ASSIGN_OR_RETURN(source::Glob glob, source::Glob::Compile(uri.key));
  s3::ListRequest request{.bucket = uri.bucket,
                          .prefix = glob.HasWildcards() ? glob.LiteralPrefix() : uri.key};
  for (;;) {
    MR_ASSIGN_OR_RETURN(s3::ListPage page, client.ListObjectsV2(request));
    for (const s3::ObjectInfo& object : page.objects) {
      if (glob.HasWildcards() && !glob.Matches(object.key)) continue;
      std::printf("%s %10llu %s\n", FormatUtc(object.last_modified).c_str(),
                  static_cast<unsigned long long>(object.size), object.key.c_str());
    }
    if (!page.truncated) break;
    request.continuation_token = page.next_continuation_token;
  }
  if (std::fflush(stdout) != 0) return Status::IoError("cannot write to stdout");
  return Status::Ok();
}

Status Cat(s3::S3Client& client, const s3::S3Uri& uri) {
  auto info = client.GetObject({.bucket = uri.bucket, .key = uri.key}, [](std::string_view bytes) {
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size()) {
      return Status::IoError("cannot write to stdout");
    }
    return Status::Ok();
  });
  MR_RETURN_IF_ERROR(info.status());
  if (std::fflush(stdout) != 0) return Status::IoError("cannot write to stdout");
  return Status::Ok();
}

Status Presign(s3::S3Client& client, const s3::S3Uri& uri, const ParsedFlags& flags) {
  MR_ASSIGN_OR_RETURN(int64_t expires, flags.GetInt("expires", 1, 604800));
  Clock::WallTime at = Clock::Real()->WallNow();
  if (auto text = flags.Get("at")) {
    MR_ASSIGN_OR_RETURN(at, s3::ParseAmzDate(*text));
  }
  MR_ASSIGN_OR_RETURN(std::string url, client.PresignGetObject(uri.bucket, uri.key,
                                                               std::chrono::seconds(expires), at));
  std::printf("%s\n", url.c_str());
  return Status::Ok();
}

}  // namespace

int RunS3(const std::vector<std::string>& args) {
  auto flags = ParseFlags(args, S3Flags(), ProcessEnv());
  if (!flags.ok()) {
    Fail("", flags.status());
    return 2;
  }
  if (flags->help()) {
    std::printf("%s%s", kUsage, FlagsHelp(S3Flags()).c_str());
    return 0;
  }
  const std::vector<std::string>& positional = flags->positional();
  const std::string subcommand = positional.empty() ? "" : positional[0];
  if (subcommand != "ls" && subcommand != "cat" && subcommand != "presign") {
    Fail("", Status::InvalidArgument(subcommand.empty()
                                         ? "missing subcommand: ls, cat or presign (see --help)"
                                         : "unknown subcommand '" + subcommand +
                                               "': ls, cat or presign (see --help)"));
    return 2;
  }
  if (positional.size() != 2) {
    Fail(subcommand, Status::InvalidArgument("expected exactly one s3://bucket/key argument"));
    return 2;
  }
  auto uri = s3::S3Uri::Parse(positional[1]);
  if (!uri.ok()) {
    Fail(subcommand, uri.status());
    return 2;
  }
  if (subcommand != "ls" && uri->key.empty()) {
    Fail(subcommand, Status::InvalidArgument("'" + positional[1] + "' names no object key"));
    return 2;
  }
  auto client = ClientFromFlags(*flags);
  if (!client.ok()) return Fail(subcommand, client.status());
  Status status;
  if (subcommand == "ls") {
    status = List(**client, *uri);
  } else if (subcommand == "cat") {
    status = Cat(**client, *uri);
  } else {
    status = Presign(**client, *uri, *flags);
  }
  return status.ok() ? 0 : Fail(subcommand, status);
}

}  // namespace millrace::cli
