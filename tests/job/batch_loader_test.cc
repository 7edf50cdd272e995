// BatchLoader on its own: which SELECTs may load small files many to a statement, and what a
// group load reports per file.
#include "job/batch_loader.h"

#include <gtest/gtest.h>

#include <fstream>

#include "engine/engine_test_util.h"
#include "testing/temp_dir.h"

namespace millrace::job {
namespace {

LoadSpec SpecFor(const std::string& insert_sql) {
  LoadSpec spec;
  spec.insert_sql = insert_sql;
  auto analysis = AnalyzeInsert(insert_sql);
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
  spec.analysis = AnalyzeInsert(spec.insert_sql).value();
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
  spec.analysis = AnalyzeInsert(spec.insert_sql).value();
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

}  // namespace
}  // namespace millrace::job
