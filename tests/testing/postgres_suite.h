// Test support: one real PostgreSQL 15 for a test suite (PostgresServer), started before its
// first test and stopped after its last, and psql over it.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "testing/postgres_server.h"

namespace millrace::testing {

class PostgresSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto pg = PostgresServer::Start();
    ASSERT_TRUE(pg.ok()) << pg.status().ToString();
    pg_ = std::move(pg).value();
  }
  static void TearDownTestSuite() { pg_.reset(); }

  // psql's output of `sql` (PostgresServer::Sql); "" after a test failure naming the error.
  static std::string Psql(const std::string& sql, const std::string& database = "postgres") {
    auto out = pg_->Sql(sql, database);
    EXPECT_TRUE(out.ok()) << sql << ": " << out.status().ToString();
    return out.ok() ? *out : "";
  }

  inline static std::unique_ptr<PostgresServer> pg_;
};

}  // namespace millrace::testing
