#include "s3/s3_transport.h"

#include <arpa/inet.h>

#include <cctype>

#include "common/strings.h"
#include "s3/s3_xml.h"

namespace millrace::s3 {
namespace {

constexpr std::chrono::seconds kMaxPresignExpiry{7 * 24 * 3600};

// A host that cannot carry a bucket as its first label: an IP address, or localhost (which the
// AWS SDKs also address path style; bucket.localhost does not resolve everywhere).
bool NeedsPathStyle(std::string_view host_and_port) {
  if (host_and_port.starts_with('[')) return true;  // IPv6
  const std::string host(host_and_port.substr(0, host_and_port.rfind(':')));
  if (EqualsIgnoreCase(host, "localhost")) return true;
  in_addr addr{};
  return inet_pton(AF_INET, host.c_str(), &addr) == 1;
}

// A bucket that can be the first label of a host name under TLS wildcard certificates.
bool IsDnsLabel(std::string_view bucket) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  for (char c : bucket) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return bucket.front() != '-' && bucket.back() != '-';
}

struct StatusMapping {
  StatusCode code;
  bool retryable;
};

// S3 error codes with a meaning of their own; anything else falls back to the HTTP status.
bool MapErrorCode(std::string_view code, StatusMapping* out) {
  static const struct {
    std::string_view code;
    StatusMapping mapping;
  } kCodes[] = {
      {"NoSuchBucket", {StatusCode::kNotFound, false}},
      {"NoSuchKey", {StatusCode::kNotFound, false}},
      {"AccessDenied", {StatusCode::kPermissionDenied, false}},
      {"AllAccessDisabled", {StatusCode::kPermissionDenied, false}},
      {"InvalidAccessKeyId", {StatusCode::kUnauthenticated, false}},
      {"SignatureDoesNotMatch", {StatusCode::kUnauthenticated, false}},
      {"ExpiredToken", {StatusCode::kUnauthenticated, false}},
      {"InvalidToken", {StatusCode::kUnauthenticated, false}},
      {"RequestTimeTooSkewed", {StatusCode::kUnauthenticated, false}},
      {"PreconditionFailed", {StatusCode::kAborted, false}},
      {"InvalidRange", {StatusCode::kOutOfRange, false}},
      {"SlowDown", {StatusCode::kUnavailable, true}},
      {"InternalError", {StatusCode::kUnavailable, true}},
      {"ServiceUnavailable", {StatusCode::kUnavailable, true}},
      {"RequestTimeout", {StatusCode::kUnavailable, true}},
  };
  for (const auto& entry : kCodes) {
    if (entry.code == code) {
      *out = entry.mapping;
      return true;
    }
  }
  return false;
}

StatusMapping MapHttpStatus(int status) {
  switch (status) {
    case 400:
      return {StatusCode::kInvalidArgument, false};
    case 401:
      return {StatusCode::kUnauthenticated, false};
    case 403:
      return {StatusCode::kPermissionDenied, false};
    case 404:
      return {StatusCode::kNotFound, false};
    case 409:
      return {StatusCode::kFailedPrecondition, false};
    case 412:
      return {StatusCode::kAborted, false};
    case 416:
      return {StatusCode::kOutOfRange, false};
    case 429:
      return {StatusCode::kUnavailable, true};
    case 500:
    case 502:
    case 503:
    case 504:
      return {StatusCode::kUnavailable, true};
    default:
      break;
  }
  if (status >= 300 && status < 400) return {StatusCode::kFailedPrecondition, false};
  if (status >= 500) return {StatusCode::kUnavailable, false};
  return {StatusCode::kInvalidArgument, false};
}

// The name S3 would give a body-less error (HEAD responses carry no document).
std::string_view StatusName(int status) {
  switch (status) {
    case 301:
      return "PermanentRedirect";
    case 307:
      return "TemporaryRedirect";
    case 400:
      return "BadRequest";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 412:
      return "PreconditionFailed";
    case 416:
      return "InvalidRange";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    default:
      return "";
  }
}

}  // namespace

Result<std::unique_ptr<S3Transport>> S3Transport::Create(S3Config config, Clock* clock) {
  if (config.region.empty()) return Status::InvalidArgument("S3 region must not be empty");
  std::string endpoint = config.endpoint;
  if (endpoint.empty()) endpoint = "https://s3." + config.region + ".amazonaws.com";
  const size_t sep = endpoint.find("://");
  std::string scheme = sep == std::string::npos ? "" : endpoint.substr(0, sep);
  std::string host = sep == std::string::npos ? endpoint : endpoint.substr(sep + 3);
  if (host.ends_with('/')) host.pop_back();
  // Doris scripts often give a bare host[:port]: a store at an IP address or localhost is a
  // local one reached over plain HTTP (as Doris reaches it); any other host over TLS, since the
  // requests carry signed credentials and the data.
  if (sep == std::string::npos && !host.empty()) scheme = NeedsPathStyle(host) ? "http" : "https";
  if ((scheme != "http" && scheme != "https") || host.empty() ||
      host.find_first_of("/?#@ ") != std::string::npos) {
    return Status::InvalidArgument("invalid S3 endpoint '" + config.endpoint +
                                   "': expected http(s)://host[:port] or host[:port]");
  }
  const bool is_ip = NeedsPathStyle(host);
  return std::unique_ptr<S3Transport>(
      new S3Transport(std::move(config), clock, scheme, std::move(host), is_ip));
}

S3Transport::S3Transport(S3Config config, Clock* clock, std::string scheme, std::string host,
                         bool host_is_ip)
    : config_(std::move(config)),
      clock_(clock),
      scheme_(std::move(scheme)),
      host_(std::move(host)),
      endpoint_(scheme_ + "://" + host_),
      host_is_ip_(host_is_ip),
      signer_(SignerConfig{.access_key = config_.credentials.access_key,
                           .secret_key = config_.credentials.secret_key,
                           .session_token = config_.credentials.session_token,
                           .region = config_.region}),
      http_(clock) {}

S3Transport::Target S3Transport::Address(const std::string& bucket, const std::string& key) const {
  if (!config_.use_path_style && !host_is_ip_ && IsDnsLabel(bucket)) {
    return {bucket + "." + host_, "/" + key};
  }
  return {host_, "/" + bucket + (key.empty() ? "" : "/" + key)};
}

std::string S3Transport::Url(const Target& target, const NameValues& query) const {
  std::string url = scheme_ + "://" + target.host + WirePath(target.path);
  if (!query.empty()) url += "?" + CanonicalQuery(query);
  return url;
}

std::string S3Transport::Describe(const std::string& bucket, const std::string& key) const {
  return "s3://" + bucket + "/" + key + " at " + endpoint_;
}

std::string S3Transport::Scrub(std::string text) const {
  for (const std::string* secret :
       {&config_.credentials.secret_key, &config_.credentials.session_token}) {
    if (secret->empty()) continue;
    for (size_t pos = text.find(*secret); pos != std::string::npos; pos = text.find(*secret, pos)) {
      text.replace(pos, secret->size(), "****");
    }
  }
  return text;
}

HttpResponse S3Transport::Send(const S3Call& call, const BodyCallback& on_body,
                               const HeadersCallback& on_headers,
                               std::chrono::milliseconds total_timeout) {
  const Target target = Address(call.bucket, call.key);
  SigningRequest signing{.method = call.method,
                         .path = target.path,
                         .query = call.query,
                         .headers = {{"Host", target.host}},
                         .payload_hash = call.body_reader ? std::string(kUnsignedPayload)
                                                          : std::string(kEmptyPayloadSha256)};
  signing.headers.insert(signing.headers.end(), call.headers.begin(), call.headers.end());
  if (!config_.credentials.access_key.empty()) {
    signer_.SignHeaders(&signing, clock_->WallNow());
  }
  HttpRequest request{.method = call.method,
                      .url = Url(target, signing.query),
                      .headers = std::move(signing.headers),
                      .body_reader = call.body_reader,
                      .body_size = call.body_size,
                      .connect_timeout = config_.retry.connect_timeout,
                      .stall_timeout = config_.retry.request_timeout,
                      .total_timeout = total_timeout};
  return http_.Perform(request, on_body, on_headers);
}

Result<std::string> S3Transport::PresignGet(const std::string& bucket, const std::string& key,
                                            std::chrono::seconds expires,
                                            Clock::WallTime signing_time) const {
  if (config_.credentials.access_key.empty() || config_.credentials.secret_key.empty()) {
    return Status::FailedPrecondition("cannot presign " + Describe(bucket, key) +
                                      ": no access key and secret key configured");
  }
  if (expires.count() < 1 || expires > kMaxPresignExpiry) {
    return Status::InvalidArgument("presigned URL expiry must be 1 to 604800 seconds, got " +
                                   std::to_string(expires.count()));
  }
  const Target target = Address(bucket, key);
  SigningRequest signing{
      .method = "GET", .path = target.path, .query = {}, .headers = {{"Host", target.host}}};
  const SignatureParts parts = signer_.Presign(&signing, signing_time, expires);
  return Url(target, signing.query) + "&X-Amz-Signature=" + parts.signature;
}

Failure S3Transport::Classify(const S3Call& call, const HttpResponse& response) const {
  const std::string what = call.op + " " + Describe(call.bucket, call.key);
  Failure failure;
  if (response.error == TransportError::kSinkFailed) {
    failure.status = response.sink_status;
    return failure;
  }
  if (response.error != TransportError::kNone) {
    const TransportError error = response.error;
    const StatusCode code = error == TransportError::kTimeout ? StatusCode::kDeadlineExceeded
                                                              : StatusCode::kUnavailable;
    failure.retryable = error != TransportError::kTls && error != TransportError::kOther;
    failure.status = Status(code, Scrub(what + ": " + std::string(TransportErrorName(error)) +
                                        " (" + response.error_detail + ")"));
    return failure;
  }
  const ErrorDocument doc = ParseErrorDocument(response.error_body);
  const std::string s3_code =
      doc.code.empty() ? std::string(StatusName(response.status)) : doc.code;
  StatusMapping mapping = MapHttpStatus(response.status);
  MapErrorCode(s3_code, &mapping);
  std::string message = what + ": ";
  if (!s3_code.empty()) message += s3_code + " ";
  message += "(HTTP " + std::to_string(response.status) + ")";
  if (!doc.message.empty()) message += ": " + doc.message;
  failure.status = Status(mapping.code, Scrub(std::move(message)));
  failure.retryable = mapping.retryable;
  return failure;
}

}  // namespace millrace::s3
