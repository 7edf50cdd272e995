#include "s3/s3_client.h"

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <random>

#include "common/file_rewrite.h"
#include "common/logging.h"
#include "common/thread_annotations.h"
#include "s3/s3_transport.h"
#include "s3/s3_xml.h"

namespace millrace::s3 {
namespace {

using std::chrono::milliseconds;

// Paces the attempts of one call: capped exponential backoff with full jitter, at most
// max_attempts attempts and total_budget of time. A download that moves forward starts a new
// allowance (Progress), so a long transfer can survive many breaks as long as each helps.
class Backoff {
 public:
  Backoff(const RetryPolicy& policy, Clock* clock, std::function<int64_t(int64_t)> uniform)
      : policy_(policy),
        clock_(clock),
        uniform_(std::move(uniform)),
        call_start_(clock->SteadyNow()),
        window_start_(call_start_) {}

  // After a failed attempt that may be retried: sleeps and returns true when another attempt
  // fits the policy, false when the attempts or the budget are spent.
  bool Wait() {
    ++attempts_;
    ++window_failures_;
    if (window_failures_ >= policy_.max_attempts) return false;
    const int shift = std::min(window_failures_ - 1, 30);
    const int64_t ceiling =
        std::min<int64_t>(policy_.max_backoff.count(), policy_.base_backoff.count() << shift);
    const milliseconds delay(uniform_(std::max<int64_t>(0, ceiling)));
    if (policy_.total_budget.count() > 0 && Elapsed() + delay >= policy_.total_budget) {
      return false;
    }
    clock_->SleepFor(delay);
    return true;
  }

  void Progress() {
    window_failures_ = 0;
    window_start_ = clock_->SteadyNow();
  }

  // What is left of the budget for one attempt; 0 means unbounded.
  milliseconds Remaining() const {
    if (policy_.total_budget.count() <= 0) return milliseconds(0);
    return std::max(milliseconds(1), policy_.total_budget - Elapsed());
  }

  // The final error once retrying stopped: same code, with how hard we tried.
  Status GiveUp(const Status& last) const {
    const auto total = std::chrono::duration_cast<milliseconds>(clock_->SteadyNow() - call_start_);
    return Status(last.code(), last.message() + "; gave up after " + std::to_string(attempts_) +
                                   " attempts in " + std::to_string(total.count()) + " ms");
  }

 private:
  milliseconds Elapsed() const {
    return std::chrono::duration_cast<milliseconds>(clock_->SteadyNow() - window_start_);
  }

  const RetryPolicy& policy_;
  Clock* const clock_;
  const std::function<int64_t(int64_t)> uniform_;
  const Clock::SteadyTime call_start_;
  Clock::SteadyTime window_start_;
  int attempts_ = 0;
  int window_failures_ = 0;
};

Result<uint64_t> ParseUint(const std::string* text, std::string_view what) {
  uint64_t value = 0;
  if (text != nullptr) {
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec == std::errc() && end == text->data() + text->size() && !text->empty()) return value;
  }
  return Status::DataLoss(std::string(what) + " missing or malformed" +
                          (text != nullptr ? ": '" + *text + "'" : ""));
}

struct ContentRange {
  uint64_t first = 0;
  uint64_t total = 0;
};

// "bytes 100-199/1000"
Result<ContentRange> ParseContentRange(const std::string* text) {
  if (text == nullptr || !text->starts_with("bytes ")) {
    return Status::DataLoss("Content-Range missing or malformed");
  }
  const size_t dash = text->find('-');
  const size_t slash = text->find('/');
  if (dash == std::string::npos || slash == std::string::npos || dash > slash) {
    return Status::DataLoss("Content-Range malformed: '" + *text + "'");
  }
  const std::string first = text->substr(6, dash - 6);
  const std::string total = text->substr(slash + 1);
  ContentRange range;
  MR_ASSIGN_OR_RETURN(range.first, ParseUint(&first, "Content-Range"));
  MR_ASSIGN_OR_RETURN(range.total, ParseUint(&total, "Content-Range"));
  return range;
}

Clock::WallTime LastModified(const HttpResponse& response) {
  const std::string* header = response.Header("last-modified");
  if (header == nullptr) return {};
  return ParseHttpDate(*header).value_or(Clock::WallTime{});
}

Status CheckObjectArgs(std::string_view op, const std::string& bucket, const std::string& key) {
  if (bucket.empty() || key.empty()) {
    return Status::InvalidArgument(std::string(op) + " needs a bucket and a key, got s3://" +
                                   bucket + "/" + key);
  }
  return Status::Ok();
}

// How an attempt ended (RequestOutcome); `complete`: a 2xx answer delivered all it was asked.
RequestOutcome OutcomeOf(const HttpResponse& response, bool complete) {
  const bool answered =
      response.error == TransportError::kNone || response.error == TransportError::kSinkFailed;
  if (answered && response.status >= 500) return RequestOutcome::kServerError;
  if (answered && response.status >= 300) return RequestOutcome::kClientError;
  // The sink stopping a 2xx answer is the caller's decision, not the store's failure.
  if (answered && response.ok_status() &&
      (complete || response.error == TransportError::kSinkFailed)) {
    return RequestOutcome::kOk;
  }
  return RequestOutcome::kNetwork;
}

class S3ClientImpl final : public S3Client {
 public:
  explicit S3ClientImpl(std::unique_ptr<S3Transport> transport)
      : transport_(std::move(transport)),
        shared_stats_(transport_->config().request_stats),
        rng_(std::random_device{}()) {}

  Result<ListPage> ListObjectsV2(const ListRequest& request) override {
    if (request.bucket.empty()) return Status::InvalidArgument("ListObjectsV2 needs a bucket");
    if (request.max_keys < 1) {
      return Status::InvalidArgument("ListObjectsV2 max_keys must be at least 1, got " +
                                     std::to_string(request.max_keys));
    }
    S3Call call{.op = "ListObjectsV2", .bucket = request.bucket};
    call.query = {{"list-type", "2"},
                  {"max-keys", std::to_string(request.max_keys)},
                  // Keys may hold bytes XML 1.0 cannot carry; S3 then percent-encodes them.
                  {"encoding-type", "url"}};
    if (!request.prefix.empty()) call.query.emplace_back("prefix", request.prefix);
    if (!request.start_after.empty()) call.query.emplace_back("start-after", request.start_after);
    if (!request.continuation_token.empty()) {
      call.query.emplace_back("continuation-token", request.continuation_token);
    }
    std::string body;
    MR_RETURN_IF_ERROR(Exchange(call, RequestKind::kList, &body));
    auto page = ParseListObjectsV2(body);
    if (!page.ok()) {
      return page.status().WithContext("ListObjectsV2 " +
                                       transport_->Describe(request.bucket, request.prefix));
    }
    return page;
  }

  Result<ObjectInfo> HeadObject(const std::string& bucket, const std::string& key) override {
    MR_RETURN_IF_ERROR(CheckObjectArgs("HeadObject", bucket, key));
    S3Call call{.op = "HeadObject", .method = "HEAD", .bucket = bucket, .key = key};
    HttpResponse response;
    MR_RETURN_IF_ERROR(Exchange(call, RequestKind::kHead, nullptr, &response));
    ObjectInfo info{.key = key, .etag = StripQuotes(Header(response, "etag"))};
    info.last_modified = LastModified(response);
    auto size = ParseUint(response.Header("content-length"), "Content-Length");
    if (!size.ok())
      return size.status().WithContext("HeadObject " + transport_->Describe(bucket, key));
    info.size = *size;
    return info;
  }

  Result<ObjectInfo> GetObject(const GetRequest& request, const BodySink& sink) override;

  Result<ObjectInfo> GetObjectToFile(const GetRequest& request, const std::string& path) override {
    MR_ASSIGN_OR_RETURN(std::unique_ptr<FileRewrite> file, FileRewrite::Open(path));
    // A partial file does not pass for the object: unfinished, `file` removes it.
    auto info = GetObject(request, [&](std::string_view bytes) { return file->Write(bytes); });
    if (info.ok()) {
      if (Status finished = file->Finish(); !finished.ok()) info = std::move(finished);
    }
    return info;
  }

  Result<std::string> PresignGetObject(const std::string& bucket, const std::string& key,
                                       std::chrono::seconds expires,
                                       Clock::WallTime signing_time) override {
    MR_RETURN_IF_ERROR(CheckObjectArgs("PresignGetObject", bucket, key));
    return transport_->PresignGet(bucket, key, expires, signing_time);
  }

  ClientStats stats() const override {
    return {own_stats_.requests(RequestKind::kList), own_stats_.requests(RequestKind::kGet),
            own_stats_.requests(RequestKind::kHead), own_stats_.retries(),
            own_stats_.bytes_downloaded()};
  }
  const S3Config& config() const override { return transport_->config(); }

 private:
  static std::string Header(const HttpResponse& response, std::string_view name) {
    const std::string* value = response.Header(name);
    return value != nullptr ? *value : std::string();
  }

  // Counts into the client's own stats and the shared ones (see the contract).
  void Count(RequestKind kind, const HttpResponse& response, bool complete) {
    const RequestOutcome outcome = OutcomeOf(response, complete);
    for (RequestStats* stats : {&own_stats_, shared_stats_.get()}) {
      if (stats == nullptr) continue;
      stats->Count(kind, outcome);
      if (kind == RequestKind::kGet) stats->AddBytesDownloaded(response.body_bytes);
    }
  }
  void CountRetry() {
    own_stats_.AddRetry();
    if (shared_stats_ != nullptr) shared_stats_->AddRetry();
  }

  Backoff NewBackoff() {
    return Backoff(transport_->config().retry, transport_->clock(), [this](int64_t max) {
      MutexLock lock(&rng_mu_);
      return std::uniform_int_distribution<int64_t>(0, max)(rng_);
    });
  }

  // Sends a small request (listing, HEAD) until it succeeds or retrying stops. The body of a
  // 2xx response is collected in *body when given.
  Status Exchange(const S3Call& call, RequestKind kind, std::string* body,
                  HttpResponse* response_out = nullptr) {
    Backoff backoff = NewBackoff();
    for (;;) {
      if (body != nullptr) body->clear();
      HttpResponse response = transport_->Send(
          call,
          [body](std::string_view bytes) {
            if (body != nullptr) body->append(bytes);
            return Status::Ok();
          },
          {}, backoff.Remaining());
      Count(kind, response, /*complete=*/true);
      if (response.error == TransportError::kNone && response.ok_status()) {
        if (response_out != nullptr) *response_out = std::move(response);
        return Status::Ok();
      }
      const Failure failure = transport_->Classify(call, response);
      if (!failure.retryable) return failure.status;
      if (!backoff.Wait()) return backoff.GiveUp(failure.status);
      CountRetry();
      MR_LOG(kDebug) << "retrying after: " << failure.status.ToString();
    }
  }

  std::unique_ptr<S3Transport> transport_;
  RequestStats own_stats_;
  const std::shared_ptr<RequestStats> shared_stats_;  // may be null
  Mutex rng_mu_;
  std::mt19937_64 rng_ GUARDED_BY(rng_mu_);
};

Result<ObjectInfo> S3ClientImpl::GetObject(const GetRequest& request, const BodySink& sink) {
  MR_RETURN_IF_ERROR(CheckObjectArgs("GetObject", request.bucket, request.key));
  const std::string what = "GetObject " + transport_->Describe(request.bucket, request.key);
  if (request.length && *request.length > UINT64_MAX - request.offset) {
    return Status::InvalidArgument(what + ": range overflows");
  }
  if (request.length && *request.length == 0) {
    // An empty range is not expressible as an HTTP Range; the metadata is all there is.
    MR_ASSIGN_OR_RETURN(ObjectInfo info, HeadObject(request.bucket, request.key));
    if (!request.if_match.empty() && info.etag != StripQuotes(request.if_match)) {
      return Status::Aborted(what + ": object changed (ETag " + info.etag + ", expected " +
                             StripQuotes(request.if_match) + ")");
    }
    return info;
  }

  // Download state across attempts: `next` is the object offset of the next byte the sink
  // wants; `etag` pins the object version once the first response named it.
  uint64_t next = request.offset;
  uint64_t end = 0;  // object offset one past the last byte wanted, known from the first response
  std::string etag = StripQuotes(request.if_match);
  ObjectInfo info{.key = request.key};
  bool have_info = false;

  S3Call call{.op = "GetObject", .bucket = request.bucket, .key = request.key};
  Backoff backoff = NewBackoff();
  for (;;) {
    call.headers.clear();
    if (next > 0 || request.length) {
      std::string range = "bytes=" + std::to_string(next) + "-";
      if (request.length) range += std::to_string(request.offset + *request.length - 1);
      call.headers.emplace_back("Range", std::move(range));
    }
    if (!etag.empty()) call.headers.emplace_back("If-Match", "\"" + etag + "\"");

    uint64_t skip = 0;  // bytes to drop when a server ignores Range and sends from byte 0
    const uint64_t next_before = next;
    auto on_headers = [&](const HttpResponse& response) -> Status {
      const std::string got_etag = StripQuotes(Header(response, "etag"));
      if (!etag.empty() && !got_etag.empty() && got_etag != etag) {
        return Status::Aborted(what + ": object changed during download (ETag " + got_etag +
                               ", expected " + etag + ")");
      }
      uint64_t total = 0;
      if (response.status == 206) {
        MR_ASSIGN_OR_RETURN(ContentRange range,
                            ParseContentRange(response.Header("content-range")));
        if (range.first != next) {
          return Status::DataLoss(what + ": asked for bytes from " + std::to_string(next) +
                                  ", got a range from " + std::to_string(range.first));
        }
        total = range.total;
      } else {
        MR_ASSIGN_OR_RETURN(total, ParseUint(response.Header("content-length"), "Content-Length"));
        skip = next;
      }
      if (!have_info) {
        info.etag = got_etag;
        info.size = total;
        info.last_modified = LastModified(response);
        if (etag.empty()) etag = got_etag;
        end = request.length ? std::min(total, request.offset + *request.length) : total;
        have_info = true;
      } else if (total != info.size) {
        return Status::Aborted(what + ": object changed during download (size " +
                               std::to_string(total) + ", was " + std::to_string(info.size) + ")");
      }
      return Status::Ok();
    };
    auto on_body = [&](std::string_view bytes) -> Status {
      const uint64_t dropped = std::min<uint64_t>(skip, bytes.size());
      bytes.remove_prefix(dropped);
      skip -= dropped;
      bytes = bytes.substr(0, std::min<uint64_t>(bytes.size(), end - std::min(end, next)));
      if (bytes.empty()) return Status::Ok();
      MR_RETURN_IF_ERROR(sink(bytes));
      next += bytes.size();
      return Status::Ok();
    };

    const HttpResponse response = transport_->Send(call, on_body, on_headers);
    Count(RequestKind::kGet, response, have_info && next >= end);
    Failure failure;
    if (response.error == TransportError::kNone && response.ok_status()) {
      if (have_info && next >= end) return info;
      // The body ended early without a transport error: a short read like any other.
      failure = {Status::Unavailable(what + ": body ended at byte " + std::to_string(next) +
                                     " of " + std::to_string(end)),
                 true};
    } else {
      failure = transport_->Classify(call, response);
      // What the server said, without the "GetObject s3://..." prefix repeated.
      const std::string said = failure.status.message().substr(
          failure.status.message().starts_with(what + ": ") ? what.size() + 2 : 0);
      if (response.status == 416 && have_info) {
        // The range started inside the object as first seen: the object has shrunk since.
        failure.status = Status::Aborted(what +
                                         ": object changed during download (now shorter "
                                         "than " +
                                         std::to_string(next) + " bytes; " + said + ")");
      } else if (response.status == 412) {
        failure.status = Status::Aborted(what +
                                         ": object changed during download (ETag is no "
                                         "longer " +
                                         etag + "; " + said + ")");
      }
    }
    if (!failure.retryable) return failure.status;
    if (next > next_before) backoff.Progress();
    if (!backoff.Wait()) return backoff.GiveUp(failure.status);
    CountRetry();
    MR_LOG(kDebug) << "resuming at byte " << next << " after: " << failure.status.ToString();
  }
}

}  // namespace

std::string_view RequestKindName(RequestKind kind) {
  switch (kind) {
    case RequestKind::kList:
      return "list";
    case RequestKind::kGet:
      return "get";
    case RequestKind::kHead:
      return "head";
  }
  return "?";
}

std::string_view RequestOutcomeName(RequestOutcome outcome) {
  switch (outcome) {
    case RequestOutcome::kOk:
      return "ok";
    case RequestOutcome::kClientError:
      return "client_error";
    case RequestOutcome::kServerError:
      return "server_error";
    case RequestOutcome::kNetwork:
      return "network";
  }
  return "?";
}

uint64_t RequestStats::requests(RequestKind kind) const {
  uint64_t total = 0;
  for (int outcome = 0; outcome < kRequestOutcomes; ++outcome)
    total += requests(kind, static_cast<RequestOutcome>(outcome));
  return total;
}

Result<std::unique_ptr<S3Client>> S3Client::Create(S3Config config, Clock* clock) {
  if (clock == nullptr) return Status::InvalidArgument("S3Client needs a clock");
  if (config.retry.max_attempts < 1) {
    return Status::InvalidArgument("RetryPolicy.max_attempts must be at least 1");
  }
  const Credentials& credentials = config.credentials;
  if (credentials.access_key.empty() != credentials.secret_key.empty()) {
    return Status::InvalidArgument("S3 credentials need both an access key and a secret key");
  }
  Logger::Default().AddSecret(credentials.secret_key);
  Logger::Default().AddSecret(credentials.session_token);
  MR_ASSIGN_OR_RETURN(std::unique_ptr<S3Transport> transport,
                      S3Transport::Create(std::move(config), clock));
  return std::unique_ptr<S3Client>(new S3ClientImpl(std::move(transport)));
}

Result<S3Uri> S3Uri::Parse(std::string_view uri) {
  constexpr std::string_view kScheme = "s3://";
  if (!uri.starts_with(kScheme)) {
    return Status::InvalidArgument("invalid S3 URI '" + std::string(uri) +
                                   "': expected s3://bucket/key");
  }
  const std::string_view rest = uri.substr(kScheme.size());
  const size_t slash = rest.find('/');
  S3Uri parsed;
  parsed.bucket = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos) parsed.key = std::string(rest.substr(slash + 1));
  if (parsed.bucket.empty()) {
    return Status::InvalidArgument("invalid S3 URI '" + std::string(uri) + "': no bucket");
  }
  return parsed;
}

}  // namespace millrace::s3
