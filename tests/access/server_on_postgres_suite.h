// Test support: one real PostgreSQL 15 for a suite (testing::PostgresSuite) and, per test, a
// real `millrace serve` whose data directory holds an inbox its local jobs read, which a test
// kills with SIGKILL and starts again on the same directory (the PostgreSQL sink's and the
// cluster catalog's end-to-end and crash tests).
//
// Contract
// - NewDataDir makes a data directory with inbox_ (the server's --local-root).
// - Start starts the server on it with --local-root inbox_, `args` and `env` ("NAME=value");
//   a failure to start is a test failure. Kill stops it with SIGKILL, keeping the directory.
// - Exec runs `sql` as root; an error is a test failure (and no rows).
// - PgHas waits up to 60 s for public.<table> of database postgres to hold `rows` rows.
// - CreatePgCatalog makes the external catalog `pg` over the suite's PostgreSQL; WaitForCrash
//   waits for the server to die of a fail point's crash (exit code 137), then Kills it.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "access/access_e2e_util.h"
#include "testing/postgres_suite.h"
#include "testing/server_process.h"
#include "testing/temp_dir.h"
#include "testing/wait_for.h"

namespace millrace::access {

class ServerOnPostgresSuite : public testing::PostgresSuite {
 protected:
  void NewDataDir() {
    dir_ = std::make_unique<testing::TempDir>();
    inbox_ = dir_->Join("inbox");
    std::filesystem::create_directories(inbox_);
  }
  void Start(std::vector<std::string> env = {}, std::vector<std::string> args = {}) {
    args.insert(args.begin(), {"--local-root", inbox_});
    auto mr = E2EServer::Start("", std::move(args), std::move(dir_), std::move(env));
    ASSERT_TRUE(mr.ok()) << mr.status().ToString();
    mr_ = std::move(mr).value();
  }
  // kill -9 (or a crash the server made itself), keeping the data directory.
  void Kill() {
    dir_ = std::move(mr_->dir);
    mr_.reset();
  }
  Rows Exec(const std::string& sql) {
    auto rows = Query(mr_->root.get(), sql);
    EXPECT_TRUE(rows.ok()) << sql << ": " << rows.status().ToString();
    return rows.ok() ? *rows : Rows{};
  }
  // CREATE CATALOG pg over the suite's PostgreSQL, database postgres.
  void CreatePgCatalog() {
    Exec("CREATE CATALOG pg PROPERTIES ('type' = 'postgresql', 'host' = '" + pg_->host() +
         "', 'port' = '" + std::to_string(pg_->port()) + "', 'database' = 'postgres', 'user' = '" +
         pg_->user() + "', 'password' = '" + pg_->password() + "')");
  }
  // Waits for the server to die of a fail point's crash (exit code 137), then Kill.
  void WaitForCrash(const std::string& what) {
    int status = 0;
    ASSERT_TRUE(testing::WaitForExit(mr_->server->pid(), std::chrono::seconds(60), &status))
        << what << ": " << mr_->server->Log();
    EXPECT_EQ(testing::ExitCode(status), 137) << what;
    Kill();
  }
  static bool PgHas(const std::string& table, int rows) {
    return testing::WaitFor(
        [&] {
          return pg_->Sql("SELECT count(*) FROM public." + table).value_or("") ==
                 std::to_string(rows);
        },
        std::chrono::seconds(60));
  }

  std::unique_ptr<testing::TempDir> dir_;
  std::string inbox_;
  std::unique_ptr<E2EServer> mr_;
};

}  // namespace millrace::access
