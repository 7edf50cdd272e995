// Deterministic random-packet tests of the packet decoder, the handshake parser and a live
// server: whatever arrives, nothing crashes, nothing hangs, and other clients keep being served.
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "server/mysql_test_util.h"
#include "server/packet.h"
#include "server/protocol.h"
#include "server/wire.h"

namespace millrace::server {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr uint32_t kSeed = 20260101;

std::string RandomBytes(std::mt19937& rng, size_t n) {
  std::string out(n, '\0');
  for (char& c : out)
    c = static_cast<char>(rng() & 0xff);
  return out;
}

// A packet header with the given length and sequence id, followed by `body`.
std::string Framed(uint32_t length, uint8_t sequence, std::string_view body) {
  WireWriter w;
  w.Int3(length).Int1(sequence).Raw(body);
  return w.Take();
}

TEST(ProtocolFuzzTest, DecoderSurvivesRandomStreams) {
  std::mt19937 rng(kSeed);
  constexpr size_t kMax = 1 << 20;
  size_t packets = 0;
  size_t errors = 0;
  for (int round = 0; round < 3000; ++round) {
    // A stream of fragments: mostly plausible headers, some huge, some with wrong ids.
    std::string stream;
    uint8_t sequence = 0;
    const int fragments = 1 + static_cast<int>(rng() % 8);
    for (int f = 0; f < fragments; ++f) {
      const uint32_t kind = rng() % 10;
      uint32_t length = rng() % 300;
      if (kind == 0) length = 0xffffff;          // a "continued" fragment
      if (kind == 1) length = rng() & 0xffffff;  // anything up to 16 MiB
      const uint8_t id = kind == 2 ? static_cast<uint8_t>(rng()) : sequence++;
      const size_t body = std::min<size_t>(length, kind == 3 ? rng() % 50 : 4000);
      stream += Framed(length, id, RandomBytes(rng, body));
    }
    if (rng() % 3 == 0) stream += RandomBytes(rng, rng() % 64);
    PacketDecoder decoder(kMax);
    uint8_t expected = 0;
    size_t pos = 0;
    bool failed = false;
    while (pos < stream.size() && !failed) {
      const size_t piece = std::min<size_t>(stream.size() - pos, 1 + rng() % 700);
      decoder.Append(std::string_view(stream).substr(pos, piece));
      pos += piece;
      while (true) {
        auto packet = decoder.Next(&expected);
        if (!packet.ok()) {
          ++errors;
          failed = true;
          break;
        }
        if (!*packet) break;
        ASSERT_LE((*packet)->payload.size(), kMax);
        ++packets;
      }
    }
  }
  // The generator produces both outcomes in quantity; a decoder accepting or refusing all
  // would fail here.
  EXPECT_GT(packets, 1000u);
  EXPECT_GT(errors, 300u);
}

TEST(ProtocolFuzzTest, HandshakeParserSurvivesMutatedResponses) {
  std::mt19937 rng(kSeed + 1);
  LoginOptions options;
  options.password = "pw";
  options.database = "db";
  const std::string valid = BuildClientHandshake(
      options, "abcdefghijklmnopqrst",
      DefaultClientCapabilities() | kClientConnectWithDb | kClientConnectAttrs);
  size_t accepted = 0;
  for (int i = 0; i < 50000; ++i) {
    std::string input = valid;
    switch (rng() % 5) {
      case 0:  // flip bytes
        for (int k = 0; k < 1 + static_cast<int>(rng() % 6); ++k) {
          input[rng() % input.size()] = static_cast<char>(rng());
        }
        break;
      case 1:  // truncate
        input.resize(rng() % input.size());
        break;
      case 2:  // random garbage of random length
        input = RandomBytes(rng, rng() % 200);
        break;
      case 3:  // append garbage (e.g. bogus connection attributes)
        input += RandomBytes(rng, rng() % 100);
        break;
      default:  // lengths claiming more than there is
        input[36 + rng() % 6] = static_cast<char>(0xfc + rng() % 4);
        break;
    }
    auto parsed = ParseHandshakeResponse(input);
    if (!parsed.ok()) continue;
    ++accepted;
    EXPECT_LE(parsed->user.size() + parsed->auth_response.size(), input.size());
  }
  EXPECT_GT(accepted, 100u);
}

// One random misbehaving client against a live server.
class Scenario {
 public:
  Scenario(std::mt19937& rng, uint16_t port) : rng_(rng), port_(port) {}

  // Returns false when the server failed to close a connection it had every reason to close.
  bool Run(int kind) {
    auto connected = RawClient::Connect(port_);
    if (!connected.ok()) return false;
    client_ = std::move(connected).value();
    switch (kind) {
      case 0: {  // a garbage handshake response: Bad handshake, or out of order
        const uint32_t length = static_cast<uint32_t>(rng_() % 200);
        return ExpectClosed(client_->SendBytes(
            Framed(length, static_cast<uint8_t>(1 + rng_() % 2), RandomBytes(rng_, length))));
      }
      case 1: {  // a well-formed response whose auth data is garbage: 1045
        auto greeting = client_->ReadGreeting();
        if (!greeting.ok()) return false;
        LoginOptions login;
        std::string response =
            BuildClientHandshake(login, greeting->scramble, DefaultClientCapabilities());
        const size_t auth_at = 4 + 4 + 1 + 23 + 5;  // caps, max, charset, filler, "root\0"
        std::string garbage = RandomBytes(rng_, 1 + rng_() % 40);
        WireWriter auth;
        auth.LenEncString(garbage);
        response = response.substr(0, auth_at) + auth.data() +
                   response.substr(auth_at + 1);  // the original auth was empty (1 byte)
        return ExpectClosed(client_->SendPacket(response));
      }
      case 2:  // a header claiming a huge packet: 1153
        return ExpectClosed(
            client_->SendBytes(Framed(0xfffff0 + rng_() % 15, 1, RandomBytes(rng_, rng_() % 100))));
      case 3:  // half a packet, then the client vanishes
        client_->SendBytes(Framed(1000, 1, RandomBytes(rng_, rng_() % 999))).IgnoreError();
        return true;
      case 4: {  // logged in, then random commands with random bodies and sequence ids
        if (!client_->Handshake().ok()) return false;
        for (int k = 0; k < 1 + static_cast<int>(rng_() % 5); ++k) {
          std::string body(1, static_cast<char>(rng_() % 40));
          body += RandomBytes(rng_, rng_() % 300);
          client_->sequence() = rng_() % 4 == 0 ? static_cast<uint8_t>(rng_()) : 0;
          if (!client_->SendPacket(body).ok()) break;
        }
        return true;
      }
      case 5: {  // a statement prepared, then a command that does not fit it: parameters of the
                 // wrong count, type or length, or a truncated FETCH, SET_OPTION, CHANGE_USER
        if (!client_->Handshake().ok()) return false;
        client_->sequence() = 0;
        if (!client_->SendPacket("\x16SELECT CAST(? AS INT) + 1, CAST(? AS VARCHAR)").ok()) {
          return false;
        }
        WireWriter execute;
        execute.Int1(0x17).Int4(1).Int1(0).Int4(1);  // the connection's first statement
        switch (rng_() % 8) {
          case 0:  // no NULL bitmap for its two parameters
            break;
          case 1:  // no types, and none bound before
            execute.Int1(0).Int1(0);
            break;
          case 2:  // a type MySQL does not define
            execute.Int1(0).Int1(1).Int2(static_cast<uint16_t>(17 + rng_() % 200)).Int2(3);
            execute.Raw(RandomBytes(rng_, rng_() % 20));
            break;
          case 3:  // a string longer than the packet
            execute.Int1(0).Int1(1).Int2(3).Int2(253).Int4(7);
            execute.LenEncInt(1000 + rng_() % 100000).Raw(RandomBytes(rng_, rng_() % 100));
            break;
          case 4:  // two BIGINTs announced, fewer bytes than one
            execute.Int1(0).Int1(1).Int2(8).Int2(8).Raw(RandomBytes(rng_, rng_() % 8));
            break;
          case 5: {  // COM_STMT_FETCH shorter than its statement id and row count
            WireWriter fetch;
            fetch.Int1(0x1c).Raw(RandomBytes(rng_, rng_() % 8));
            execute = std::move(fetch);
            break;
          }
          case 6: {  // COM_SET_OPTION without its option
            WireWriter option;
            option.Int1(0x1b).Raw(RandomBytes(rng_, rng_() % 2));
            execute = std::move(option);
            break;
          }
          default: {  // COM_CHANGE_USER whose user name never ends
            WireWriter change;
            change.Int1(0x11).Raw(std::string(1 + rng_() % 50, 'u'));
            execute = std::move(change);
            break;
          }
        }
        client_->sequence() = 0;
        return ExpectClosed(client_->SendPacket(execute.data()));
      }
      default: {  // logged in, then a raw garbage stream
        if (!client_->Handshake().ok()) return false;
        client_->SendBytes(RandomBytes(rng_, rng_() % 3000)).IgnoreError();
        return true;
      }
    }
  }

 private:
  bool ExpectClosed(const Status& sent) {
    // The server may already have closed before everything was sent.
    return client_->WaitClosed(seconds(10)) || !sent.ok();
  }

  std::mt19937& rng_;
  uint16_t port_;
  std::unique_ptr<RawClient> client_;
};

TEST(ProtocolFuzzTest, LiveServerKeepsServingOthersWhateverClientsSend) {
  MySqlServerOptions options;
  options.max_packet_size = 64 * 1024;
  options.net_timeout = seconds(2);
  auto started = InProcessServer::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  InProcessServer& server = **started;

  auto bystander = RawClient::Connect(server.port());
  ASSERT_TRUE(bystander.ok());
  ASSERT_TRUE((*bystander)->Handshake().ok());
  auto mysql = ConnectorC(server.port(), "");
  ASSERT_NE(mysql, nullptr);

  std::mt19937 rng(kSeed + 2);
  for (int i = 0; i < 1000; ++i) {
    const int kind = static_cast<int>(rng() % 7);
    ASSERT_TRUE(Scenario(rng, server.port()).Run(kind)) << "scenario " << i << " kind " << kind;
    if (i % 25 == 0) {
      auto responses = (*bystander)->Query("SELECT " + std::to_string(i) + " + 1");
      ASSERT_TRUE(responses.ok()) << responses.status().ToString();
      ASSERT_EQ(responses->front().rows.at(0).at(0), std::to_string(i + 1));
    }
  }
  // A real client library on a connection opened before the storm still works.
  ASSERT_EQ(mysql_query(mysql.get(), "SELECT 'alive'"), 0) << mysql_error(mysql.get());
  MYSQL_RES* res = mysql_store_result(mysql.get());
  ASSERT_NE(res, nullptr);
  EXPECT_STREQ(mysql_fetch_row(res)[0], "alive");
  mysql_free_result(res);

  // Every misbehaving connection ends (the half packets after the net timeout): nothing hangs.
  EXPECT_TRUE(testing::WaitFor([&] { return server.server().active_sessions() == 2; }, seconds(10)))
      << server.server().active_sessions() << " sessions still open";
  EXPECT_GT(server.Metric("millrace_mysql_protocol_errors_total"), 20);
  EXPECT_GT(server.Metric("millrace_mysql_auth_failures_total"), 20);
}

}  // namespace
}  // namespace millrace::server
