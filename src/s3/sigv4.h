// SigV4: AWS Signature Version 4 (AWS4-HMAC-SHA256), our own implementation over OpenSSL.
//
// Contract
// - A SigningRequest describes an HTTP request in *decoded* form: the path as a sequence of
//   bytes ("/bucket/my key+1.csv"), query parameters as decoded name/value pairs, headers as
//   they will be sent. The signer encodes them exactly once for the wire (WirePath,
//   CanonicalQuery) and builds the canonical request from the same bytes, so what is signed
//   is what is sent.
// - Canonical URI: S3 signs the path as sent, each segment RFC 3986-encoded once, without
//   normalization ("/a/../b" and "//x" are distinct keys). Other AWS services remove dot
//   segments and empty segments and encode the path twice. UriRule picks one.
// - Canonical query: names and values RFC 3986-encoded ('/' too), sorted by encoded name then
//   encoded value; a parameter without a value is "name=".
// - Canonical headers: names lower-cased and sorted; values trimmed, inner runs of whitespace
//   collapsed to one space; repeated headers joined with ',' in the order given. Every header
//   of the request is signed.
// - SignHeaders sets X-Amz-Date, X-Amz-Security-Token (when a session token is configured)
//   and, for S3, X-Amz-Content-Sha256, replacing values the caller may have set, then adds
//   Authorization. Presign adds the X-Amz-* query parameters instead and signs
//   UNSIGNED-PAYLOAD; the URL is the request's with "&X-Amz-Signature=<signature>" appended
//   last, as AWS documents it.
// - Thread-safety: a Signer's configuration is immutable after construction; it may sign on
//   any number of threads at once. It keeps the signing key of the last date it signed for
//   (the key changes with the date only), shared by its copies. The free functions are pure.
// - Secrets: the secret key lives only inside Signer; nothing it returns contains it.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace millrace::s3 {

using NameValues = std::vector<std::pair<std::string, std::string>>;

inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";
// Hex SHA-256 of the empty string: the payload hash of every body-less request.
inline constexpr std::string_view kEmptyPayloadSha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

enum class UriRule {
  kS3,       // path as sent, segments encoded once, no normalization
  kGeneric,  // dot segments and empty segments removed, segments encoded twice
};

struct SigningRequest {
  std::string method;        // "GET"
  std::string path = "/";    // decoded, starts with '/'
  NameValues query;          // decoded names and values, any order
  NameValues headers;        // as sent; must contain Host
  std::string payload_hash;  // hex SHA-256 of the body, or kUnsignedPayload
};

struct SignerConfig {
  std::string access_key;
  std::string secret_key;
  std::string session_token;  // "" without temporary credentials
  std::string region = "us-east-1";
  std::string service = "s3";
  UriRule uri_rule = UriRule::kS3;
  // S3 requires x-amz-content-sha256 on every header-signed request; other services do not.
  bool add_content_sha256_header = true;
};

// The intermediate and final products of one signature, for callers and for tests that
// compare each stage with published examples.
struct SignatureParts {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;      // lower-case hex
  std::string authorization;  // Authorization header value ("" for presigned requests)
};

class Signer {
 public:
  explicit Signer(SignerConfig config);

  // Sets the X-Amz-* headers described above on `request` and appends Authorization.
  SignatureParts SignHeaders(SigningRequest* request, Clock::WallTime time) const;

  // Appends X-Amz-Algorithm, -Credential, -Date, -Expires, -SignedHeaders (and
  // -Security-Token) to request->query and signs; X-Amz-Signature is left to the caller.
  SignatureParts Presign(SigningRequest* request, Clock::WallTime time,
                         std::chrono::seconds expires) const;

  // The canonical request for `request` as it stands (no headers or parameters added).
  std::string CanonicalRequest(const SigningRequest& request) const;

  const SignerConfig& config() const { return config_; }

 private:
  struct KeyCache;

  SignatureParts Finish(const SigningRequest& request, Clock::WallTime time) const;
  // DeriveSigningKey for `date` (a DateStamp), from the cache when it is the date last used.
  std::string SigningKey(const std::string& date) const;

  SignerConfig config_;
  std::shared_ptr<KeyCache> key_cache_;
};

// RFC 3986 percent-encoding of every byte except A-Z a-z 0-9 - . _ ~ (and '/' when
// keep_slash), with upper-case hex digits.
std::string UriEncode(std::string_view bytes, bool keep_slash);
// Decodes %XX escapes; with plus_is_space also '+' as ' ' (form encoding, used by S3's
// encoding-type=url listings). Malformed escapes are kept literally.
std::string UriDecode(std::string_view text, bool plus_is_space);

// The path as it goes on the request line: each segment encoded once.
std::string WirePath(std::string_view path);
std::string CanonicalUri(std::string_view path, UriRule rule);
// Sorted, encoded "a=1&b=2"; also the query string Millrace sends.
std::string CanonicalQuery(const NameValues& query);

std::string Sha256Hex(std::string_view data);
// Raw (binary) HMAC-SHA256.
std::string HmacSha256(std::string_view key, std::string_view data);
// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request").
std::string DeriveSigningKey(std::string_view secret_key, std::string_view date,
                             std::string_view region, std::string_view service);

// "20130524T000000Z" and back. The parser accepts exactly that form (UTC).
std::string FormatAmzDate(Clock::WallTime time);
Result<Clock::WallTime> ParseAmzDate(std::string_view text);

}  // namespace millrace::s3
