// BatchLoader on its own: which SELECTs may load small files many to a statement, and what a
// group load reports per file.
#include "files/batch_loader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/engine_test_util.h"
#include "table/create_table.h"
#include "table/model_catalog.h"
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
        Insert("*", "", "csv_with_names"), Insert("*", "", "json")}) {
    EXPECT_TRUE(BatchLoader::CanGroup(SpecFor(sql))) << sql;
  }
  for (const std::string& sql :
       {Insert("DISTINCT c1"), Insert("row_number() OVER (), c1"), Insert("c1", " GROUP BY c1"),
        Insert("c1", " LIMIT 3"), Insert("c1", " ORDER BY c1"),
        Insert("c1", " UNION ALL SELECT 'x'"), Insert("a.c1", " AS a JOIN d ON a.c1 = d.k"),
        Insert("c1", ", d"), Insert("*", "", "parquet"),
        Insert("*", "", "json\", \"json_root\" = \"$.data"),
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

// Counted records stand for the files' rows, without a count by file, when the SELECT keeps every
// record and they add up to what the group's statement wrote; otherwise DuckDB counts them.
TEST_F(GroupLoadTest, CountedRecordsStandForTheRowsWhenTheyAddUp) {
  const LoadSpec spec = SpecFor(Insert("c1, c2"));
  BatchLoader loader(conn_.get(), spec);
  // 3 + 2 records against the 1 + 2 rows written: counted.
  auto counted = loader.LoadGroupFast(Files({1, 2}), {3, 2});
  ASSERT_TRUE(counted.ok()) << counted.status().ToString();
  EXPECT_EQ((*counted)[0].rows, 1);
  EXPECT_EQ((*counted)[1].rows, 2);
  // 1 + 5 records against 2 + 4 rows written: the records are taken as they are (a count by
  // file would say 2 and 4; the caller checks each file's rows against its records).
  auto believed = loader.LoadGroupFast(Files({2, 4}), {1, 5});
  ASSERT_TRUE(believed.ok()) << believed.status().ToString();
  EXPECT_EQ((*believed)[0].rows, 1);
  EXPECT_EQ((*believed)[1].rows, 5);
}

// Plain CSV files without quotes are read as one file joined at the path given: each file's rows
// are its counted records, as when read one by one; records that do not add up to the rows read
// cannot be told apart by file, and say so.
TEST_F(GroupLoadTest, PlainCsvGroupsAreReadAsOneJoinedFile) {
  std::vector<std::string> paths = Files({1, 2});
  paths.push_back(dir_.Join("f2.csv"));
  std::ofstream(paths.back(), std::ios::binary) << "\xEF\xBB\xBF"
                                                   "1,n2\n2,n2\n3,n2";
  const std::string joined = dir_.Join("j0.csv");
  const LoadSpec spec = SpecFor(Insert("CAST(c1 AS INT), c2"));
  BatchLoader loader(conn_.get(), spec);
  auto loads = loader.LoadGroupFast(paths, {1, 2, 3}, joined);
  ASSERT_TRUE(loads.ok()) << loads.status().ToString();
  ASSERT_EQ(loads->size(), 3u);
  for (size_t f = 0; f < 3; ++f)
    EXPECT_EQ((*loads)[f].rows, static_cast<int64_t>(f + 1));
  EXPECT_TRUE(std::filesystem::exists(joined));
  EXPECT_EQ(
      engine::QueryValue(*conn_, "SELECT string_agg(id || name, ' ' ORDER BY name, id) FROM t"),
      "1n0 1n1 2n1 1n2 2n2 3n2");

  auto mismatch = loader.LoadGroupFast(paths, {1, 2, 4}, joined);
  EXPECT_EQ(mismatch.status().code(), StatusCode::kFailedPrecondition)
      << mismatch.status().ToString();

  // With a quote character a file's open quote could run into the next file: read apart.
  ASSERT_TRUE(conn_->Execute("DELETE FROM t").ok());
  std::filesystem::remove(joined);
  const LoadSpec quoted = SpecFor(Insert("CAST(c1 AS INT), c2", "", "csv\", \"enclose\" = \"'"));
  BatchLoader apart(conn_.get(), quoted);
  auto read_apart = apart.LoadGroupFast(paths, {1, 2, 3}, joined);
  ASSERT_TRUE(read_apart.ok()) << read_apart.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(joined));
  EXPECT_EQ(engine::QueryValue(*conn_, "SELECT count(*) FROM t"), "6");
}

// JSON files group only where their counted records are each file's rows: a SELECT that keeps
// every record, into a table without a key.
TEST_F(GroupLoadTest, JsonGroupsStandOnCountedRecords) {
  std::vector<std::string> paths;
  for (int f = 0; f < 3; ++f) {
    paths.push_back(dir_.Join("f" + std::to_string(f) + ".json"));
    std::ofstream out(paths.back());
    for (int id = 1; id <= f + 1; ++id)
      out << "{\"id\": " << id << ", \"name\": \"n" << f << "\"}\n";
  }
  const LoadSpec spec = SpecFor(Insert("id, name", "", "json"));
  BatchLoader loader(conn_.get(), spec);
  auto groups = loader.GroupsJson();
  ASSERT_TRUE(groups.ok()) << groups.status().ToString();
  EXPECT_TRUE(*groups);
  auto loads = loader.LoadGroupFast(paths, {1, 2, 3});
  ASSERT_TRUE(loads.ok()) << loads.status().ToString();
  ASSERT_EQ(loads->size(), 3u);
  for (size_t f = 0; f < 3; ++f)
    EXPECT_EQ((*loads)[f].rows, static_cast<int64_t>(f + 1));
  EXPECT_EQ(engine::QueryValue(*conn_, "SELECT count(*) FROM t"), "6");
  EXPECT_EQ(engine::QueryValue(*conn_, "SELECT count(*) FROM t WHERE name = 'n2'"), "3");
  // Records that do not add up to the rows written cannot be told apart by file without a
  // file column: the caller loads the files one by one.
  auto mismatch = loader.LoadGroupFast(paths, {1, 2, 4});
  EXPECT_EQ(mismatch.status().code(), StatusCode::kFailedPrecondition)
      << mismatch.status().ToString();
  // A WHERE: no JSON groups.
  const LoadSpec filtered = SpecFor(Insert("id, name", " WHERE id > 1", "json"));
  BatchLoader filtering(conn_.get(), filtered);
  auto no_groups = filtering.GroupsJson();
  ASSERT_TRUE(no_groups.ok()) << no_groups.status().ToString();
  EXPECT_FALSE(*no_groups);
}

// Files of a table with a key load many to a statement, the newest row of a key being the last
// file's, then its last line's; an AGGREGATE group folds a key met in several files. Each way a
// census of the keys leads: a key twice, a key stored (before, or by this transaction), every
// key new.
class KeyedGroupLoadTest : public GroupLoadTest {
 protected:
  void SetUp() override {
    GroupLoadTest::SetUp();
    ASSERT_TRUE(conn_->Execute("CREATE SCHEMA __millrace").ok());
    ASSERT_TRUE(conn_->Execute(std::string(table::kModelTableDdl)).ok());
  }
  void CreateDorisTable(const std::string& ddl) {
    auto create = table::ParseCreateTable(ddl);
    ASSERT_TRUE(create.ok()) << create.status().ToString();
    create->def.database = "main";
    ASSERT_TRUE(conn_->Execute(table::DuckDbCreateTable(create->def, false)).ok());
    ASSERT_TRUE(conn_->Execute(table::RecordModelSql(create->def)).ok());
  }
  // Files of the given contents, in order.
  std::vector<std::string> Write(const std::vector<std::string>& contents) {
    std::vector<std::string> paths;
    for (const std::string& content : contents) {
      paths.push_back(dir_.Join("k" + std::to_string(next_++) + ".csv"));
      std::ofstream(paths.back()) << content;
    }
    return paths;
  }
  LoadSpec Into(const std::string& table, const std::string& select_list) {
    LoadSpec spec = SpecFor(Insert(select_list));
    spec.insert_sql.replace(spec.insert_sql.find("INTO t"), 6, "INTO " + table);
    spec.analysis = job::AnalyzeInsert(spec.insert_sql).value();
    return spec;
  }
  static std::vector<int64_t> Rows(const std::vector<FileLoad>& loads) {
    std::vector<int64_t> rows;
    for (const FileLoad& load : loads)
      rows.push_back(load.rows);
    return rows;
  }
  int next_ = 0;
};

TEST_F(KeyedGroupLoadTest, AUniqueGroupKeepsTheLastFilesLastRowOfAKey) {
  CreateDorisTable("CREATE TABLE u (`id` INT, `name` STRING) UNIQUE KEY(`id`)");
  ASSERT_TRUE(conn_->Execute("INSERT INTO u VALUES (9, 'stored')").ok());
  const LoadSpec spec = Into("u", "CAST(c1 AS INT), c2");
  ASSERT_TRUE(conn_->Execute("BEGIN").ok());
  BatchLoader loader(conn_.get(), spec);
  auto groups = loader.MayGroup();
  ASSERT_TRUE(groups.ok() && *groups);
  // Rows with the delete sign load carefully, one file at a time.
  const LoadSpec signed_spec =
      Into("u (id, name, __DORIS_DELETE_SIGN__)", "CAST(c1 AS INT), c2, 0");
  BatchLoader signed_rows(conn_.get(), signed_spec);
  auto signed_groups = signed_rows.MayGroup();
  ASSERT_TRUE(signed_groups.ok()) << signed_groups.status().ToString();
  EXPECT_FALSE(*signed_groups);
  // Key 1 in every file and twice in the last; key 3 in two files; key 9 stored before.
  auto first =
      loader.LoadGroupFast(Write({"1,a\n2,b\n", "1,c\n3,d\n9,x\n", "3,e\n1,f\n1,g\n"}), {2, 3, 3});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(Rows(*first), (std::vector<int64_t>{2, 3, 3}));
  // A second group of the same transaction meets keys the first wrote; no records counted.
  auto second = loader.LoadGroupFast(Write({"2,h\n4,i\n", "4,j\n5,k\n"}));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(Rows(*second), (std::vector<int64_t>{2, 2}));
  // Keys all new and once: a plain INSERT.
  auto third = loader.LoadGroupFast(Write({"6,l\n", "7,m\n8,n\n"}));
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(Rows(*third), (std::vector<int64_t>{1, 2}));
  ASSERT_TRUE(conn_->Execute("COMMIT").ok());
  EXPECT_EQ(engine::QueryValue(*conn_, "SELECT string_agg(id || name, ' ' ORDER BY id) FROM u"),
            "1g 2h 3e 4j 5k 6l 7m 8n 9x");
}

TEST_F(KeyedGroupLoadTest, AnAggregateGroupFoldsAKeyMetInSeveralFiles) {
  CreateDorisTable(
      "CREATE TABLE a (`k` STRING, `hits` BIGINT SUM, `last` STRING REPLACE) AGGREGATE "
      "KEY(`k`)");
  ASSERT_TRUE(conn_->Execute("INSERT INTO a VALUES ('s', 100, 'stored')").ok());
  const LoadSpec spec = Into("a", "c1, CAST(c2 AS BIGINT), c3");
  ASSERT_TRUE(conn_->Execute("BEGIN").ok());
  BatchLoader loader(conn_.get(), spec);
  // x in both files (folded per key first), s stored before.
  auto folded = loader.LoadGroupFast(Write({"x,1,a\ns,2,b\n", "y,5,c\nx,3,d\n"}), {2, 2});
  ASSERT_TRUE(folded.ok()) << folded.status().ToString();
  EXPECT_EQ(Rows(*folded), (std::vector<int64_t>{2, 2}));
  // No key twice in the group: merged as the rows come, with the stored and earlier rows.
  auto merged = loader.LoadGroupFast(Write({"x,10,e\n", "z,1,f\ns,1,g\n"}));
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(Rows(*merged), (std::vector<int64_t>{1, 2}));
  ASSERT_TRUE(conn_->Execute("COMMIT").ok());
  EXPECT_EQ(
      engine::QueryValue(*conn_, "SELECT string_agg(k || hits || last, ' ' ORDER BY k) FROM a"),
      "s103g x14e y5c z1f");
}

// Without counting keys first, a keyed group is written with a plain INSERT: new keys load as
// they come, and a key that repeats or is stored fails the statement as IsKeysNotNew (the
// rounds then load the batch again counting).
TEST_F(KeyedGroupLoadTest, WithoutACountNewKeysInsertAndOthersAreRefusedAsNotNew) {
  CreateDorisTable("CREATE TABLE u (`id` INT, `name` STRING) UNIQUE KEY(`id`)");
  ASSERT_TRUE(conn_->Execute("INSERT INTO u VALUES (9, 'stored')").ok());
  LoadSpec spec = Into("u", "CAST(c1 AS INT), c2");
  spec.count_keys = false;
  ASSERT_TRUE(conn_->Execute("BEGIN").ok());
  BatchLoader loader(conn_.get(), spec);
  auto fresh = loader.LoadGroupFast(Write({"1,a\n2,b\n", "3,c\n"}), {2, 1});
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_EQ(Rows(*fresh), (std::vector<int64_t>{2, 1}));
  ASSERT_TRUE(conn_->Execute("COMMIT").ok());
  EXPECT_EQ(engine::QueryValue(*conn_, "SELECT string_agg(id || name, ' ' ORDER BY id) FROM u"),
            "1a 2b 3c 9stored");
  for (const std::string& content : {std::string("4,d\n4,e\n"), std::string("5,f\n9,g\n")}) {
    ASSERT_TRUE(conn_->Execute("BEGIN").ok());
    BatchLoader again(conn_.get(), spec);
    auto refused = again.LoadGroupFast(Write({content, "6,h\n"}));
    ASSERT_FALSE(refused.ok()) << content;
    EXPECT_TRUE(BatchLoader::IsKeysNotNew(refused.status())) << refused.status().ToString();
    ASSERT_TRUE(conn_->Execute("ROLLBACK").ok());
  }
  EXPECT_EQ(engine::QueryValue(*conn_, "SELECT count(*) FROM u"), "4");
}

TEST(KeyCountPolicyTest, BatchesCountKeysForAWhileAfterOneWhoseKeysWereNotNew) {
  KeyCountPolicy policy;
  EXPECT_FALSE(policy.CountKeys());
  EXPECT_FALSE(policy.CountKeys());
  policy.KeysWereNotNew();
  for (int i = 0; i < KeyCountPolicy::kCountedBatches; ++i)
    EXPECT_TRUE(policy.CountKeys()) << i;
  EXPECT_FALSE(policy.CountKeys());
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
