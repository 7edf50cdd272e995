// The job catalog as the users' store (access/user_store.h): one transaction per call, the
// password kept as its hash only, grants a privilege per row.
#include <gtest/gtest.h>

#include "access/access_control.h"
#include "access/password.h"
#include "catalog/duckdb_catalog.h"
#include "job/job_test_util.h"

namespace millrace::catalog {
namespace {

using Rows = std::vector<std::vector<std::string>>;

access::PrivilegeSet Privileges(std::string_view name) {
  return access::ParsePrivilegeName(name).value();
}

class SqlUserStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(catalog_.Open().ok()); }
  Rows Query(const std::string& sql) { return engine::QueryRows(*conn_, sql); }

  testing::TempDir dir_;
  std::unique_ptr<engine::Database> db_ = engine::OpenOrDie({.path = dir_.Join("db.duckdb")});
  DuckDbCatalog catalog_{db_.get(), "db.duckdb"};
  access::UserStore* store_ = catalog_.users();
  std::unique_ptr<engine::Connection> conn_ = engine::ConnectOrDie(*db_);
};

TEST_F(SqlUserStoreTest, UsersRoundTripWithTheirPasswordHashed) {
  access::UserRecord ann{"ann", "localhost", access::NativePasswordHash("password"), true, 4, 77};
  ASSERT_TRUE(store_->InsertUser(ann).ok());
  ASSERT_TRUE(store_->InsertUser({"bob", "%", "", false, 0, 78}).ok());
  EXPECT_EQ(store_->InsertUser(ann).code(), StatusCode::kAlreadyExists);
  // The table holds MySQL's text form of the hash; nothing else of the password.
  EXPECT_EQ(
      Query("SELECT name, host, password_hash, require_ssl, max_user_connections, "
            "created_at_us FROM __millrace.users ORDER BY name"),
      (Rows{{"ann", "localhost", "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19", "true", "4", "77"},
            {"bob", "%", "", "false", "0", "78"}}));

  ann.password_hash = access::NativePasswordHash("other");
  ann.require_ssl = false;
  ann.created_at_us = 999;  // not written
  ASSERT_TRUE(store_->UpdateUser(ann).ok());
  EXPECT_EQ(store_->UpdateUser({"nobody", "%", "", false, 0, 0}).code(), StatusCode::kNotFound);
  auto loaded = store_->LoadUsers();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->users.size(), 2u);
  EXPECT_EQ(loaded->users[0].name, "ann");
  EXPECT_EQ(loaded->users[0].password_hash, access::NativePasswordHash("other"));
  EXPECT_FALSE(loaded->users[0].require_ssl);
  EXPECT_EQ(loaded->users[0].created_at_us, 77);
  EXPECT_EQ(loaded->users[1].password_hash, "");

  ASSERT_TRUE(store_->AddGrant({"bob", {"shop", ""}, Privileges("SELECT")}).ok());
  ASSERT_TRUE(store_->DeleteUser("bob").ok());
  EXPECT_EQ(store_->DeleteUser("bob").code(), StatusCode::kNotFound);
  EXPECT_EQ(Query("SELECT count(*) FROM __millrace.grants"), (Rows{{"0"}}));
}

TEST_F(SqlUserStoreTest, GrantsAreKeptAPrivilegeAtATime) {
  ASSERT_TRUE(store_->InsertUser({"ann", "%", "", false, 0, 1}).ok());
  ASSERT_TRUE(store_->AddGrant({"ann", {"Shop", "Orders"}, Privileges("ALL")}).ok());
  // The same object in another case: rows already there are not added again.
  ASSERT_TRUE(store_->AddGrant({"ann", {"shop", "orders"}, Privileges("SELECT")}).ok());
  ASSERT_TRUE(store_->AddGrant({"ann", {}, Privileges("ADMIN")}).ok());
  EXPECT_EQ(Query("SELECT database_name, table_name, privilege FROM __millrace.grants ORDER BY "
                  "ALL"),
            (Rows{{"", "", "ADMIN_PRIV"},
                  {"Shop", "Orders", "ALTER_PRIV"},
                  {"Shop", "Orders", "CREATE_PRIV"},
                  {"Shop", "Orders", "DROP_PRIV"},
                  {"Shop", "Orders", "LOAD_PRIV"},
                  {"Shop", "Orders", "SELECT_PRIV"}}));
  ASSERT_TRUE(store_->RemoveGrant({"ann", {"SHOP", "ORDERS"}, Privileges("LOAD")}).ok());
  ASSERT_TRUE(store_->RemoveGrant({"ann", {"shop", "orders"}, Privileges("DROP")}).ok());
  auto loaded = store_->LoadUsers();
  ASSERT_TRUE(loaded.ok());
  access::PrivilegeSet on_orders;
  for (const access::Grant& grant : loaded->grants) {
    EXPECT_EQ(grant.user, "ann");
    if (!grant.object.global()) on_orders.Add(grant.privileges);
  }
  EXPECT_EQ(access::PrivilegeNames(on_orders), "SELECT_PRIV,ALTER_PRIV,CREATE_PRIV");
}

TEST_F(SqlUserStoreTest, AMalformedStoredHashIsReported) {
  ASSERT_TRUE(store_->InsertUser({"ann", "%", "", false, 0, 1}).ok());
  ASSERT_TRUE(conn_->Execute("UPDATE __millrace.users SET password_hash = 'plain'").ok());
  auto loaded = store_->LoadUsers();
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(loaded.status().message().find("plain"), std::string::npos);
}

// AccessControl over the catalog: what one server wrote, the next one reads.
TEST_F(SqlUserStoreTest, AccessControlSurvivesARestart) {
  {
    access::AccessControl access(store_, "root-pw");
    ASSERT_TRUE(access.Load().ok());
    access::UserChange change;
    change.password_hash = access::NativePasswordHash("s3cret-pw");
    ASSERT_TRUE(access.CreateUser({"kim", std::nullopt}, change, false).ok());
    ASSERT_TRUE(
        access.GrantPrivileges({"kim", std::nullopt}, {"shop", ""}, Privileges("LOAD")).ok());
  }
  access::AccessControl restarted(store_, "root-pw");
  ASSERT_TRUE(restarted.Load().ok());
  EXPECT_TRUE(restarted.Has("kim", access::Privilege::kLoad, "shop", "t"));
  const std::string scramble = "abcdefghij0123456789";
  EXPECT_TRUE(restarted
                  .Authenticate("kim", "10.1.1.1", scramble,
                                access::NativePasswordResponse("s3cret-pw", scramble), false)
                  .ok());
  // The password itself is nowhere in the catalog.
  EXPECT_EQ(Query("SELECT count(*) FROM __millrace.users WHERE password_hash LIKE '%s3cret%'"),
            (Rows{{"0"}}));
}

}  // namespace
}  // namespace millrace::catalog
