#include "s3/sigv4.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>

#include "common/strings.h"
#include "common/thread_annotations.h"

namespace millrace::s3 {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";

// OpenSSL 3's one-shot calls (SHA256(), HMAC()) look their algorithm up by name, in a locked
// table, on every call: with a signature per GET that was 6.5% of a small-files job's CPU. The
// algorithms are fetched once per process; a HMAC is a copy of a context that has its digest.
struct MdFree {
  void operator()(EVP_MD* md) const { EVP_MD_free(md); }
};
struct MacCtxFree {
  void operator()(EVP_MAC_CTX* ctx) const { EVP_MAC_CTX_free(ctx); }
};
using MacCtx = std::unique_ptr<EVP_MAC_CTX, MacCtxFree>;

const EVP_MD* Sha256Md() {
  static const std::unique_ptr<EVP_MD, MdFree> md(EVP_MD_fetch(nullptr, "SHA256", nullptr));
  return md.get();
}

// A HMAC context with SHA-256 as its digest and no key; null if OpenSSL has no HMAC.
const EVP_MAC_CTX* HmacSha256Template() {
  static const MacCtx ctx = [] {
    EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    if (mac == nullptr) return MacCtx();
    MacCtx made(EVP_MAC_CTX_new(mac));
    EVP_MAC_free(mac);  // the context holds its own reference
    char digest[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                                 OSSL_PARAM_END};
    if (made != nullptr && EVP_MAC_CTX_set_params(made.get(), params) != 1) return MacCtx();
    return made;
  }();
  return ctx.get();
}

bool IsUnreserved(unsigned char c) {
  return std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// Trims the value and collapses each inner run of whitespace to a single space.
std::string TrimAll(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  bool pending_space = false;
  for (char c : value) {
    if (IsSpace(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

// RFC 3986 remove_dot_segments, plus dropping empty segments, as the generic services do.
std::string NormalizePath(std::string_view path) {
  std::vector<std::string_view> segments;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view segment = path.substr(start, end - start);
    if (segment == "..") {
      if (!segments.empty()) segments.pop_back();
    } else if (!segment.empty() && segment != ".") {
      segments.push_back(segment);
    }
    start = end + 1;
  }
  std::string out;
  for (std::string_view segment : segments) {
    out += '/';
    out += segment;
  }
  const bool trailing_slash = path.ends_with('/') || path.ends_with("/.") || path.ends_with("/..");
  if (out.empty() || trailing_slash) out += '/';
  return out;
}

struct CanonicalHeaders {
  std::string block;         // "name:value\n" lines
  std::string signed_names;  // "host;x-amz-date"
};

CanonicalHeaders BuildCanonicalHeaders(const NameValues& headers) {
  // std::map sorts by lower-cased name; values of a repeated header keep their given order.
  std::map<std::string, std::vector<std::string>> values;
  for (const auto& [name, value] : headers)
    values[ToLower(name)].push_back(TrimAll(value));
  CanonicalHeaders out;
  for (const auto& [name, list] : values) {
    out.block += name + ':';
    for (size_t i = 0; i < list.size(); ++i) {
      if (i > 0) out.block += ',';
      out.block += list[i];
    }
    out.block += '\n';
    if (!out.signed_names.empty()) out.signed_names += ';';
    out.signed_names += name;
  }
  return out;
}

// Replaces every header named `name` (case-insensitively) with one carrying `value`.
void SetHeader(NameValues* headers, std::string_view name, std::string value) {
  std::erase_if(*headers, [&](const auto& header) { return EqualsIgnoreCase(header.first, name); });
  headers->emplace_back(std::string(name), std::move(value));
}

std::string DateStamp(std::string_view amz_date) {
  return std::string(amz_date.substr(0, 8));
}

}  // namespace

std::string UriEncode(std::string_view bytes, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 3);
  for (char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    if (IsUnreserved(c) || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

std::string UriDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      const int hi = HexValue(text[i + 1]);
      const int lo = HexValue(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += (plus_is_space && c == '+') ? ' ' : c;
  }
  return out;
}

std::string WirePath(std::string_view path) {
  return UriEncode(path, /*keep_slash=*/true);
}

std::string CanonicalUri(std::string_view path, UriRule rule) {
  if (path.empty()) return "/";
  if (rule == UriRule::kS3) return WirePath(path);
  // The generic rule encodes the already-encoded wire path a second time.
  return UriEncode(WirePath(NormalizePath(path)), /*keep_slash=*/true);
}

std::string CanonicalQuery(const NameValues& query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(query.size());
  for (const auto& [name, value] : query) {
    encoded.emplace_back(UriEncode(name, false), UriEncode(value, false));
  }
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [name, value] : encoded) {
    if (!out.empty()) out += '&';
    out += name + '=' + value;
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, Sha256Md(), nullptr) != 1) {
    return "";  // no digest: the request's signature will not match, and says so
  }
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), length));
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  const EVP_MAC_CTX* templ = HmacSha256Template();
  MacCtx ctx(templ != nullptr ? EVP_MAC_CTX_dup(templ) : nullptr);
  unsigned char digest[EVP_MAX_MD_SIZE];
  size_t length = 0;
  if (ctx == nullptr ||
      EVP_MAC_init(ctx.get(), reinterpret_cast<const unsigned char*>(key.data()), key.size(),
                   nullptr) != 1 ||
      EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(data.data()), data.size()) !=
          1 ||
      EVP_MAC_final(ctx.get(), digest, &length, sizeof(digest)) != 1) {
    return "";  // as Sha256Hex
  }
  return std::string(reinterpret_cast<const char*>(digest), length);
}

std::string DeriveSigningKey(std::string_view secret_key, std::string_view date,
                             std::string_view region, std::string_view service) {
  std::string key = HmacSha256("AWS4" + std::string(secret_key), date);
  key = HmacSha256(key, region);
  key = HmacSha256(key, service);
  return HmacSha256(key, "aws4_request");
}

std::string FormatAmzDate(Clock::WallTime time) {
  const std::time_t secs =
      std::chrono::system_clock::to_time_t(std::chrono::floor<std::chrono::seconds>(time));
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[20];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

Result<Clock::WallTime> ParseAmzDate(std::string_view text) {
  auto invalid = [&] {
    return Status::InvalidArgument("invalid time '" + std::string(text) +
                                   "': expected YYYYMMDDTHHMMSSZ (UTC)");
  };
  if (text.size() != 16 || text[8] != 'T' || text[15] != 'Z') return invalid();
  auto number = [&](size_t pos, size_t len) {
    int value = 0;
    for (size_t i = pos; i < pos + len; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) return -1;
      value = value * 10 + (text[i] - '0');
    }
    return value;
  };
  std::tm tm{};
  tm.tm_year = number(0, 4) - 1900;
  tm.tm_mon = number(4, 2) - 1;
  tm.tm_mday = number(6, 2);
  tm.tm_hour = number(9, 2);
  tm.tm_min = number(11, 2);
  tm.tm_sec = number(13, 2);
  if (tm.tm_year < 0 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
      tm.tm_hour < 0 || tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 ||
      tm.tm_sec > 60) {
    return invalid();
  }
  const std::tm given = tm;
  const std::time_t secs = timegm(&tm);
  // timegm normalizes out-of-range days (Feb 31 -> Mar 3); such input is not a real date.
  if (tm.tm_mday != given.tm_mday || tm.tm_mon != given.tm_mon) return invalid();
  return std::chrono::system_clock::from_time_t(secs);
}

struct Signer::KeyCache {
  Mutex mu;
  std::string date GUARDED_BY(mu);
  std::string key GUARDED_BY(mu);
};

Signer::Signer(SignerConfig config)
    : config_(std::move(config)), key_cache_(std::make_shared<KeyCache>()) {}

std::string Signer::SigningKey(const std::string& date) const {
  {
    MutexLock lock(&key_cache_->mu);
    if (key_cache_->date == date) return key_cache_->key;
  }
  std::string key = DeriveSigningKey(config_.secret_key, date, config_.region, config_.service);
  MutexLock lock(&key_cache_->mu);
  key_cache_->date = date;
  key_cache_->key = key;
  return key;
}

std::string Signer::CanonicalRequest(const SigningRequest& request) const {
  const CanonicalHeaders headers = BuildCanonicalHeaders(request.headers);
  std::string out = request.method + '\n';
  out += CanonicalUri(request.path, config_.uri_rule) + '\n';
  out += CanonicalQuery(request.query) + '\n';
  out += headers.block + '\n';
  out += headers.signed_names + '\n';
  out += request.payload_hash;
  return out;
}

SignatureParts Signer::Finish(const SigningRequest& request, Clock::WallTime time) const {
  const std::string amz_date = FormatAmzDate(time);
  const std::string scope =
      DateStamp(amz_date) + '/' + config_.region + '/' + config_.service + "/aws4_request";
  SignatureParts parts;
  parts.canonical_request = CanonicalRequest(request);
  parts.string_to_sign = std::string(kAlgorithm) + '\n' + amz_date + '\n' + scope + '\n' +
                         Sha256Hex(parts.canonical_request);
  parts.signature = HexEncode(HmacSha256(SigningKey(DateStamp(amz_date)), parts.string_to_sign));
  return parts;
}

SignatureParts Signer::SignHeaders(SigningRequest* request, Clock::WallTime time) const {
  SetHeader(&request->headers, "X-Amz-Date", FormatAmzDate(time));
  if (!config_.session_token.empty()) {
    SetHeader(&request->headers, "X-Amz-Security-Token", config_.session_token);
  }
  if (config_.add_content_sha256_header) {
    SetHeader(&request->headers, "X-Amz-Content-Sha256", request->payload_hash);
  }
  SignatureParts parts = Finish(*request, time);
  const std::string amz_date = FormatAmzDate(time);
  parts.authorization =
      std::string(kAlgorithm) + " Credential=" + config_.access_key + '/' + DateStamp(amz_date) +
      '/' + config_.region + '/' + config_.service +
      "/aws4_request, SignedHeaders=" + BuildCanonicalHeaders(request->headers).signed_names +
      ", Signature=" + parts.signature;
  request->headers.emplace_back("Authorization", parts.authorization);
  return parts;
}

SignatureParts Signer::Presign(SigningRequest* request, Clock::WallTime time,
                               std::chrono::seconds expires) const {
  const std::string amz_date = FormatAmzDate(time);
  request->payload_hash = std::string(kUnsignedPayload);
  request->query.emplace_back("X-Amz-Algorithm", std::string(kAlgorithm));
  request->query.emplace_back("X-Amz-Credential", config_.access_key + '/' + DateStamp(amz_date) +
                                                      '/' + config_.region + '/' + config_.service +
                                                      "/aws4_request");
  request->query.emplace_back("X-Amz-Date", amz_date);
  request->query.emplace_back("X-Amz-Expires", std::to_string(expires.count()));
  if (!config_.session_token.empty()) {
    request->query.emplace_back("X-Amz-Security-Token", config_.session_token);
  }
  request->query.emplace_back("X-Amz-SignedHeaders",
                              BuildCanonicalHeaders(request->headers).signed_names);
  return Finish(*request, time);
}

}  // namespace millrace::s3
