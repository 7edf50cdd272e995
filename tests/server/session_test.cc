// The MySQL server in-process, driven byte by byte with a raw protocol client.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "common/logging.h"
#include "server/column_types.h"
#include "server/mysql_test_util.h"
#include "server/protocol.h"

namespace millrace::server {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::unique_ptr<InProcessServer> StartOrDie(MySqlServerOptions options = {}) {
  auto server = InProcessServer::Start(std::move(options));
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  return server.ok() ? std::move(server).value() : nullptr;
}

std::unique_ptr<RawClient> ConnectOrDie(uint16_t port) {
  auto client = RawClient::Connect(port);
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(client).value() : nullptr;
}

std::unique_ptr<RawClient> LoginOrDie(uint16_t port, const LoginOptions& options = {}) {
  auto client = ConnectOrDie(port);
  if (client == nullptr) return nullptr;
  Status status = client->Handshake(options);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return status.ok() ? std::move(client) : nullptr;
}

// The single response of a statement.
Response One(RawClient& client, std::string_view sql) {
  auto responses = client.Query(sql);
  EXPECT_TRUE(responses.ok()) << sql << ": " << responses.status().ToString();
  if (!responses.ok() || responses->size() != 1) {
    ADD_FAILURE() << sql << ": expected one response";
    return Response{};
  }
  return std::move(responses->front());
}

// True once a statement is executing on the server (up to 60 s, for a loaded machine).
bool WaitForRunningStatement(InProcessServer& server) {
  return testing::WaitFor([&] { return server.Metric("millrace_mysql_statements_running") >= 1; },
                          seconds(60));
}

TEST(SessionTest, GreetingOffersProtocol41AndNativePassword) {
  auto server = StartOrDie();
  auto client = ConnectOrDie(server->port());
  auto greeting = client->ReadGreeting();
  ASSERT_TRUE(greeting.ok()) << greeting.status().ToString();
  EXPECT_EQ(greeting->protocol, 10);
  EXPECT_EQ(greeting->server_version, server->router().options().server_version);
  EXPECT_EQ(greeting->auth_plugin, "mysql_native_password");
  EXPECT_EQ(greeting->scramble.size(), kScrambleLength);
  EXPECT_NE(greeting->capabilities & kClientProtocol41, 0u);
  EXPECT_NE(greeting->capabilities & kClientDeprecateEof, 0u);
  EXPECT_EQ(greeting->capabilities & kClientSsl, 0u);
  EXPECT_NE(greeting->status & kServerStatusAutocommit, 0);
  auto other = ConnectOrDie(server->port());
  auto second = other->ReadGreeting();
  ASSERT_TRUE(second.ok());
  EXPECT_NE(second->connection_id, greeting->connection_id);
  EXPECT_NE(second->scramble, greeting->scramble);
}

TEST(SessionTest, PasswordsAreCheckedAndOtherPluginsSwitchToNative) {
  MySqlServerOptions options;
  options.root_password = "correct horse";
  auto server = StartOrDie(options);
  LoginOptions login;
  login.password = "correct horse";
  EXPECT_TRUE(ConnectOrDie(server->port())->Handshake(login).ok());
  login.auth_plugin = "caching_sha2_password";  // answered by an AuthSwitchRequest
  EXPECT_TRUE(ConnectOrDie(server->port())->Handshake(login).ok());

  struct Case {
    std::string user, password, message;
  };
  for (const Case& c :
       {Case{"root", "wrong", "Access denied for user 'root'@'127.0.0.1' (using password: YES)"},
        Case{"root", "", "Access denied for user 'root'@'127.0.0.1' (using password: NO)"},
        Case{"admin", "correct horse",
             "Access denied for user 'admin'@'127.0.0.1' (using password: YES)"}}) {
    auto client = ConnectOrDie(server->port());
    auto greeting = client->ReadGreeting();
    ASSERT_TRUE(greeting.ok());
    LoginOptions bad;
    bad.user = c.user;
    bad.password = c.password;
    auto response = client->Login(*greeting, bad);
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_TRUE(response->is_error);
    EXPECT_EQ(response->error_code, 1045);
    EXPECT_EQ(response->sqlstate, "28000");
    EXPECT_EQ(response->message, c.message);
    EXPECT_TRUE(client->WaitClosed());
  }
  EXPECT_EQ(server->Metric("millrace_mysql_auth_failures_total"), 3);
}

TEST(SessionTest, ConnectWithDatabaseSelectsIt) {
  auto server = StartOrDie();
  auto admin = LoginOrDie(server->port());
  ASSERT_FALSE(One(*admin, "CREATE DATABASE shop").is_error);
  LoginOptions login;
  login.database = "shop";
  auto client = LoginOrDie(server->port(), login);
  Response db = One(*client, "SELECT DATABASE()");
  ASSERT_EQ(db.rows.size(), 1u);
  EXPECT_EQ(db.rows[0][0], "shop");
  EXPECT_EQ(db.columns[0].schema, "shop");

  login.database = "nope";
  auto rejected = ConnectOrDie(server->port());
  auto greeting = rejected->ReadGreeting();
  ASSERT_TRUE(greeting.ok());
  auto response = rejected->Login(*greeting, login);
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->error_code, 1049);
  EXPECT_EQ(response->message, "Unknown database 'nope'");
}

TEST(SessionTest, ResultSetsWithAndWithoutDeprecateEof) {
  auto server = StartOrDie();
  const std::string sql =
      "SELECT 42::INTEGER AS i, NULL::VARCHAR AS n, 'x' AS s, true AS b, 1.50::DECIMAL(5,2) AS d "
      "UNION ALL SELECT -1, 'y', '', false, 0";
  for (bool deprecate_eof : {true, false}) {
    LoginOptions login;
    login.capabilities = deprecate_eof ? DefaultClientCapabilities()
                                       : DefaultClientCapabilities() & ~kClientDeprecateEof;
    auto client = LoginOrDie(server->port(), login);
    Response r = One(*client, sql);
    ASSERT_TRUE(r.has_result_set) << r.message;
    ASSERT_EQ(r.columns.size(), 5u);
    EXPECT_EQ(r.columns[0].name, "i");
    EXPECT_EQ(r.columns[0].type, kTypeLong);
    EXPECT_EQ(r.columns[1].type, kTypeBlob);  // a VARCHAR: MySQL's LONGTEXT
    EXPECT_EQ(r.columns[3].type, kTypeTiny);
    EXPECT_EQ(r.columns[4].type, kTypeNewDecimal);
    EXPECT_EQ(r.columns[4].decimals, 2);
    using Row = std::vector<std::optional<std::string>>;
    EXPECT_EQ(r.rows, (std::vector<Row>{{"42", std::nullopt, "x", "1", "1.50"},
                                        {"-1", "y", "", "0", "0.00"}}));
    EXPECT_NE(r.status_flags & kServerStatusAutocommit, 0);
    // An empty result has its columns and no rows.
    Response empty = One(*client, "SELECT 1 AS a WHERE false");
    EXPECT_TRUE(empty.has_result_set);
    EXPECT_EQ(empty.columns.size(), 1u);
    EXPECT_TRUE(empty.rows.empty());
  }
}

TEST(SessionTest, MultiStatementsNeedTheCapabilityAndStopAtTheFirstError) {
  auto server = StartOrDie();
  auto client = LoginOrDie(server->port());
  auto responses = client->Query(
      "CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1), (2); SELECT sum(a) FROM t; "
      "SELECT * FROM missing; SELECT 'never'");
  ASSERT_TRUE(responses.ok()) << responses.status().ToString();
  ASSERT_EQ(responses->size(), 4u);
  EXPECT_NE((*responses)[0].status_flags & kServerMoreResultsExists, 0);
  EXPECT_EQ((*responses)[1].affected_rows, 2u);
  EXPECT_NE((*responses)[1].status_flags & kServerMoreResultsExists, 0);
  EXPECT_EQ((*responses)[2].rows, (std::vector<std::vector<std::optional<std::string>>>{{"3"}}));
  EXPECT_NE((*responses)[2].status_flags & kServerMoreResultsExists, 0);
  EXPECT_TRUE((*responses)[3].is_error);
  EXPECT_EQ((*responses)[3].error_code, 1146);

  LoginOptions single;
  single.capabilities = DefaultClientCapabilities() & ~kClientMultiStatements;
  auto old = LoginOrDie(server->port(), single);
  Response r = One(*old, "SELECT 1; SELECT 2");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.error_code, 1064);
  EXPECT_FALSE(One(*old, "SELECT 1;").is_error);  // a trailing ';' is one statement
  Response empty = One(*old, " -- nothing\n");
  EXPECT_EQ(empty.error_code, 1065);
}

TEST(SessionTest, PingInitDbAndUnsupportedCommands) {
  auto server = StartOrDie();
  auto client = LoginOrDie(server->port());
  auto ping = client->Command(kComPing, "");
  ASSERT_TRUE(ping.ok());
  EXPECT_FALSE(ping->front().is_error);
  auto init = client->Command(kComInitDb, "nope");
  ASSERT_TRUE(init.ok());
  EXPECT_EQ(init->front().error_code, 1049);
  ASSERT_FALSE(One(*client, "CREATE DATABASE d").is_error);
  init = client->Command(kComInitDb, "d");
  ASSERT_TRUE(init.ok());
  EXPECT_FALSE(init->front().is_error);
  EXPECT_EQ(One(*client, "SELECT DATABASE()").rows[0][0], "d");

  auto shutdown = client->Command(0x08, "");
  ASSERT_TRUE(shutdown.ok());
  EXPECT_EQ(shutdown->front().error_code, 1047);
  EXPECT_EQ(shutdown->front().sqlstate, "08S01");
  EXPECT_EQ(shutdown->front().message, "Command COM_SHUTDOWN is not supported by Millrace");
  EXPECT_EQ(One(*client, "SELECT 7").rows[0][0], "7");  // still usable

  auto quit = client->SendPacket(std::string(1, static_cast<char>(kComQuit)));
  EXPECT_TRUE(quit.ok());
  EXPECT_TRUE(client->WaitClosed());
}

TEST(SessionTest, AnErrorWhileStreamingEndsTheResultWithErr) {
  auto server = StartOrDie();
  auto client = LoginOrDie(server->port());
  client->set_keep_rows(false);
  // DuckDB computes a little ahead of the client; the error surfaces after many rows.
  Response r = One(*client,
                   "SELECT CASE WHEN i < 1000000 THEN i ELSE error('boom at ' || i) END AS v "
                   "FROM range(2000000) t(i)");
  EXPECT_TRUE(r.has_result_set);
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.error_code, 1105);
  EXPECT_NE(r.message.find("boom at"), std::string::npos) << r.message;
  EXPECT_GT(r.row_count, 0u);
  EXPECT_LT(r.row_count, 1000000u);
  client->set_keep_rows(true);
  // The error is the session's diagnostics, and the connection carries on.
  Response warnings = One(*client, "SHOW WARNINGS");
  ASSERT_EQ(warnings.rows.size(), 1u);
  EXPECT_NE(warnings.rows[0][2]->find("boom at"), std::string::npos);
  EXPECT_EQ(One(*client, "SELECT 1").rows.size(), 1u);
}

// An error echoes the client's own text as it is: masking registered secrets there would
// answer "yes, that is someone's secret" to a client that guesses one.
TEST(SessionTest, ErrorMessagesAreNoOracleForSecrets) {
  auto server = StartOrDie();
  auto client = LoginOrDie(server->port());
  Logger::Default().AddSecret("wJalrXUtnFEMI-secret");
  Response r = One(*client, "SELECT * FROM \"wJalrXUtnFEMI-secret\"");
  EXPECT_EQ(r.error_code, 1146);
  EXPECT_NE(r.message.find("wJalrXUtnFEMI-secret"), std::string::npos) << r.message;
  EXPECT_EQ(r.message.find("****"), std::string::npos) << r.message;
}

TEST(SessionTest, OversizedAndOutOfOrderPacketsCloseOnlyThatConnection) {
  MySqlServerOptions options;
  options.max_packet_size = 4096;
  auto server = StartOrDie(options);
  auto bystander = LoginOrDie(server->port());

  auto big = LoginOrDie(server->port());
  auto responses = big->Query("SELECT '" + std::string(10000, 'x') + "'");
  ASSERT_TRUE(responses.ok()) << responses.status().ToString();
  EXPECT_EQ(responses->front().error_code, 1153);
  EXPECT_TRUE(big->WaitClosed());

  auto disorder = LoginOrDie(server->port());
  disorder->sequence() = 7;
  ASSERT_TRUE(disorder->SendPacket("\x03SELECT 1").ok());
  disorder->sequence() = 1;  // the server answers the command's slot, not the bogus id
  auto reply = disorder->ReadPacket();
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(static_cast<uint8_t>((*reply)[0]), 0xff);
  EXPECT_TRUE(disorder->WaitClosed());

  EXPECT_EQ(One(*bystander, "SELECT 'still here'").rows[0][0], "still here");
  EXPECT_EQ(server->Metric("millrace_mysql_protocol_errors_total"), 2);
}

TEST(SessionTest, IdleConnectionsAreClosedAfterTheIdleTimeout) {
  MySqlServerOptions options;
  options.idle_timeout = seconds(1);
  auto server = StartOrDie(options);
  auto client = LoginOrDie(server->port());
  EXPECT_EQ(One(*client, "SELECT @@wait_timeout").rows[0][0], "1");
  EXPECT_TRUE(client->WaitClosed(seconds(10)));
  // A client that connects and never answers the greeting is dropped after the net timeout.
  options.net_timeout = seconds(1);
  auto server2 = StartOrDie(options);
  auto silent = ConnectOrDie(server2->port());
  EXPECT_TRUE(silent->WaitClosed(seconds(10)));
}

TEST(SessionTest, AClientThatStopsReadingIsDroppedWithoutBlockingOthers) {
  MySqlServerOptions options;
  options.net_timeout = seconds(1);
  auto server = StartOrDie(options);
  auto bystander = LoginOrDie(server->port());
  auto stalled = LoginOrDie(server->port());
  // ~500 MB of results that the client never reads: the server's sends stall.
  stalled->sequence() = 0;
  ASSERT_TRUE(stalled
                  ->SendPacket(std::string(1, static_cast<char>(kComQuery)) +
                               "SELECT i, repeat('x', 100) FROM range(5000000) t(i)")
                  .ok());
  EXPECT_TRUE(WaitForRunningStatement(*server));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(One(*bystander, "SELECT 'served'").rows[0][0], "served");
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5));
  EXPECT_TRUE(testing::WaitFor([&] { return server->server().active_sessions() == 1; }))
      << "the stalled session is still open";
  EXPECT_EQ(server->Metric("millrace_mysql_statements_running"), 0);
}

TEST(SessionTest, ConnectionsBeyondTheLimitAreRefusedWith1040) {
  MySqlServerOptions options;
  options.max_connections = 2;
  auto server = StartOrDie(options);
  auto a = LoginOrDie(server->port());
  auto b = LoginOrDie(server->port());
  auto c = ConnectOrDie(server->port());
  auto refused = c->ReadPacket();
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_EQ(static_cast<uint8_t>((*refused)[0]), 0xff);
  EXPECT_NE(refused->find("Too many connections"), std::string::npos);
  EXPECT_TRUE(c->WaitClosed());
  // Once one leaves, a new client gets in.
  a.reset();
  EXPECT_TRUE(testing::WaitFor([&] { return ConnectOrDie(server->port())->Handshake().ok(); }));
}

TEST(SessionTest, ShutdownLetsRunningStatementsFinishWithinTheGrace) {
  auto server = StartOrDie();
  auto idle = LoginOrDie(server->port());
  auto busy = LoginOrDie(server->port());
  // ~0.5-2 s of work.
  auto result = std::async(std::launch::async, [&] {
    return busy->Query("SELECT sum(i % 7) FROM range(300000000) t(i)");
  });
  EXPECT_TRUE(WaitForRunningStatement(*server));  // no ASSERT: the future must be joined
  server->server().Shutdown(seconds(60));
  auto responses = result.get();
  ASSERT_TRUE(responses.ok()) << responses.status().ToString();
  EXPECT_FALSE(responses->front().is_error) << responses->front().message;
  EXPECT_EQ(responses->front().rows.size(), 1u);
  EXPECT_TRUE(idle->WaitClosed(seconds(1)));
  EXPECT_TRUE(busy->WaitClosed(seconds(1)));
  EXPECT_EQ(server->server().active_sessions(), 0u);
}

TEST(SessionTest, ShutdownInterruptsStatementsThatOutliveTheGrace) {
  auto server = StartOrDie();
  auto busy = LoginOrDie(server->port());
  auto result = std::async(std::launch::async, [&] {
    return busy->Query("SELECT sum(i % 7) FROM range(1000000000000) t(i)");  // hours of work
  });
  EXPECT_TRUE(WaitForRunningStatement(*server));  // no ASSERT: the future must be joined
  const auto start = std::chrono::steady_clock::now();
  server->server().Shutdown(milliseconds(200));
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(30));
  auto responses = result.get();
  // The connection is closed; an ERR may or may not make it out first, never a result.
  if (responses.ok()) {
    EXPECT_TRUE(responses->front().is_error);
  }
  EXPECT_EQ(server->server().active_sessions(), 0u);
}

}  // namespace
}  // namespace millrace::server
