// Privilege names, MySQL's aliases, and what a grant's object covers.
#include "access/privilege.h"

#include <gtest/gtest.h>

namespace millrace::access {
namespace {

PrivilegeSet Set(std::initializer_list<Privilege> privileges) {
  PrivilegeSet set;
  for (Privilege p : privileges)
    set.Add(p);
  return set;
}

TEST(PrivilegeTest, DorisNamesRoundTrip) {
  for (Privilege p : {Privilege::kSelect, Privilege::kLoad, Privilege::kAlter, Privilege::kCreate,
                      Privilege::kDrop, Privilege::kAdmin}) {
    EXPECT_EQ(ParsePrivilegeName(PrivilegeName(p)), Set({p})) << PrivilegeName(p);
  }
  EXPECT_EQ(PrivilegeName(Privilege::kLoad), "LOAD_PRIV");
  EXPECT_EQ(ParsePrivilegeName("select_priv"), Set({Privilege::kSelect}));
  EXPECT_EQ(PrivilegeNames(Set({Privilege::kAdmin, Privilege::kSelect, Privilege::kLoad})),
            "SELECT_PRIV,LOAD_PRIV,ADMIN_PRIV");
  EXPECT_EQ(PrivilegeNames(PrivilegeSet()), "");
  EXPECT_EQ(PrivilegeNames(PrivilegeSet::All()),
            "SELECT_PRIV,LOAD_PRIV,ALTER_PRIV,CREATE_PRIV,DROP_PRIV,ADMIN_PRIV");
}

TEST(PrivilegeTest, MySqlNamesAreAliases) {
  EXPECT_EQ(ParsePrivilegeName("SELECT"), Set({Privilege::kSelect}));
  for (const char* name : {"INSERT", "update", "Delete", "LOAD"})
    EXPECT_EQ(ParsePrivilegeName(name), Set({Privilege::kLoad})) << name;
  EXPECT_EQ(ParsePrivilegeName("ALTER"), Set({Privilege::kAlter}));
  EXPECT_EQ(ParsePrivilegeName("CREATE"), Set({Privilege::kCreate}));
  EXPECT_EQ(ParsePrivilegeName("create   view"), Set({Privilege::kCreate}));
  EXPECT_EQ(ParsePrivilegeName("DROP"), Set({Privilege::kDrop}));
  for (const char* name : {"ADMIN", "SUPER", "GRANT OPTION"})
    EXPECT_EQ(ParsePrivilegeName(name), Set({Privilege::kAdmin})) << name;
  // ALL is everything but ADMIN_PRIV, as MySQL's ALL leaves out GRANT OPTION.
  const PrivilegeSet all = Set({Privilege::kSelect, Privilege::kLoad, Privilege::kAlter,
                                Privilege::kCreate, Privilege::kDrop});
  EXPECT_EQ(ParsePrivilegeName("ALL"), all);
  EXPECT_EQ(ParsePrivilegeName(" all privileges "), all);
  EXPECT_EQ(ParsePrivilegeName("USAGE"), PrivilegeSet());
  for (const char* name : {"", "SELECTS", "NODE_PRIV", "ALLPRIVILEGES", "EXECUTE"})
    EXPECT_EQ(ParsePrivilegeName(name), std::nullopt) << name;
}

TEST(GrantObjectTest, NamesItsLevel) {
  EXPECT_EQ(GrantObject{}.ToString(), "*.*");
  EXPECT_EQ((GrantObject{"shop", ""}).ToString(), "shop.*");
  EXPECT_EQ((GrantObject{"shop", "Orders"}).ToString(), "shop.Orders");
  EXPECT_TRUE(GrantObject{}.global());
  EXPECT_FALSE((GrantObject{"shop", ""}).global());
}

TEST(GrantObjectTest, ALevelCoversWhatIsBelowIt) {
  const GrantObject global;
  const GrantObject database{"Shop", ""};
  const GrantObject table{"shop", "Orders"};
  // *.* covers everything, the server itself included.
  EXPECT_TRUE(global.Covers("", ""));
  EXPECT_TRUE(global.Covers("shop", ""));
  EXPECT_TRUE(global.Covers("other", "t"));
  // db.* covers the database and its tables, case-insensitively.
  EXPECT_TRUE(database.Covers("shop", ""));
  EXPECT_TRUE(database.Covers("SHOP", "anything"));
  EXPECT_FALSE(database.Covers("shop2", "t"));
  EXPECT_FALSE(database.Covers("", ""));
  // db.tbl covers that table only, not its database.
  EXPECT_TRUE(table.Covers("SHOP", "orders"));
  EXPECT_FALSE(table.Covers("shop", ""));
  EXPECT_FALSE(table.Covers("shop", "orders2"));
  EXPECT_FALSE(table.Covers("other", "orders"));
  EXPECT_TRUE(table.SameAs(GrantObject{"SHOP", "ORDERS"}));
  EXPECT_FALSE(table.SameAs(database));
}

// An external catalog's objects (ctl.*.*, ctl.db.*, ctl.db.tbl) cover only what is in that
// catalog; *.* covers them too; no grant of the embedded catalog reaches them.
TEST(GrantObjectTest, ACatalogsObjectsCoverOnlyThatCatalog) {
  const GrantObject catalog{"", "", "pg"};
  const GrantObject schema{"public", "", "pg"};
  const GrantObject table{"public", "events", "PG"};
  EXPECT_EQ(catalog.ToString(), "pg.*.*");
  EXPECT_EQ(schema.ToString(), "pg.public.*");
  EXPECT_EQ(table.ToString(), "PG.public.events");
  EXPECT_FALSE(catalog.global());
  // ctl.*.* covers the catalog and all in it, never the server or the embedded databases.
  EXPECT_TRUE(catalog.CoversIn("PG", "", ""));
  EXPECT_TRUE(catalog.CoversIn("pg", "public", "events"));
  EXPECT_FALSE(catalog.CoversIn("pg2", "public", "events"));
  EXPECT_FALSE(catalog.Covers("", ""));
  EXPECT_FALSE(catalog.Covers("public", "events"));
  EXPECT_TRUE(schema.CoversIn("pg", "PUBLIC", "t"));
  EXPECT_FALSE(schema.CoversIn("pg", "", ""));
  EXPECT_FALSE(schema.Covers("public", "t"));
  EXPECT_TRUE(table.CoversIn("pg", "public", "EVENTS"));
  EXPECT_FALSE(table.CoversIn("pg", "public", ""));
  EXPECT_FALSE(table.Covers("public", "events"));
  // *.* covers every catalog; the same names in the embedded catalog are another object.
  EXPECT_TRUE(GrantObject{}.CoversIn("pg", "", ""));
  EXPECT_FALSE((GrantObject{"public", "events"}).CoversIn("pg", "public", "events"));
  EXPECT_FALSE(table.SameAs(GrantObject{"public", "events"}));
  EXPECT_TRUE(table.SameAs(GrantObject{"PUBLIC", "Events", "pg"}));
}

}  // namespace
}  // namespace millrace::access
