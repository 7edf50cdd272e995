// Streaming jobs into tables of each Doris model: DUPLICATE keeps every row, UNIQUE the newest
// row per key (a later file, and a later line of one file, win), AGGREGATE folds the rows of a
// key with each column's function, across files and tasks; a NULL key is a filtered row.
#include <gtest/gtest.h>

#include "job/job_test_util.h"

namespace millrace::job {
namespace {

using Rows = std::vector<std::vector<std::string>>;

class TableModelLoadTest : public LocalJobTest {
 protected:
  void CreateDorisTable(const std::string& ddl) {
    Status created = job::CreateDorisTable(harness_.conn(), ddl);
    ASSERT_TRUE(created.ok()) << created.ToString();
  }

  void CreateJob(const std::string& name, const std::string& insert,
                 const std::string& properties = "") {
    auto created =
        harness_.Run("CREATE JOB " + name + " ON STREAMING PROPERTIES (\"max_interval\" = \"1\"" +
                     properties + ") DO " + insert + " FROM local(\"file_path\" = \"" + in_ + "/" +
                     name + "-*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")");
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  bool WaitForFiles(const std::string& job, int files) {
    return harness_.WaitFor([&] {
      return harness_.QueryExpanded("SELECT count(*) FROM job_files(\"job\" = \"" + job +
                                    "\") WHERE State = 'LOADED'") == Rows{{std::to_string(files)}};
    });
  }
};

TEST_F(TableModelLoadTest, UniqueKeepsTheNewestRowPerKey) {
  CreateDorisTable("CREATE TABLE u (`id` INT, `name` STRING, `n` INT) UNIQUE KEY(`id`)");
  // Within one file the later line wins; key 2 appears three times.
  WriteFile(in_ + "/u-1.csv", "1,one,1\n2,two,1\n2,TWO,2\n3,three,1\n2,Two,3\n");
  CreateJob("u", "INSERT INTO u (id, name, n) SELECT CAST(c1 AS INT), c2, CAST(c3 AS INT)");
  ASSERT_TRUE(WaitForFiles("u", 1));
  EXPECT_EQ(harness_.Query("SELECT id, name, n FROM u ORDER BY id"),
            (Rows{{"1", "one", "1"}, {"2", "Two", "3"}, {"3", "three", "1"}}));
  // A later file (in a later task) updates keys 1 and 3 and adds 4.
  WriteFile(in_ + "/u-2.csv", "3,THREE,9\n4,four,1\n1,ONE,7\n");
  ASSERT_TRUE(WaitForFiles("u", 2));
  EXPECT_EQ(harness_.Query("SELECT id, name, n FROM u ORDER BY id"),
            (Rows{{"1", "ONE", "7"}, {"2", "Two", "3"}, {"3", "THREE", "9"}, {"4", "four", "1"}}));
  // Rows counts the file's rows, before the reduction.
  EXPECT_EQ(harness_.QueryExpanded("SELECT regexp_replace(FileName, '.*/', ''), Rows FROM "
                                   "job_files(\"job\" = \"u\") ORDER BY FileName"),
            (Rows{{"u-1.csv", "5"}, {"u-2.csv", "3"}}));
}

// A UNIQUE file loads with one upsert, and again reduced only when a key repeats in it: the
// result is the reduced write's, with the value columns not given kept, across the files of one
// batch, and with a SELECT whose WHERE drops records (their count then comes from DuckDB).
TEST_F(TableModelLoadTest, UniqueUpsertsKeepWhatTheReducedWriteKeeps) {
  CreateDorisTable("CREATE TABLE u (`id` INT, `name` STRING, `n` INT) UNIQUE KEY(`id`)");
  ASSERT_TRUE(harness_.conn().Execute("INSERT INTO u VALUES (1, 'one', 1), (2, 'two', 2)").ok());
  WriteFile(in_ + "/b-1.csv", "3,three\n");
  WriteFile(in_ + "/b-2.csv", "2,a\n5,b\n2,c\n");
  WriteFile(in_ + "/b-3.csv", "5,d\n7,skip\n6,e\n5,f\n");
  auto created = harness_.Run(
      "CREATE JOB b ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO INSERT INTO u (id, "
      "name) SELECT CAST(c1 AS INT), c2 FROM local(\"file_path\" = \"" +
      in_ + "/b-*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\") WHERE c2 <> 'skip'");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(WaitForFiles("b", 3));
  EXPECT_EQ(harness_.Query("SELECT id, name, n FROM u ORDER BY id"), (Rows{{"1", "one", "1"},
                                                                           {"2", "c", "2"},
                                                                           {"3", "three", "NULL"},
                                                                           {"5", "f", "NULL"},
                                                                           {"6", "e", "NULL"}}));
  EXPECT_EQ(harness_.QueryExpanded("SELECT regexp_replace(FileName, '.*/', ''), Rows FROM "
                                   "job_files(\"job\" = \"b\") ORDER BY FileName"),
            (Rows{{"b-1.csv", "1"}, {"b-2.csv", "3"}, {"b-3.csv", "3"}}));
}

// Only the keys that repeat in a file are written again, each with its newest row: a key three
// times among keys that come once, one of them already stored; and in the same batch a second
// file with a repeat (the first file's rewrite left nothing behind in the transaction).
TEST_F(TableModelLoadTest, AKeyThreeTimesInAFileKeepsItsLastRow) {
  CreateDorisTable("CREATE TABLE u (`id` INT, `name` STRING) UNIQUE KEY(`id`)");
  ASSERT_TRUE(harness_.conn().Execute("INSERT INTO u VALUES (1, 'stored')").ok());
  WriteFile(in_ + "/t-1.csv", "1,a\n2,b\n1,c\n3,d\n1,e\n4,f\n");
  WriteFile(in_ + "/t-2.csv", "2,x\n2,y\n5,z\n");
  CreateJob("t", "INSERT INTO u SELECT CAST(c1 AS INT), c2");
  ASSERT_TRUE(WaitForFiles("t", 2));
  EXPECT_EQ(harness_.Query("SELECT id, name FROM u ORDER BY id"),
            (Rows{{"1", "e"}, {"2", "y"}, {"3", "d"}, {"4", "f"}, {"5", "z"}}));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM tasks(type := 'insert') WHERE JobName = 't'"),
            "1");
}

TEST_F(TableModelLoadTest, TheDeleteSignDeletesAKey) {
  CreateDorisTable("CREATE TABLE u (`id` INT, `name` STRING) UNIQUE KEY(`id`)");
  WriteFile(in_ + "/del-1.csv", "1,one,0\n2,two,0\n3,three,0\n");
  CreateJob("del",
            "INSERT INTO u (id, name, __DORIS_DELETE_SIGN__) SELECT CAST(c1 AS INT), c2, "
            "CAST(c3 AS INT)");
  ASSERT_TRUE(WaitForFiles("del", 1));
  // Key 1 deleted; key 2 deleted then written again later in the file; key 4 written then
  // deleted; key 5 deleted before it ever existed.
  WriteFile(in_ + "/del-2.csv", "1,,1\n2,,1\n2,TWO,0\n4,four,0\n4,,1\n5,,1\n");
  ASSERT_TRUE(WaitForFiles("del", 2));
  EXPECT_EQ(harness_.Query("SELECT id, name FROM u ORDER BY id"),
            (Rows{{"2", "TWO"}, {"3", "three"}}));
}

TEST_F(TableModelLoadTest, ANullKeyIsAFilteredRowWithItsReason) {
  CreateDorisTable("CREATE TABLE u (`id` INT NULL, `name` STRING) UNIQUE KEY(`id`)");
  WriteFile(in_ + "/n-1.csv", "1,one\n,nokey\n2,two\n");
  CreateJob("n", "INSERT INTO u (id, name) SELECT CAST(c1 AS INT), c2",
            ", \"session.insert_max_filter_ratio\" = \"0.5\"");
  ASSERT_TRUE(WaitForFiles("n", 1));
  EXPECT_EQ(harness_.Query("SELECT id, name FROM u ORDER BY id"),
            (Rows{{"1", "one"}, {"2", "two"}}));
  EXPECT_EQ(harness_.QueryExpanded("SELECT Line, ColumnName, Reason FROM filtered_rows(\"job\" = "
                                   "\"n\")"),
            (Rows{{"2", "id", "NULL value for NOT NULL column"}}));
}

TEST_F(TableModelLoadTest, AggregateFoldsEachKeyWithItsColumnsFunction) {
  CreateDorisTable(
      "CREATE TABLE a (`k` STRING, `hits` BIGINT SUM, `top` INT MAX, `low` INT MIN, `last` "
      "STRING REPLACE, `seen` STRING REPLACE_IF_NOT_NULL) AGGREGATE KEY(`k`)");
  WriteFile(in_ + "/a-1.csv", "x,1,5,5,first,s1\nx,2,9,3,second,\ny,10,1,1,only,\n");
  CreateJob("a",
            "INSERT INTO a SELECT c1, CAST(c2 AS BIGINT), CAST(c3 AS INT), CAST(c4 AS INT), c5, "
            "NULLIF(c6, '')");
  ASSERT_TRUE(WaitForFiles("a", 1));
  EXPECT_EQ(harness_.Query("SELECT k, hits, top, low, last, coalesce(seen, 'NULL') FROM a ORDER "
                           "BY k"),
            (Rows{{"x", "3", "9", "3", "second", "s1"}, {"y", "10", "1", "1", "only", "NULL"}}));
  WriteFile(in_ + "/a-2.csv", "x,4,7,1,third,\ny,,20,,,s9\nz,1,1,1,z,z\n");
  ASSERT_TRUE(WaitForFiles("a", 2));
  EXPECT_EQ(harness_.Query("SELECT k, hits, top, low, coalesce(last, 'NULL'), coalesce(seen, "
                           "'NULL') FROM a ORDER BY k"),
            (Rows{{"x", "7", "9", "1", "third", "s1"},
                  {"y", "10", "20", "1", "NULL", "s9"},
                  {"z", "1", "1", "1", "z", "z"}}));
}

// A keyed file loads fast, straight from the file; a value that does not convert there sends the
// task the careful way, where the row is filtered and the others fold.
TEST_F(TableModelLoadTest, AKeyedFileWithABadValueLoadsCarefully) {
  CreateDorisTable("CREATE TABLE a (`k` STRING, `hits` BIGINT SUM) AGGREGATE KEY(`k`)");
  WriteFile(in_ + "/bad-1.csv", "x,1\nx,oops\nx,2\ny,5\n");
  CreateJob("bad", "INSERT INTO a SELECT c1, c2",
            ", \"session.insert_max_filter_ratio\" = \"0.5\"");
  ASSERT_TRUE(WaitForFiles("bad", 1));
  EXPECT_EQ(harness_.Query("SELECT k, hits FROM a ORDER BY k"), (Rows{{"x", "3"}, {"y", "5"}}));
  EXPECT_EQ(harness_.QueryExpanded("SELECT Line, ColumnName, Value FROM filtered_rows(\"job\" = "
                                   "\"bad\")"),
            (Rows{{"2", "hits", "oops"}}));
}

TEST_F(TableModelLoadTest, DuplicateKeepsEveryRow) {
  CreateDorisTable("CREATE TABLE d (`id` INT, `name` STRING) DUPLICATE KEY(`id`)");
  WriteFile(in_ + "/d-1.csv", "1,a\n1,a\n2,b\n");
  CreateJob("d", "INSERT INTO d SELECT CAST(c1 AS INT), c2");
  ASSERT_TRUE(WaitForFiles("d", 1));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM d"), "3");
}

}  // namespace
}  // namespace millrace::job
