// BatchLoader on its own: which SELECTs may load small files many to a statement, and what a
// group load reports per file.
#include "files/batch_loader.h"

#include <gtest/gtest.h>

#include <fstream>

#include "engine/engine_test_util.h"
#include "testing/temp_dir.h"

namespace millrace::files {
namespace {

LoadSpec SpecFor(const std::string& insert_sql) {
  LoadSpec spec;
  spec.insert_sql = insert_sql;
  auto analysis = job::AnalyzeInsert(insert_sql);
  EXPECT_TRUE(analysis.ok()) << analysis.status().ToString();
  if (!analysis.ok()) return spec;
  spec.analysis = *analysis;
  auto options = load::ParseFileFunctionArgs(load::SourceKind::kLocal, analysis->args);
  EXPECT_TRUE(options.ok()) << options.status().ToString();
  if (options.ok()) spec.options = *options;
  return spec;
}

std::string Insert(const std::string& select_list, const std::string& after_call = "",
                   const std::string& format = "csv") {
  return "INSERT INTO t SELECT " + select_list +
         " FROM local(\"file_path\" = \"/in/*.csv\", \"column_separator\" = \",\", \"format\" = "
         "\"" +
         format + "\")" + after_call;
}

TEST(BatchLoaderGroupTest, OnlySelectsThatMapEachRowToAtMostOneRowAreGrouped) {
  for (const std::string& sql :
       {Insert("*"), Insert("c1, c2"), Insert("CAST(c1 AS INT) + 1, upper(c2)"),
        Insert("*", " WHERE c1 <> 'x'"), Insert("*", " AS s WHERE s.c1 IN ('a', 'b')"),
        Insert("*", ";"), Insert("*", " -- trailing comment"),
        Insert("unnest(string_split(c2, '|')), c1"), Insert("count(*)"),
        Insert("*", "", "csv_with_names")}) {
    EXPECT_TRUE(BatchLoader::CanGroup(SpecFor(sql))) << sql;
  }
  for (const std::string& sql :
       {Insert("DISTINCT c1"), Insert("row_number() OVER (), c1"), Insert("c1", " GROUP BY c1"),
        Insert("c1", " LIMIT 3"), Insert("c1", " ORDER BY c1"),
        Insert("c1", " UNION ALL SELECT 'x'"), Insert("a.c1", " AS a JOIN d ON a.c1 = d.k"),
        Insert("c1", ", d"), Insert("*", "", "json"), Insert("*", "", "parquet"),
        Insert("*", " WHERE c1 NOT IN (SELECT CAST(id AS VARCHAR) FROM t)"),
        std::string("INSERT INTO t SELECT * FROM d, local(\"file_path\" = \"/in/*.csv\", "
                    "\"format\" = \"csv\")")}) {
    EXPECT_FALSE(BatchLoader::CanGroup(SpecFor(sql))) << sql;
  }
}

class GroupLoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = engine::OpenOrDie({});
    conn_ = engine::ConnectOrDie(*db_);
    ASSERT_TRUE(conn_->Execute("CREATE TABLE t (id INTEGER, name VARCHAR)").ok());
  }
  // File i holds ids 1..rows[i].
  std::vector<std::string> Files(const std::vector<int>& rows) {
    std::vector<std::string> paths;
    for (size_t i = 0; i < rows.size(); ++i) {
      paths.push_back(dir_.Join("f" + std::to_string(i) + ".csv"));
      std::ofstream out(paths.back());
      for (int id = 1; id <= rows[i]; ++id)
        out << id << ",n" << i << "\n";
    }
    return paths;
  }
  testing::TempDir dir_;
  std::unique_ptr<engine::Database> db_;
  std::unique_ptr<engine::Connection> conn_;
};

// Rows loaded + filtered are checked against a file's records only when the SELECT makes one row
// of each record: DuckDB's parser and catalog tell aggregates and set-returning calls apart.
TEST_F(GroupLoadTest, OnlySelectsThatKeepEveryRecordAreAccountedPerRecord) {
  for (const std::string& sql :
       {Insert("*"), Insert("c1, c2"), Insert("CAST(c1 AS INT) + 1, upper(c2)"),
        Insert("coalesce(c1, 'x'), concat(c2, '!')"), Insert("*", "", "json"), Insert("*", ";")}) {
    const LoadSpec spec = SpecFor(sql);
    BatchLoader loader(conn_.get(), spec);
    auto keeps = loader.KeepsEveryRecord();
    ASSERT_TRUE(keeps.ok()) << keeps.status().ToString();
    EXPECT_TRUE(*keeps) << sql;
  }
  for (const std::string& sql :
       {Insert("*", " WHERE c1 <> 'x'"), Insert("count(*)"), Insert("max(c1), min(c2)"),
        Insert("unnest(string_split(c2, '|')), c1"), Insert("DISTINCT c1"),
        Insert("c1", " GROUP BY c1"), Insert("c1", " LIMIT 3"),
        Insert("row_number() OVER (), c1")}) {
    const LoadSpec spec = SpecFor(sql);
    BatchLoader loader(conn_.get(), spec);
    auto keeps = loader.KeepsEveryRecord();
    ASSERT_TRUE(keeps.ok()) << keeps.status().ToString();
    EXPECT_FALSE(*keeps) << sql;
  }
}

TEST_F(GroupLoadTest, ReportsTheRowsEachFileInsertedAfterTheWhere) {
  const LoadSpec spec = SpecFor(Insert("c1, c2", " WHERE CAST(c1 AS INT) % 2 = 0"));
  BatchLoader loader(conn_.get(), spec);
  auto loads = loader.LoadGroupFast(Files({1, 2, 7, 10}));
  ASSERT_TRUE(loads.ok()) << loads.status().ToString();
  ASSERT_EQ(loads->size(), 4u);
  EXPECT_EQ((*loads)[0].rows, 0);
  EXPECT_EQ((*loads)[1].rows, 1);
  EXPECT_EQ((*loads)[2].rows, 3);
  EXPECT_EQ((*loads)[3].rows, 5);
  EXPECT_EQ(engine::QueryValue(*conn_, "SELECT count(*) FROM t"), "9");
}

// A set-returning function's rows count for the file they came from.
TEST_F(GroupLoadTest, RowsOfAnUnnestAreCountedForTheirFile) {
  ASSERT_TRUE(conn_->Execute("CREATE TABLE u (tag VARCHAR, id VARCHAR)").ok());
  LoadSpec spec = SpecFor(Insert("unnest(string_split(c2, '|')), c1"));
  spec.insert_sql.replace(spec.insert_sql.find("INTO t"), 6, "INTO u");
  spec.analysis = job::AnalyzeInsert(spec.insert_sql).value();
  std::vector<std::string> files = {dir_.Join("a.csv"), dir_.Join("b.csv")};
  std::ofstream(files[0]) << "1,\n";       // no tag: no row
  std::ofstream(files[1]) << "2,x|y|z\n";  // three rows
  BatchLoader loader(conn_.get(), spec);
  auto loads = loader.LoadGroupFast(files);
  ASSERT_TRUE(loads.ok()) << loads.status().ToString();
  EXPECT_EQ((*loads)[0].rows, 0);
  EXPECT_EQ((*loads)[1].rows, 3);
}

// count(*) without GROUP BY would be one row per group instead of one per file: it is refused
// even when the totals happen to agree (a file with a header only, one with one row).
TEST_F(GroupLoadTest, AnAggregateIsRefusedEvenWhenTheTotalsAgree) {
  ASSERT_TRUE(conn_->Execute("CREATE TABLE n (rows BIGINT)").ok());
  LoadSpec spec = SpecFor(Insert("count(*)"));
  spec.insert_sql.replace(spec.insert_sql.find("INTO t"), 6, "INTO n");
  spec.analysis = job::AnalyzeInsert(spec.insert_sql).value();
  ASSERT_TRUE(conn_->Execute("BEGIN").ok());
  BatchLoader loader(conn_.get(), spec);
  auto loads = loader.LoadGroupFast(Files({1, 1}));
  EXPECT_FALSE(loads.ok());
  ASSERT_TRUE(conn_->Execute("ROLLBACK").ok());
}

TEST_F(GroupLoadTest, ARowLevelErrorIsReportedAsSuch) {
  const LoadSpec spec = SpecFor(Insert("c1, c2"));
  auto files = Files({2, 2});
  std::ofstream(files[1], std::ios::app) << "x,bad\n";
  BatchLoader loader(conn_.get(), spec);
  auto loads = loader.LoadGroupFast(files);
  ASSERT_FALSE(loads.ok());
  EXPECT_TRUE(BatchLoader::IsRowLevelError(loads.status())) << loads.status().ToString();
}

// What is row-level is decided by the error's detail: DuckDB's real conversion, NOT NULL and
// JSON transform errors are, and a message that only reads like one is not.
TEST_F(GroupLoadTest, AFileWithABadValueFailsWithARowLevelError) {
  const LoadSpec spec = SpecFor(Insert("c1, c2"));
  auto files = Files({2});
  std::ofstream(files[0], std::ios::app) << "x,bad\n";
  ASSERT_TRUE(conn_->Execute("BEGIN").ok());
  BatchLoader loader(conn_.get(), spec);
  auto load = loader.LoadFast("f0.csv", files[0]);
  ASSERT_FALSE(load.ok());
  EXPECT_TRUE(BatchLoader::IsRowLevelError(load.status())) << load.status().ToString();
  ASSERT_TRUE(conn_->Execute("ROLLBACK").ok());
}

TEST_F(GroupLoadTest, ANullForANotNullColumnIsARowLevelError) {
  ASSERT_TRUE(conn_->Execute("CREATE TABLE nn (id INTEGER NOT NULL, name VARCHAR)").ok());
  LoadSpec spec = SpecFor(Insert("c1, c2"));
  spec.insert_sql.replace(spec.insert_sql.find("INTO t"), 6, "INTO nn");
  spec.analysis = job::AnalyzeInsert(spec.insert_sql).value();
  const std::string file = dir_.Join("nulls.csv");
  std::ofstream(file) << "1,a\n,b\n";
  ASSERT_TRUE(conn_->Execute("BEGIN").ok());
  BatchLoader loader(conn_.get(), spec);
  auto load = loader.LoadFast("nulls.csv", file);
  ASSERT_FALSE(load.ok());
  EXPECT_TRUE(BatchLoader::IsRowLevelError(load.status())) << load.status().ToString();
  ASSERT_TRUE(conn_->Execute("ROLLBACK").ok());
}

// A fast json load reads every file of the batch with the first file's columns: a value of
// another type in a later file is a JSON transform error.
TEST_F(GroupLoadTest, AJsonValueOfAnotherTypeIsARowLevelError) {
  const LoadSpec spec = SpecFor(Insert("c1, c2", "", "json"));
  const std::string first = dir_.Join("a.json");
  const std::string second = dir_.Join("b.json");
  std::ofstream(first) << "{\"c1\": 1, \"c2\": \"x\"}\n";
  std::ofstream(second) << "{\"c1\": \"not a number\", \"c2\": \"y\"}\n";
  ASSERT_TRUE(conn_->Execute("BEGIN").ok());
  BatchLoader loader(conn_.get(), spec);
  auto loaded = loader.LoadFast("a.json", first);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto failed = loader.LoadFast("b.json", second);
  ASSERT_FALSE(failed.ok());
  EXPECT_TRUE(BatchLoader::IsRowLevelError(failed.status())) << failed.status().ToString();
  ASSERT_TRUE(conn_->Execute("ROLLBACK").ok());
}

TEST(BatchLoaderRowLevelTest, TheMessageTextDecidesNothing) {
  EXPECT_FALSE(
      BatchLoader::IsRowLevelError(Status::InvalidArgument("Conversion Error: looks like DuckDB")));
  EXPECT_FALSE(BatchLoader::IsRowLevelError(
      Status::FailedPrecondition("Constraint Error: NOT NULL constraint failed: t.a")));
  EXPECT_FALSE(BatchLoader::IsRowLevelError(
      Status::InvalidArgument("Invalid Input Error: JSON transform error in file \"f\"")));
  EXPECT_FALSE(BatchLoader::IsRowLevelError(Status::Ok()));
}

TEST_F(GroupLoadTest, OtherDuckDbErrorsAreNotRowLevel) {
  Status missing = conn_->Execute("SELECT * FROM no_such_table");
  ASSERT_FALSE(missing.ok());
  EXPECT_FALSE(BatchLoader::IsRowLevelError(missing));
  Status duplicate = conn_->Execute("CREATE TABLE t (a INTEGER)");
  ASSERT_FALSE(duplicate.ok());
  EXPECT_FALSE(BatchLoader::IsRowLevelError(duplicate));
}

}  // namespace
}  // namespace millrace::files
