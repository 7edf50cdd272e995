// Test support for the suites of the test servers (PostgresServer, MariadbServer): one server
// shared by a suite, and statements from several threads at once.
//
// Contract
// - SharedServerTest<Server>: Server::Start() runs once for the suite (SetUpTestSuite) and the
//   server is destroyed in TearDownTestSuite; server_ is it. When it did not start, the start
//   error is reported once and every test of the suite fails at SetUp.
// - RunOnThreads runs body(thread, n) for n = 0 .. each - 1 on `threads` threads at once; a
//   thread stops at its first error. It returns one status a thread.
// - ExpectPasswordChecked: `client(password, sql)` (a server's command-line client logging in
//   as its test user) runs SELECT 42 with the right password and is refused, exiting with
//   `refused_exit_code` and `refusal` on stderr, with a wrong one.
// - ExpectSqlStopsAtFirstError: given a table `items` in database `shop` holding the rows 1, 2
//   and 3 of its key `id`, server.Sql fails with INTERNAL and `duplicate` in the message on a
//   script inserting id 1 and then id 4, which it does not insert; and with UNAVAILABLE in a
//   database that does not exist.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "testing/server_process.h"

namespace millrace::testing {

template <typename Server>
class SharedServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto started = Server::Start();
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server_ = std::move(started).value();
  }
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override { ASSERT_NE(server_, nullptr) << "the server did not start"; }

  static inline std::unique_ptr<Server> server_;
};

inline std::vector<Status> RunOnThreads(int threads, int each,
                                        const std::function<Status(int thread, int n)>& body) {
  std::vector<Status> results(static_cast<size_t>(threads));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int n = 0; n < each && results[t].ok(); ++n)
        results[t] = body(t, n);
    });
  }
  for (std::thread& worker : workers)
    worker.join();
  return results;
}

using LoginClient =
    std::function<Result<ProcessResult>(const std::string& password, const std::string& sql)>;

inline void ExpectPasswordChecked(const LoginClient& client, const std::string& password,
                                  int refused_exit_code, const std::string& refusal) {
  auto good = client(password, "SELECT 42");
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->exit_code, 0) << good->err;
  EXPECT_EQ(good->out, "42\n");

  auto wrong = client("not-the-password", "SELECT 42");
  ASSERT_TRUE(wrong.ok()) << wrong.status().ToString();
  EXPECT_EQ(wrong->exit_code, refused_exit_code);
  EXPECT_NE(wrong->err.find(refusal), std::string::npos) << wrong->err;
  EXPECT_EQ(wrong->out, "");
}

template <typename Server>
void ExpectSqlStopsAtFirstError(const Server& server, const std::string& duplicate) {
  auto failed = server.Sql(
      "INSERT INTO items VALUES (1, 'again');\nINSERT INTO items VALUES (4, 'never');", "shop");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kInternal) << failed.status().ToString();
  EXPECT_NE(failed.status().message().find(duplicate), std::string::npos)
      << failed.status().ToString();
  auto count = server.Sql("SELECT count(*) FROM items", "shop");
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  EXPECT_EQ(*count, "3");

  auto missing = server.Sql("SELECT 1", "no_such_database");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kUnavailable) << missing.status().ToString();
}

}  // namespace millrace::testing
