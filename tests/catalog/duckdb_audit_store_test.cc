// The DuckDB catalog as the audit log's store (access::AuditStore): events kept in order, the
// newest `keep` only, and the log read back newest first.
#include <gtest/gtest.h>

#include "catalog/catalog_version.h"
#include "catalog/duckdb_catalog.h"
#include "engine/engine_test_util.h"
#include "testing/temp_dir.h"

namespace millrace::catalog {
namespace {

access::AuditEvent Event(int i) {
  return access::AuditEvent{1000 + i,
                            "u" + std::to_string(i),
                            "10.0.0.1",
                            "DDL",
                            "CREATE TABLE d.t" + std::to_string(i),
                            "CREATE TABLE d.t" + std::to_string(i) + " (a INT)",
                            i % 2 == 0 ? "" : "denied"};
}

TEST(SqlAuditStoreTest, KeepsTheNewestEventsInOrder) {
  testing::TempDir dir;
  auto db = engine::OpenOrDie({.path = dir.Join("db.duckdb")});
  DuckDbCatalog store(db.get(), "test");
  ASSERT_TRUE(store.Open().ok());
  for (int i = 0; i < 7; ++i)
    ASSERT_TRUE(store.audit()->AppendAudit(Event(i), /*keep=*/3).ok());
  auto events = store.audit()->LoadAudit(100, access::AuditStore::kFromNewest);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  ASSERT_EQ(events->size(), 3u);
  for (int k = 0; k < 3; ++k) {
    const access::AuditEvent want = Event(6 - k);
    const access::AuditEvent& got = (*events)[k];
    EXPECT_EQ(got.time_us, want.time_us);
    EXPECT_EQ(got.user, want.user);
    EXPECT_EQ(got.host, want.host);
    EXPECT_EQ(got.kind, want.kind);
    EXPECT_EQ(got.action, want.action);
    EXPECT_EQ(got.statement, want.statement);
    EXPECT_EQ(got.error, want.error);
  }
  auto newest = store.audit()->LoadAudit(1, access::AuditStore::kFromNewest);
  ASSERT_TRUE(newest.ok());
  ASSERT_EQ(newest->size(), 1u);
  EXPECT_EQ((*newest)[0].user, "u6");
  // Keyset pages: below a seq, newest first, each event once.
  auto older = store.audit()->LoadAudit(1, (*newest)[0].seq);
  ASSERT_TRUE(older.ok());
  ASSERT_EQ(older->size(), 1u);
  EXPECT_EQ((*older)[0].user, "u5");
  auto rest = store.audit()->LoadAudit(10, (*older)[0].seq);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].user, "u4");
  EXPECT_TRUE(store.audit()->LoadAudit(10, (*rest)[0].seq).value().empty());
}

TEST(SqlAuditStoreTest, AVersion3CatalogGainsTheAuditTable) {
  testing::TempDir dir;
  auto db = engine::OpenOrDie({.path = dir.Join("db.duckdb")});
  {
    DuckDbCatalog store(db.get(), "test");
    ASSERT_TRUE(store.Open().ok());
  }
  auto conn = engine::ConnectOrDie(*db);
  ASSERT_TRUE(conn->Execute("DROP TABLE __millrace.audit; DROP SEQUENCE __millrace.audit_seq; "
                            "DROP TABLE __millrace.table_models; DROP TABLE "
                            "__millrace.load_labels; DROP TABLE __millrace.reading; "
                            "DROP TABLE __millrace.external_catalogs; "
                            "ALTER TABLE __millrace.files DROP COLUMN reason; "
                            "UPDATE __millrace.catalog_version SET version = 3")
                  .ok());
  DuckDbCatalog store(db.get(), "test");
  ASSERT_EQ(store.StoredVersion().value(), 3);
  ASSERT_TRUE(store.Open().ok());
  EXPECT_EQ(store.StoredVersion().value(), kCatalogVersion);
  ASSERT_TRUE(store.audit()->AppendAudit(Event(0), 10).ok());
  EXPECT_EQ(store.audit()->LoadAudit(10, access::AuditStore::kFromNewest).value().size(), 1u);
}

}  // namespace
}  // namespace millrace::catalog
