// EndpointPolicy: which network addresses the server may connect to on a user's behalf (S3
// endpoints, change-stream hosts). Link-local addresses (169.254.0.0/16 and fe80::/10, where
// cloud metadata services answer with the host's own credentials) are refused unless an
// administrator allowed a range that holds them (`serve --allow-endpoint CIDR`).
//
// Contract
// - Parse reads the allowed ranges ("169.254.10.0/24", "fe80::1/128", a bare address is one
//   address); INVALID_ARGUMENT names a malformed one.
// - CheckAddress decides on the address actually connected to (an IPv4-mapped IPv6 address
//   is its IPv4 address): PERMISSION_DENIED naming the address and the flag that allows it.
// - Resolve looks `host` up and returns the first address the policy allows, as numeric text,
//   for the caller to connect to exactly that address (a name that resolves again later cannot
//   change what was checked); PERMISSION_DENIED when every address is refused. A host that
//   does not resolve is returned as it is: the client library reports that in its own words.
// - Default is the process's policy (refusing link-local until SetDefault), set once at start
//   by SetDefault, before any connection is made. Thread-safety: the const methods may be
//   called from any thread; SetDefault only before the first connection.
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace millrace {

class EndpointPolicy {
 public:
  static Result<EndpointPolicy> Parse(const std::vector<std::string>& allowed);
  static const EndpointPolicy& Default();
  static void SetDefault(EndpointPolicy policy);

  Status CheckAddress(const sockaddr* address) const;
  Result<std::string> Resolve(const std::string& host) const;

 private:
  // An IPv6 range; IPv4 addresses are held as IPv4-mapped IPv6 (::ffff:a.b.c.d).
  struct Range {
    std::array<uint8_t, 16> bytes{};
    int prefix = 128;
    bool Contains(const std::array<uint8_t, 16>& address) const;
  };
  static Result<Range> ParseRange(std::string_view text);
  std::vector<Range> allowed_;
};

}  // namespace millrace
