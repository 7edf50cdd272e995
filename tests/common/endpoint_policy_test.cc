// EndpointPolicy: link-local addresses refused unless an allowed range holds them, decided on
// the address itself (IPv4, IPv6, IPv4-mapped IPv6) and on what a host name resolves to.
#include "common/endpoint_policy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstring>

namespace millrace {
namespace {

// `text` (an IPv4 or IPv6 address) as a socket address.
sockaddr_storage Address(const std::string& text) {
  sockaddr_storage storage{};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
  if (inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    return storage;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
  EXPECT_EQ(inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr), 1) << text;
  v6->sin6_family = AF_INET6;
  return storage;
}

bool Allowed(const EndpointPolicy& policy, const std::string& address) {
  const sockaddr_storage storage = Address(address);
  return policy.CheckAddress(reinterpret_cast<const sockaddr*>(&storage)).ok();
}

TEST(EndpointPolicyTest, LinkLocalIsRefusedByDefault) {
  const EndpointPolicy policy;
  for (const char* address :
       {"169.254.169.254", "169.254.0.1", "fe80::1", "febf::1", "::ffff:169.254.169.254"}) {
    EXPECT_FALSE(Allowed(policy, address)) << address;
  }
  for (const char* address : {"127.0.0.1", "10.0.0.7", "169.253.255.255", "169.255.0.1", "::1",
                              "fec0::1", "2001:db8::1", "::ffff:127.0.0.1"}) {
    EXPECT_TRUE(Allowed(policy, address)) << address;
  }
  const sockaddr_storage metadata = Address("169.254.169.254");
  const Status refused = policy.CheckAddress(reinterpret_cast<const sockaddr*>(&metadata));
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(refused.message().find("169.254.169.254 is link-local"), std::string::npos)
      << refused.message();
  EXPECT_NE(refused.message().find("--allow-endpoint"), std::string::npos);
}

TEST(EndpointPolicyTest, AllowedRangesOpenOnlyWhatTheyHold) {
  auto policy = EndpointPolicy::Parse({"169.254.10.0/24", "fe80::5", "169.254.169.254"});
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  EXPECT_TRUE(Allowed(*policy, "169.254.10.77"));
  EXPECT_TRUE(Allowed(*policy, "::ffff:169.254.10.1"));
  EXPECT_TRUE(Allowed(*policy, "169.254.169.254"));
  EXPECT_TRUE(Allowed(*policy, "fe80::5"));
  EXPECT_FALSE(Allowed(*policy, "169.254.11.1"));
  EXPECT_FALSE(Allowed(*policy, "169.254.169.253"));
  EXPECT_FALSE(Allowed(*policy, "fe80::6"));
  for (const char* bad :
       {"169.254.0.0/33", "fe80::/129", "nonsense", "169.254.0.0/", "1.2.3/8", "10.0.0.0/x"}) {
    auto parsed = EndpointPolicy::Parse({bad});
    EXPECT_FALSE(parsed.ok()) << bad;
    if (!parsed.ok()) EXPECT_NE(parsed.status().message().find(bad), std::string::npos);
  }
}

TEST(EndpointPolicyTest, ResolveReturnsTheAddressToConnectTo) {
  const EndpointPolicy policy;
  auto local = policy.Resolve("127.0.0.1");
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  EXPECT_EQ(*local, "127.0.0.1");
  auto named = policy.Resolve("localhost");
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_TRUE(*named == "127.0.0.1" || *named == "::1") << *named;
  auto metadata = policy.Resolve("169.254.169.254");
  ASSERT_FALSE(metadata.ok());
  EXPECT_EQ(metadata.status().code(), StatusCode::kPermissionDenied);
  // A name that does not resolve is the client library's to report.
  auto unknown = policy.Resolve("no-such-host.invalid");
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(*unknown, "no-such-host.invalid");
}

}  // namespace
}  // namespace millrace
