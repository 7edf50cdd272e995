#include "common/endpoint_policy.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>
#include <memory>
#include <optional>

namespace millrace {
namespace {

using Bytes = std::array<uint8_t, 16>;

// ::ffff:a.b.c.d
Bytes MappedV4(const in_addr& v4) {
  Bytes out{};
  out[10] = 0xff;
  out[11] = 0xff;
  std::memcpy(out.data() + 12, &v4, 4);
  return out;
}

bool IsMappedV4(const Bytes& b) {
  for (int i = 0; i < 10; ++i) {
    if (b[i] != 0) return false;
  }
  return b[10] == 0xff && b[11] == 0xff;
}

// The address as text: dotted IPv4 for a mapped one.
std::string Text(const Bytes& b) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (IsMappedV4(b)) {
    inet_ntop(AF_INET, b.data() + 12, buf, sizeof(buf));
  } else {
    inet_ntop(AF_INET6, b.data(), buf, sizeof(buf));
  }
  return buf;
}

bool IsLinkLocal(const Bytes& b) {
  if (IsMappedV4(b)) return b[12] == 169 && b[13] == 254;  // 169.254.0.0/16
  return b[0] == 0xfe && (b[1] & 0xc0) == 0x80;            // fe80::/10
}

// The address of an IPv4 or IPv6 socket address; nullopt for another family (a local socket).
std::optional<Bytes> BytesOf(const sockaddr* address) {
  if (address->sa_family == AF_INET) {
    return MappedV4(reinterpret_cast<const sockaddr_in*>(address)->sin_addr);
  }
  if (address->sa_family != AF_INET6) return std::nullopt;
  Bytes bytes{};
  std::memcpy(bytes.data(), &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, 16);
  return bytes;
}

// Never destroyed: connections of any thread read it until the process ends.
EndpointPolicy& DefaultPolicy() {
  static auto* policy = new EndpointPolicy();
  return *policy;
}

}  // namespace

bool EndpointPolicy::Range::Contains(const Bytes& address) const {
  for (int bit = 0; bit < prefix; ++bit) {
    const uint8_t mask = static_cast<uint8_t>(0x80 >> (bit % 8));
    if ((address[bit / 8] & mask) != (bytes[bit / 8] & mask)) return false;
  }
  return true;
}

Result<EndpointPolicy::Range> EndpointPolicy::ParseRange(std::string_view text) {
  const std::string whole(text);
  const size_t slash = whole.find('/');
  const std::string address = whole.substr(0, slash);
  Range range;
  int max_prefix = 128;
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    range.bytes = MappedV4(v4);
    max_prefix = 32;
  } else if (inet_pton(AF_INET6, address.c_str(), &v6) == 1) {
    std::memcpy(range.bytes.data(), &v6, 16);
  } else {
    return Status::InvalidArgument("--allow-endpoint: '" + whole +
                                   "' is not an address or a CIDR range such as 169.254.10.0/24");
  }
  int prefix = max_prefix;
  if (slash != std::string::npos) {
    const std::string digits = whole.substr(slash + 1);
    if (digits.empty() || digits.size() > 3 ||
        digits.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(digits) > max_prefix) {
      return Status::InvalidArgument("--allow-endpoint: '" + whole + "' has a bad prefix length");
    }
    prefix = std::stoi(digits);
  }
  // An IPv4 prefix counts from the mapped address's 96 leading bits.
  range.prefix = max_prefix == 32 ? 96 + prefix : prefix;
  return range;
}

Result<EndpointPolicy> EndpointPolicy::Parse(const std::vector<std::string>& allowed) {
  EndpointPolicy policy;
  for (const std::string& text : allowed) {
    MR_ASSIGN_OR_RETURN(Range range, ParseRange(text));
    policy.allowed_.push_back(range);
  }
  return policy;
}

const EndpointPolicy& EndpointPolicy::Default() {
  return DefaultPolicy();
}

void EndpointPolicy::SetDefault(EndpointPolicy policy) {
  DefaultPolicy() = std::move(policy);
}

Status EndpointPolicy::CheckAddress(const sockaddr* address) const {
  const std::optional<Bytes> bytes = BytesOf(address);
  if (!bytes || !IsLinkLocal(*bytes)) return Status::Ok();  // a local socket is no endpoint
  for (const Range& range : allowed_) {
    if (range.Contains(*bytes)) return Status::Ok();
  }
  return Status::PermissionDenied(
      "the endpoint address " + Text(*bytes) +
      " is link-local (169.254.0.0/16, fe80::/10: cloud metadata services answer there with "
      "the host's own credentials); an administrator may allow it with --allow-endpoint");
}

Result<std::string> EndpointPolicy::Resolve(const std::string& host) const {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (host.empty() || host.front() == '/' ||
      getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) {
    return host;
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, freeaddrinfo);
  Status refused;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    Status allowed = CheckAddress(a->ai_addr);
    if (!allowed.ok()) {
      refused = std::move(allowed);
      continue;
    }
    if (const std::optional<Bytes> bytes = BytesOf(a->ai_addr)) return Text(*bytes);
  }
  if (!refused.ok()) return refused.WithContext("host " + host);
  return host;
}

}  // namespace millrace
