// Test support: a fixture whose tests run statements through a router's sessions as clients
// do, with their rows as text or their errors. The derived fixture makes the router (over its
// own database and handlers) in SetUp, then calls Connected().
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "sql/session.h"
#include "sql/session_rows.h"

namespace millrace::sql {

class RouterTest : public ::testing::Test {
 protected:
  // The router is made: root's session opens.
  void Connected() { root_ = Connect("root"); }
  // Sessions end before the router, the router before the derived fixture's database.
  void TearDown() override {
    root_.reset();
    router_.reset();
  }

  std::unique_ptr<Session> Connect(const std::string& user) {
    auto session = router_->NewSession(SessionInfo{1, user, "127.0.0.1"});
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    return session.ok() ? std::move(session).value() : nullptr;
  }
  static Result<TextRows> Run(Session& session, std::string_view sql) {
    return SessionRows(session, sql);
  }
  // The rows of `sql` run as root (or on `session`); a test failure when it fails.
  TextRows Ok(std::string_view sql, Session* session = nullptr) {
    auto rows = Run(session != nullptr ? *session : *root_, sql);
    EXPECT_TRUE(rows.ok()) << sql << ": " << rows.status().ToString();
    return rows.ok() ? std::move(rows).value() : TextRows{};
  }
  // The error of `sql`; a test failure when it succeeds.
  Status Error(std::string_view sql, Session* session = nullptr) {
    auto rows = Run(session != nullptr ? *session : *root_, sql);
    EXPECT_FALSE(rows.ok()) << sql;
    return rows.status();
  }

  std::unique_ptr<Router> router_;
  std::unique_ptr<Session> root_;
};

}  // namespace millrace::sql
