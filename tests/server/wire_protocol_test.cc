// Unit tests of the wire encodings, packet framing and protocol messages.
#include <gtest/gtest.h>

#include "access/password.h"
#include "server/column_types.h"
#include "server/mysql_test_util.h"
#include "server/packet.h"
#include "server/protocol.h"
#include "server/wire.h"

namespace millrace::server {
namespace {

TEST(WireTest, LengthEncodedIntegersRoundTripAtEveryWidth) {
  for (uint64_t v : {uint64_t{0}, uint64_t{250}, uint64_t{251}, uint64_t{65535}, uint64_t{65536},
                     uint64_t{16777215}, uint64_t{16777216}, uint64_t{1} << 40, ~uint64_t{0}}) {
    WireWriter w;
    w.LenEncInt(v);
    WireReader r(w.data());
    uint64_t out = 0;
    ASSERT_TRUE(r.LenEncInt(&out)) << v;
    EXPECT_EQ(out, v);
    EXPECT_TRUE(r.done());
  }
  EXPECT_EQ(WireWriter().LenEncInt(250).data(), "\xfa");
  EXPECT_EQ(WireWriter().LenEncInt(251).data(), std::string("\xfc\xfb\x00", 3));
}

TEST(WireTest, ReaderNeverReadsPastTheEnd) {
  WireReader truncated(std::string_view("\xfd\x01\x02", 3));
  uint64_t v = 0;
  EXPECT_FALSE(truncated.LenEncInt(&v));
  WireReader long_string(
      std::string_view("\x05"
                       "abc",
                       4));
  std::string_view s;
  EXPECT_FALSE(long_string.LenEncString(&s));
  EXPECT_EQ(long_string.remaining(), 4u);  // position restored
  WireReader no_nul("abc");
  EXPECT_FALSE(no_nul.NulString(&s));
  WireReader null_marker("\xfb");
  EXPECT_FALSE(null_marker.LenEncInt(&v));
  uint32_t i4 = 0;
  EXPECT_FALSE(WireReader("abc").Int4(&i4));
}

TEST(PacketTest, DecoderReassemblesPacketsArrivingByteByByte) {
  std::string stream;
  uint8_t seq = 0;
  AppendPacket("first", &seq, &stream);
  AppendPacket("", &seq, &stream);
  AppendPacket("third", &seq, &stream);
  PacketDecoder decoder(1024);
  uint8_t expected = 0;
  std::vector<std::string> payloads;
  for (char c : stream) {
    decoder.Append(std::string_view(&c, 1));
    auto packet = decoder.Next(&expected);
    ASSERT_TRUE(packet.ok());
    if (*packet) payloads.push_back((*packet)->payload);
  }
  EXPECT_EQ(payloads, (std::vector<std::string>{"first", "", "third"}));
  EXPECT_EQ(expected, 3);
  EXPECT_FALSE(decoder.HasPartial());
}

TEST(PacketTest, LargePayloadsAreSplitAndJoined) {
  const std::string payload(kMaxFragment * 2 + 10, 'x');
  std::string stream;
  uint8_t seq = 0;
  AppendPacket(payload, &seq, &stream);
  EXPECT_EQ(seq, 3);
  EXPECT_EQ(stream.size(), payload.size() + 3 * 4);

  std::string exact_stream;
  uint8_t exact_seq = 0;
  AppendPacket(std::string(kMaxFragment, 'y'), &exact_seq, &exact_stream);
  EXPECT_EQ(exact_seq, 2);  // a full fragment is followed by an empty one
  EXPECT_EQ(exact_stream.size(), kMaxFragment + 8);

  PacketDecoder decoder(payload.size());
  decoder.Append(stream);
  uint8_t expected = 0;
  auto packet = decoder.Next(&expected);
  ASSERT_TRUE(packet.ok() && *packet);
  EXPECT_EQ((*packet)->payload, payload);
  EXPECT_EQ(expected, 3);
}

TEST(PacketTest, OversizedHeadersFailBeforeAnythingIsBuffered) {
  PacketDecoder decoder(1000);
  decoder.Append(std::string_view("\xff\xff\xff\x00", 4));  // claims 16 MiB
  uint8_t seq = 0;
  auto packet = decoder.Next(&seq);
  ASSERT_FALSE(packet.ok());
  EXPECT_EQ(packet.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(packet.status().message().find("max_allowed_packet"), std::string::npos);
}

TEST(PacketTest, OutOfOrderSequenceIdsAreRejected) {
  std::string stream;
  uint8_t seq = 5;
  AppendPacket("x", &seq, &stream);
  PacketDecoder decoder(1000);
  decoder.Append(stream);
  uint8_t expected = 0;
  auto packet = decoder.Next(&expected);
  ASSERT_FALSE(packet.ok());
  EXPECT_EQ(packet.status().code(), StatusCode::kDataLoss);
}

// How answers are checked: tests/access/password_test.cc.
TEST(ProtocolTest, ScramblesAreRandomAndWithoutNul) {
  auto scramble = GenerateScramble();
  ASSERT_TRUE(scramble.ok());
  ASSERT_EQ(scramble->size(), kScrambleLength);
  EXPECT_EQ(scramble->find('\0'), std::string::npos);
  EXPECT_NE(*scramble, *GenerateScramble());
}

TEST(ProtocolTest, HandshakeResponsesParseWithEveryAuthEncoding) {
  const std::string scramble = "abcdefghijklmnopqrst";
  LoginOptions options;
  options.password = "pw";
  options.database = "shop";
  options.auth_plugin = "caching_sha2_password";
  for (uint32_t caps :
       {DefaultClientCapabilities() | kClientConnectWithDb,
        (DefaultClientCapabilities() | kClientConnectWithDb) & ~kClientPluginAuthLenencData}) {
    auto parsed = ParseHandshakeResponse(BuildClientHandshake(options, scramble, caps));
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->user, "root");
    EXPECT_EQ(parsed->auth_response, access::NativePasswordResponse("pw", scramble));
    EXPECT_EQ(parsed->database, "shop");
    EXPECT_EQ(parsed->auth_plugin, "caching_sha2_password");
  }
  // Every truncation of a valid response is either parsed or rejected, never over-read.
  const std::string full = BuildClientHandshake(options, scramble, DefaultClientCapabilities());
  for (size_t n = 0; n < full.size(); ++n) {
    auto parsed = ParseHandshakeResponse(std::string_view(full).substr(0, n));
    if (n < 37) EXPECT_FALSE(parsed.ok()) << n;
  }
  auto old = ParseHandshakeResponse(std::string("\x05\x00\x00\x00", 4) + std::string(40, 'x'));
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), StatusCode::kNotSupported);
}

TEST(ProtocolTest, ServerMessagesHaveTheDocumentedLayout) {
  EXPECT_EQ(BuildOk(3, kServerStatusAutocommit), std::string("\x00\x03\x00\x02\x00\x00\x00", 7));
  EXPECT_EQ(BuildOk(0, kServerMoreResultsExists, true),
            std::string("\xfe\x00\x00\x08\x00\x00\x00", 7));
  EXPECT_EQ(BuildEof(kServerStatusAutocommit), std::string("\xfe\x00\x00\x02\x00", 5));
  EXPECT_EQ(BuildErr(1146, "42S02", "no"), std::string("\xff\x7a\x04#42S02no", 11));
  EXPECT_EQ(CommandName(0x16), "COM_STMT_PREPARE");
  EXPECT_EQ(CommandName(0x7f), "COM_0x7f");
}

TEST(ColumnTypesTest, DuckDbTypesMapToMySqlTypes) {
  using engine::TypeId;
  EXPECT_EQ(MySqlColumnFor({TypeId::kBoolean}).type, kTypeTiny);
  EXPECT_EQ(MySqlColumnFor({TypeId::kBoolean}).length, 1u);
  EXPECT_EQ(MySqlColumnFor({TypeId::kUInteger}).flags & kFlagUnsigned, kFlagUnsigned);
  const MySqlColumn decimal = MySqlColumnFor({TypeId::kDecimal, 18, 3});
  EXPECT_EQ(decimal.type, kTypeNewDecimal);
  EXPECT_EQ(decimal.decimals, 3);
  EXPECT_EQ(decimal.length, 20u);
  EXPECT_EQ(MySqlColumnFor({TypeId::kTimestampTz}).type, kTypeTimestamp);
  EXPECT_EQ(MySqlColumnFor({TypeId::kBlob}).charset, kBinaryCollation);
  // VARCHAR is a LONGTEXT: MySQL's BLOB type in utf8mb4, 2^32 - 1 bytes long.
  const MySqlColumn text = MySqlColumnFor({TypeId::kVarchar});
  EXPECT_EQ(text.type, kTypeBlob);
  EXPECT_EQ(text.charset, kUtf8mb4GeneralCi);
  EXPECT_EQ(text.length, 4294967295u);
  EXPECT_EQ(text.flags & kFlagBinary, 0);
  EXPECT_EQ(MySqlColumnFor({TypeId::kList}).type, kTypeBlob);
  EXPECT_EQ(MySqlColumnFor({TypeId::kList}).charset, kUtf8mb4GeneralCi);
  EXPECT_EQ(MySqlColumnFor({TypeId::kHugeInt}).length, 40u);
}

}  // namespace
}  // namespace millrace::server
