// AccessControl: users, grants and logins over a UserStore; a failed store write changes
// nothing.
#include "access/access_control.h"

#include <gtest/gtest.h>

#include "access/memory_user_store.h"
#include "access/password.h"
#include "sql/mysql_errors.h"

namespace millrace::access {
namespace {

constexpr std::string_view kScramble = "abcdefghij0123456789";

UserIdentity User(std::string name, std::optional<std::string> host = std::nullopt) {
  return UserIdentity{std::move(name), std::move(host)};
}

UserChange Password(std::string_view password) {
  UserChange change;
  change.password_hash = NativePasswordHash(password);
  return change;
}

PrivilegeSet Privileges(std::string_view name) {
  return ParsePrivilegeName(name).value();
}

uint16_t Errno(const Status& status) {
  return sql::ClassifyError(status).code;
}

class AccessControlTest : public ::testing::Test {
 protected:
  Status Login(std::string_view user, std::string_view password, std::string_view host = "10.0.0.1",
               bool secure = false) {
    return access_.Authenticate(user, host, kScramble, NativePasswordResponse(password, kScramble),
                                secure);
  }

  MemoryUserStore store_;
  AccessControl access_{&store_, "root-pw"};
};

TEST_F(AccessControlTest, RootIsBuiltInWithItsStartPassword) {
  ASSERT_TRUE(access_.Load().ok());
  EXPECT_TRUE(access_.UserExists("root"));
  EXPECT_TRUE(access_.IsAdmin("root"));
  EXPECT_TRUE(access_.Has("root", Privilege::kDrop, "any", "table"));
  EXPECT_TRUE(access_.HasAny("root", "any", ""));
  EXPECT_TRUE(Login("root", "root-pw").ok());
  const Status wrong = Login("root", "nope");
  EXPECT_EQ(Errno(wrong), sql::kErAccessDenied);
  EXPECT_EQ(wrong.message(), "Access denied for user 'root'@'10.0.0.1' (using password: YES)");
  EXPECT_EQ(Login("root", "").message(),
            "Access denied for user 'root'@'10.0.0.1' (using password: NO)");
  ASSERT_EQ(access_.GrantsOf("root").size(), 1u);
  EXPECT_EQ(access_.GrantsOf("root")[0].privileges, PrivilegeSet::All());
  EXPECT_TRUE(access_.GrantsOf("root")[0].object.global());
  EXPECT_EQ(access_.FindUser("root")->password_hash, NativePasswordHash("root-pw"));

  // root cannot be created, altered, dropped, granted or revoked; nor can 'ROOT'.
  for (const Status& refused :
       {access_.CreateUser(User("root"), {}, false), access_.CreateUser(User("ROOT"), {}, true),
        access_.AlterUser(User("root"), Password("x")),
        access_.AlterUser(User("root"), Password("x"), "SET PASSWORD"),
        access_.DropUser(User("root", "%"), true),
        access_.GrantPrivileges(User("root"), {}, Privileges("SELECT")),
        access_.RevokePrivileges(User("root"), {}, Privileges("ADMIN"))}) {
    EXPECT_EQ(Errno(refused), sql::kErCannotUser) << refused.ToString();
    EXPECT_NE(refused.message().find("root is built in"), std::string::npos) << refused.message();
  }
  EXPECT_EQ(store_.writes, 0);
  EXPECT_TRUE(Login("root", "root-pw").ok());
}

TEST_F(AccessControlTest, UsersLogInWithTheirPasswordFromTheirHost) {
  ASSERT_TRUE(access_.CreateUser(User("bob"), Password("b0b-pw"), false).ok());
  UserChange local = Password("amy-pw");
  ASSERT_TRUE(access_.CreateUser(User("amy", "localhost"), local, false).ok());
  ASSERT_TRUE(access_.CreateUser(User("ann", "10.0.0.7"), {}, false).ok());

  EXPECT_TRUE(Login("bob", "b0b-pw").ok());
  EXPECT_TRUE(Login("bob", "b0b-pw", "192.168.1.1").ok());
  EXPECT_EQ(Errno(Login("bob", "B0B-pw")), sql::kErAccessDenied);
  EXPECT_EQ(Errno(Login("bob", "")), sql::kErAccessDenied);
  EXPECT_EQ(Errno(Login("nobody", "b0b-pw")), sql::kErAccessDenied);
  EXPECT_EQ(Login("nobody", "x").message(),
            "Access denied for user 'nobody'@'10.0.0.1' (using password: YES)");
  // Names are case-sensitive.
  EXPECT_EQ(Errno(Login("BOB", "b0b-pw")), sql::kErAccessDenied);
  // localhost matches the loopback addresses only.
  EXPECT_TRUE(Login("amy", "amy-pw", "127.0.0.1").ok());
  EXPECT_TRUE(Login("amy", "amy-pw", "::1").ok());
  EXPECT_EQ(Errno(Login("amy", "amy-pw", "10.0.0.1")), sql::kErAccessDenied);
  // No password: an empty answer, and only from the user's host.
  EXPECT_TRUE(Login("ann", "", "10.0.0.7").ok());
  EXPECT_EQ(Errno(Login("ann", "", "10.0.0.8")), sql::kErAccessDenied);
  EXPECT_EQ(Errno(Login("ann", "guess", "10.0.0.7")), sql::kErAccessDenied);
}

TEST_F(AccessControlTest, RequireSslRefusesPlainConnections) {
  UserChange change = Password("pw");
  change.require_ssl = true;
  ASSERT_TRUE(access_.CreateUser(User("tls"), change, false).ok());
  EXPECT_EQ(Errno(Login("tls", "pw")), sql::kErAccessDenied);
  EXPECT_TRUE(Login("tls", "pw", "10.0.0.1", /*secure=*/true).ok());
  UserChange none;
  none.require_ssl = false;
  ASSERT_TRUE(access_.AlterUser(User("tls"), none).ok());
  EXPECT_TRUE(Login("tls", "pw").ok());
}

TEST_F(AccessControlTest, CreateAlterAndDrop) {
  ASSERT_TRUE(access_.CreateUser(User("bob", "%"), Password("one"), false).ok());
  // A name is unique whatever its host.
  EXPECT_EQ(Errno(access_.CreateUser(User("bob", "localhost"), {}, false)), sql::kErCannotUser);
  EXPECT_EQ(access_.CreateUser(User("bob"), {}, false).message(),
            "Operation CREATE USER failed for 'bob'@'%'");
  EXPECT_TRUE(access_.CreateUser(User("bob"), Password("two"), true).ok());
  EXPECT_TRUE(Login("bob", "one").ok());  // IF NOT EXISTS left it as it was
  EXPECT_EQ(Errno(access_.CreateUser(User("pat", "10.%"), {}, false)), sql::kErCannotUser);

  ASSERT_TRUE(access_.AlterUser(User("bob"), Password("two")).ok());
  EXPECT_TRUE(Login("bob", "two").ok());
  EXPECT_FALSE(Login("bob", "one").ok());
  UserChange limit;
  limit.max_user_connections = 3;
  ASSERT_TRUE(access_.AlterUser(User("bob", "%"), limit).ok());
  EXPECT_EQ(access_.FindUser("bob")->max_user_connections, 3);
  EXPECT_TRUE(Login("bob", "two").ok());  // the password stayed
  // A host that is not the user's names nobody.
  EXPECT_EQ(Errno(access_.AlterUser(User("bob", "localhost"), limit)), sql::kErCannotUser);
  EXPECT_EQ(Errno(access_.AlterUser(User("nobody"), limit)), sql::kErCannotUser);
  EXPECT_EQ(Errno(access_.AlterUser(User("nobody"), Password("x"), "SET PASSWORD")),
            sql::kErPasswordNoMatch);

  ASSERT_TRUE(access_.GrantPrivileges(User("bob"), {"shop", ""}, Privileges("SELECT")).ok());
  EXPECT_EQ(Errno(access_.DropUser(User("bob", "localhost"), false)), sql::kErCannotUser);
  ASSERT_TRUE(access_.DropUser(User("bob"), false).ok());
  EXPECT_FALSE(access_.UserExists("bob"));
  EXPECT_FALSE(access_.Has("bob", Privilege::kSelect, "shop", "t"));
  EXPECT_EQ(Errno(Login("bob", "two")), sql::kErAccessDenied);
  EXPECT_EQ(Errno(access_.DropUser(User("bob"), false)), sql::kErCannotUser);
  EXPECT_TRUE(access_.DropUser(User("bob"), true).ok());
  // Re-created, it has no grants left over.
  ASSERT_TRUE(access_.CreateUser(User("bob"), {}, false).ok());
  EXPECT_TRUE(access_.GrantsOf("bob").empty());
}

TEST_F(AccessControlTest, GrantsHoldAtTheirLevelAndBelow) {
  ASSERT_TRUE(access_.CreateUser(User("ana"), {}, false).ok());
  ASSERT_TRUE(access_.GrantPrivileges(User("ana"), {"Shop", "Orders"}, Privileges("LOAD")).ok());
  ASSERT_TRUE(access_.GrantPrivileges(User("ana"), {"shop", ""}, Privileges("SELECT")).ok());
  ASSERT_TRUE(access_.GrantPrivileges(User("ana"), {}, Privileges("CREATE")).ok());

  EXPECT_TRUE(access_.Has("ana", Privilege::kLoad, "shop", "orders"));
  EXPECT_FALSE(access_.Has("ana", Privilege::kLoad, "shop", "items"));
  EXPECT_FALSE(access_.Has("ana", Privilege::kLoad, "shop", ""));
  EXPECT_TRUE(access_.Has("ana", Privilege::kSelect, "SHOP", "items"));
  EXPECT_TRUE(access_.Has("ana", Privilege::kSelect, "shop", ""));
  EXPECT_FALSE(access_.Has("ana", Privilege::kSelect, "other", "t"));
  EXPECT_TRUE(access_.Has("ana", Privilege::kCreate, "other", "t"));
  EXPECT_TRUE(access_.Has("ana", Privilege::kCreate, "", ""));
  EXPECT_FALSE(access_.Has("ana", Privilege::kDrop, "shop", "orders"));
  EXPECT_FALSE(access_.IsAdmin("ana"));
  EXPECT_FALSE(access_.Has("nobody", Privilege::kSelect, "shop", "orders"));

  // Global first, then databases, then tables.
  const std::vector<Grant> grants = access_.GrantsOf("ana");
  ASSERT_EQ(grants.size(), 3u);
  EXPECT_EQ(grants[0].object.ToString(), "*.*");
  EXPECT_EQ(grants[1].object.ToString(), "shop.*");
  EXPECT_EQ(grants[2].object.ToString(), "Shop.Orders");
  EXPECT_EQ(grants[2].privileges, Privileges("LOAD"));

  // A second grant on the same object, spelled in another case, adds to it.
  ASSERT_TRUE(access_.GrantPrivileges(User("ana"), {"SHOP", "ORDERS"}, Privileges("ALTER")).ok());
  ASSERT_EQ(access_.GrantsOf("ana").size(), 3u);
  EXPECT_EQ(access_.GrantsOf("ana")[2].object.ToString(), "Shop.Orders");
  EXPECT_EQ(PrivilegeNames(access_.GrantsOf("ana")[2].privileges), "LOAD_PRIV,ALTER_PRIV");
  const int writes = store_.writes;
  ASSERT_TRUE(access_.GrantPrivileges(User("ana"), {"shop", "orders"}, Privileges("LOAD")).ok());
  EXPECT_EQ(store_.writes, writes);  // nothing new to write

  // ADMIN_PRIV on *.* implies every privilege everywhere, and only there can it be granted.
  EXPECT_EQ(Errno(access_.GrantPrivileges(User("ana"), {"shop", ""}, Privileges("ADMIN_PRIV"))),
            sql::kErWrongUsage);
  ASSERT_TRUE(access_.GrantPrivileges(User("ana"), {}, Privileges("ADMIN_PRIV")).ok());
  EXPECT_TRUE(access_.IsAdmin("ana"));
  EXPECT_TRUE(access_.Has("ana", Privilege::kDrop, "any", "thing"));
  EXPECT_EQ(Errno(access_.GrantPrivileges(User("nobody"), {}, Privileges("SELECT"))),
            sql::kErCantCreateUserWithGrant);
}

TEST_F(AccessControlTest, HasAnyListsWhatAUserCanSee) {
  ASSERT_TRUE(access_.CreateUser(User("tim"), {}, false).ok());
  ASSERT_TRUE(access_.GrantPrivileges(User("tim"), {"shop", "orders"}, Privileges("SELECT")).ok());
  EXPECT_TRUE(access_.HasAny("tim", "shop", ""));  // a table's grant shows its database
  EXPECT_TRUE(access_.HasAny("tim", "SHOP", "Orders"));
  EXPECT_FALSE(access_.HasAny("tim", "shop", "items"));
  EXPECT_FALSE(access_.HasAny("tim", "other", ""));
  EXPECT_FALSE(access_.HasAny("tim", "", ""));
  ASSERT_TRUE(access_.GrantPrivileges(User("tim"), {"other", ""}, Privileges("DROP")).ok());
  EXPECT_TRUE(access_.HasAny("tim", "other", "anything"));
  EXPECT_FALSE(access_.HasAny("nobody", "shop", ""));
}

TEST_F(AccessControlTest, RevokeRemovesWhatIsHeld) {
  ASSERT_TRUE(access_.CreateUser(User("ray"), {}, false).ok());
  ASSERT_TRUE(access_.GrantPrivileges(User("ray"), {"shop", ""}, Privileges("ALL")).ok());
  ASSERT_TRUE(access_.RevokePrivileges(User("ray"), {"SHOP", ""}, Privileges("LOAD")).ok());
  EXPECT_FALSE(access_.Has("ray", Privilege::kLoad, "shop", "t"));
  EXPECT_TRUE(access_.Has("ray", Privilege::kSelect, "shop", "t"));
  // Revoking what is not held on a granted object is fine; an object never granted is not.
  EXPECT_TRUE(access_.RevokePrivileges(User("ray"), {"shop", ""}, Privileges("ADMIN")).ok());
  const Status none = access_.RevokePrivileges(User("ray"), {"shop", "t"}, Privileges("SELECT"));
  EXPECT_EQ(Errno(none), sql::kErNonexistingGrant);
  EXPECT_EQ(none.message(), "There is no such grant defined for user 'ray' on host '%'");
  EXPECT_EQ(Errno(access_.RevokePrivileges(User("nobody"), {}, Privileges("SELECT"))),
            sql::kErNonexistingGrant);
  ASSERT_TRUE(access_.RevokePrivileges(User("ray"), {"shop", ""}, Privileges("ALL")).ok());
  EXPECT_TRUE(access_.GrantsOf("ray").empty());
  EXPECT_FALSE(access_.HasAny("ray", "shop", ""));
}

TEST_F(AccessControlTest, AFailingStoreWriteChangesNothing) {
  ASSERT_TRUE(access_.CreateUser(User("eve"), Password("old"), false).ok());
  ASSERT_TRUE(access_.GrantPrivileges(User("eve"), {"shop", ""}, Privileges("SELECT")).ok());
  store_.fail_writes = true;

  UserChange change = Password("new");
  change.require_ssl = true;
  for (const Status& failed :
       {access_.CreateUser(User("mal"), Password("x"), false),
        access_.AlterUser(User("eve"), change),
        access_.AlterUser(User("eve"), Password("new"), "SET PASSWORD"),
        access_.DropUser(User("eve"), false),
        access_.GrantPrivileges(User("eve"), {}, Privileges("ADMIN")),
        access_.RevokePrivileges(User("eve"), {"shop", ""}, Privileges("SELECT"))}) {
    EXPECT_EQ(failed.code(), StatusCode::kIoError) << failed.ToString();
  }
  EXPECT_FALSE(access_.UserExists("mal"));
  EXPECT_TRUE(Login("eve", "old").ok());
  EXPECT_FALSE(access_.FindUser("eve")->require_ssl);
  EXPECT_TRUE(access_.Has("eve", Privilege::kSelect, "shop", "t"));
  EXPECT_FALSE(access_.IsAdmin("eve"));

  // What memory holds is what the store holds: a reload changes nothing.
  store_.fail_writes = false;
  ASSERT_TRUE(access_.Load().ok());
  EXPECT_FALSE(access_.UserExists("mal"));
  EXPECT_TRUE(Login("eve", "old").ok());
  EXPECT_TRUE(access_.Has("eve", Privilege::kSelect, "shop", "t"));
  EXPECT_FALSE(access_.IsAdmin("eve"));
}

TEST_F(AccessControlTest, LoadReadsWhatAnotherInstanceWrote) {
  UserChange change = Password("pw");
  change.max_user_connections = 2;
  ASSERT_TRUE(access_.CreateUser(User("kim", "localhost"), change, false).ok());
  ASSERT_TRUE(access_.GrantPrivileges(User("kim"), {"shop", "t"}, Privileges("LOAD")).ok());
  AccessControl restarted(&store_, "other-root-pw");
  ASSERT_TRUE(restarted.Load().ok());
  const std::optional<UserRecord> kim = restarted.FindUser("kim");
  ASSERT_TRUE(kim.has_value());
  EXPECT_EQ(kim->host, "localhost");
  EXPECT_EQ(kim->max_user_connections, 2);
  EXPECT_GT(kim->created_at_us, 0);
  EXPECT_TRUE(restarted.Has("kim", Privilege::kLoad, "shop", "t"));
  EXPECT_TRUE(restarted
                  .Authenticate("kim", "127.0.0.1", kScramble,
                                NativePasswordResponse("pw", kScramble), false)
                  .ok());
  // root's password is the new one given at start.
  EXPECT_TRUE(restarted
                  .Authenticate("root", "h", kScramble,
                                NativePasswordResponse("other-root-pw", kScramble), false)
                  .ok());
  const std::vector<UserRecord> users = restarted.Users();
  ASSERT_EQ(users.size(), 2u);
  EXPECT_EQ(users[0].name, "root");
  EXPECT_EQ(users[1].name, "kim");
}

TEST_F(AccessControlTest, MaxUserConnectionsCapsAUsersSessions) {
  UserChange change;
  change.max_user_connections = 2;
  ASSERT_TRUE(access_.CreateUser(User("cap"), change, false).ok());
  ASSERT_TRUE(access_.CreateUser(User("free"), {}, false).ok());
  EXPECT_TRUE(access_.AcquireConnection("cap").ok());
  EXPECT_TRUE(access_.AcquireConnection("cap").ok());
  const Status third = access_.AcquireConnection("cap");
  EXPECT_EQ(Errno(third), sql::kErTooManyUserConnections);
  access_.ReleaseConnection("cap");
  EXPECT_TRUE(access_.AcquireConnection("cap").ok());
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(access_.AcquireConnection("free").ok());
    EXPECT_TRUE(access_.AcquireConnection("root").ok());
  }
}

}  // namespace
}  // namespace millrace::access
