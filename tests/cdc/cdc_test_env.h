// Test support of the change-data-capture tests: one real PostgreSQL 15 and one `millrace serve`
// for a test binary, and what the tests do with them (statements on either side, cdc_stream
// calls, checksum comparison, a kill -9 and restart of the server).
//
// Contract
// - Start starts PostgreSQL (testing/postgres_server.h) and the server (as root, no password,
//   --paused-check-interval 1) and creates the Millrace database `cdc`.
// - Pg runs a script on PostgreSQL and records a test failure when it fails (the result is ""
//   then). Mr returns the rows or the MySQL error as a value; MrValue the one value of a query
//   (or its error text, or "?" when the result is not one value).
// - Converge waits until the target's checksum equals the source's, and returns both; when
//   they still differ at the deadline, the second holds what helps to find out why: the
//   columns that differ, the jobs' state and offset, the tail of the server log.
// - KillMillrace kills the server with SIGKILL (as a crash would) and waits for it to exit;
//   RestartMillrace starts it again on the same data directory and logs in again. Between the
//   two the database file may be opened by the test (QueryDatabaseFile).
// - Not thread-safe, except Pg (PostgresServer::Sql is), which a writer thread may call.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "access/access_e2e_util.h"
#include "cdc/cdc_checksum.h"
#include "common/result.h"
#include "testing/postgres_server.h"

namespace millrace::cdc {

class CdcTestEnv {
 public:
  static Result<std::unique_ptr<CdcTestEnv>> Start();

  testing::PostgresServer& pg() { return *pg_; }
  access::E2EServer& mr() { return *mr_; }

  std::string Pg(const std::string& sql) const;
  Result<access::Rows> Mr(const std::string& sql) const;
  std::string MrValue(const std::string& sql) const;

  // cdc_stream(...) for public.<table> of the test server; `extra` is appended to the
  // parameters (", \"offset\" = \"latest\""), `password` replaces the right one.
  std::string Stream(const std::string& table, const std::string& extra = "",
                     const std::string& password = "") const;
  // CREATE JOB <name> ON STREAMING PROPERTIES (<properties>) DO <insert>.
  Status CreateJob(const std::string& name, const std::string& insert,
                   const std::string& properties = "\"max_interval\" = \"1\"") const;

  std::pair<std::string, std::string> Converge(
      const std::string& pg_table, const std::string& mr_table,
      const std::vector<CanonColumn>& columns,
      std::chrono::seconds timeout = std::chrono::seconds(60)) const;

  void KillMillrace();
  Status RestartMillrace();
  // The rows of `sql` run on the database file of the killed server (NULL as ""): what
  // it had committed when it died.
  Result<access::Rows> QueryDatabaseFile(const std::string& sql) const;

 private:
  std::unique_ptr<testing::PostgresServer> pg_;
  std::unique_ptr<access::E2EServer> mr_;
  std::unique_ptr<testing::TempDir> mr_dir_;  // the server's, while it is down
};

// A fixture whose tests share one CdcTestEnv, started once per suite (a binary has one suite).
class CdcEnvTest : public ::testing::Test {
 public:
  static CdcTestEnv& env() { return *env_; }

 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite() { env_.reset(); }

  static std::unique_ptr<CdcTestEnv> env_;
};

}  // namespace millrace::cdc
