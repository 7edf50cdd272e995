// A change batch staged ahead of its load (ChangeBatch::Prepare, on the read ahead's thread)
// writes what the same batch staged by Load writes, on every attempt: a retried task's Load
// publishes the staged rows on its new transaction's connection.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "catalog/duckdb_sink.h"
#include "cdc/change_batch.h"
#include "cdc/staged_run.h"
#include "engine/database.h"

namespace millrace::cdc {
namespace {

change::TupleValue Text(std::string text) {
  return change::TupleValue{change::TupleValue::Kind::kText, std::move(text)};
}

class ChangeBatchPrepareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = engine::Database::Open({});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    ASSERT_TRUE(RegisterStagedRuns(*db_).ok());
    auto conn = db_->Connect();
    ASSERT_TRUE(conn.ok());
    ASSERT_TRUE((*conn)->Execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR)").ok());
    sink_ = std::make_unique<catalog::DuckDbSink>(std::move(conn).value());

    TableBinding binding;
    binding.table.schema = "public";
    binding.table.name = "t";
    binding.table.columns = {{.name = "id", .type_name = "int4", .mapping = {"INTEGER", "INT"}},
                             {.name = "v", .type_name = "text", .mapping = {"VARCHAR", "STRING"}}};
    binding.table.key = {0};
    binding.target.table = "t";
    binding.target.columns = {"id", "v"};
    binding.target.def.name = "t";
    binding.target.def.model = table::TableModel::kUnique;
    binding.target.def.keys = {"id"};
    binding.target.def.columns = {{.name = "id", .doris_type = "int", .duckdb_type = "INTEGER"},
                                  {.name = "v", .doris_type = "string", .duckdb_type = "VARCHAR"}};
    binding.target.select_sql = "SELECT id, v FROM " + std::string(kSourceName);
    tables_ = {binding};
  }

  // Inserts of ids 1..3, an update of 2 and a delete of 3, in one run.
  std::unique_ptr<ChangeBatch> Batch() {
    std::vector<Change> changes;
    for (int id = 1; id <= 3; ++id)
      changes.push_back({Change::Kind::kUpsert, {Text(std::to_string(id)), Text("v")}, {}, 0, 0});
    changes.push_back({Change::Kind::kUpsert, {Text("2"), Text("new")}, {}, 0, 0});
    changes.push_back({Change::Kind::kDelete, {Text("3"), {}}, {}, 0, 0});
    ChangeBatch::Shapes shapes = {{std::make_shared<const SourceTable>(tables_[0].table)}};
    return std::make_unique<ChangeBatch>(job::Offset(), job::Offset().With("lsn", "1"), "", "",
                                         std::move(changes), 0, &tables_, shapes,
                                         /*sync_targets=*/false, /*make_targets=*/false);
  }

  std::vector<std::vector<std::string>> Rows() {
    auto conn = db_->Connect();
    EXPECT_TRUE(conn.ok());
    auto rows = engine::QueryTextRows(**conn, "SELECT id, v FROM t ORDER BY id");
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : std::vector<std::vector<std::string>>{};
  }

  std::unique_ptr<engine::Database> db_;
  std::unique_ptr<catalog::DuckDbSink> sink_;
  std::vector<TableBinding> tables_;
  const std::vector<std::vector<std::string>> want_ = {{"1", "v"}, {"2", "new"}};
};

TEST_F(ChangeBatchPrepareTest, APreparedBatchWritesAsOneStagedByLoadOnEveryAttempt) {
  std::unique_ptr<ChangeBatch> batch = Batch();
  // Staged on another thread, as the read ahead does.
  std::thread([&] { batch->Prepare(); }).join();
  {
    // The first attempt's transaction is dropped (a failed commit).
    auto first = batch->Load(*sink_, job::TaskContext{}, 0);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
  }
  EXPECT_TRUE(Rows().empty());
  // The retry's transaction begins on the sink again and reads the same staged rows.
  auto second = batch->Load(*sink_, job::TaskContext{}, 1);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_TRUE(second->txn->Commit().ok());
  EXPECT_EQ(Rows(), want_);

  // The same changes staged by Load write the same rows.
  auto conn = db_->Connect();
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE((*conn)->Execute("DELETE FROM t").ok());
  auto unprepared = Batch()->Load(*sink_, job::TaskContext{}, 0);
  ASSERT_TRUE(unprepared.ok()) << unprepared.status().ToString();
  ASSERT_TRUE(unprepared->txn->Commit().ok());
  EXPECT_EQ(Rows(), want_);
}

}  // namespace
}  // namespace millrace::cdc
