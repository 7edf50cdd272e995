// Bad inputs of every kind (tests/job/corpus, one file per kind) loaded by streaming jobs, each
// with its exact outcome: rows loaded, rows filtered, error text, ledger state, job state.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <thread>

#include "job/job_test_util.h"
#include "source/local_source.h"
#include "testing/test_paths.h"

namespace millrace::job {
namespace {

using Rows = std::vector<std::vector<std::string>>;

const std::string kCorpus = testing::SourcePath("tests/job/corpus/");

class JobBadInputTest : public LocalJobTest {
 protected:
  // Copies corpus files into the watched directory, under new names (they sort in this order).
  void Stage(const std::vector<std::pair<std::string, std::string>>& files) {
    for (const auto& [corpus, name] : files) {
      std::filesystem::copy_file(kCorpus + corpus, in_ + "/" + name);
    }
    // Past the harness's settle time: one listing takes them all, in one task.
    harness_.Tick();
  }

  void Create(const std::string& properties, const std::string& pattern = "*",
              const std::string& format = "csv", const std::string& select = "SELECT c1, c2") {
    auto created = harness_.Run(
        "CREATE JOB b ON STREAMING PROPERTIES (\"max_interval\" = \"1\"" + properties +
        ") DO INSERT INTO t " + select + " FROM local(\"file_path\" = \"" + in_ + "/" + pattern +
        "\", \"format\" = \"" + format + "\", \"column_separator\" = \",\")");
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  // Writes the JSON files (name, content), lets them settle so one task takes them all, creates
  // job b over them with `properties` and waits until the ledger has them all.
  void LoadJson(const std::vector<std::pair<std::string, std::string>>& files,
                const std::string& properties = "") {
    for (const auto& [name, content] : files)
      WriteFile(in_ + "/" + name, content);
    harness_.Tick();
    Create(properties, "*.json", "json", "SELECT *");
    ASSERT_TRUE(harness_.WaitFor([&] { return Ledger().size() == files.size(); }));
  }

  std::string Column(const std::string& column) { return harness_.JobColumn("b", column); }
  bool WaitForStatus(const std::string& status) {
    return harness_.WaitFor([&] { return Column("Status") == status; });
  }
  bool WaitForTasks(int succeeded) {
    return harness_.WaitFor(
        [&] { return Column("SucceedTaskCount") == std::to_string(succeeded); });
  }
  Rows Ledger() {
    return harness_.QueryExpanded(
        "SELECT regexp_replace(FileName, '.*/', ''), State, Rows, Error IS NOT NULL FROM "
        "job_files(\"job\" = \"b\") ORDER BY FileName");
  }
};

// Each bad file, alone, pauses a default job (on_error = pause) with an error naming it.
TEST_F(JobBadInputTest, EachBadFilePausesTheJobNamingTheFile) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"truncated.csv.gz", "csv", "truncated (the stream ends before its end marker)"},
      {"truncated.csv.zst", "csv", "truncated (the stream ends before its end marker)"},
      {"corrupt.parquet", "parquet", "No magic bytes found at end of file"},
      {"invalid.json", "json",
       "the value that starts at line 2 is not closed by the end of the file, line 2"},
      {"wrong_columns.csv", "csv", "Expected Number of Columns: 2 Found: 3"},
  };
  for (const auto& [file, format, error] : cases) {
    SCOPED_TRACE(file);
    std::filesystem::remove_all(in_);
    std::filesystem::create_directories(in_);
    Stage({{file, "a_" + file}});
    Create("", "*", format, format == "csv" ? "SELECT c1, c2" : "SELECT id, name");
    ASSERT_TRUE(WaitForStatus("PAUSED"));
    const std::string msg = Column("ErrorMsg");
    EXPECT_EQ(msg.rfind("{\"code\":\"LOAD_ERR\",\"msg\":\"", 0), 0u) << msg;
    EXPECT_NE(msg.find("a_" + file), std::string::npos) << msg;
    EXPECT_NE(msg.find(error), std::string::npos) << msg;
    EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "0");
    EXPECT_EQ(Column("FailedTaskCount"), "1");
    EXPECT_EQ(harness_.Value("SELECT Status FROM tasks(type := 'insert') ORDER BY TaskId DESC "
                             "LIMIT 1"),
              "FAILED");
    // Failures resume automatically later (not a manual pause).
    EXPECT_NE(Column("JobRuntimeMsg").find("resumes automatically in 10 s"), std::string::npos);
    ASSERT_TRUE(harness_.Run("DROP JOB WHERE jobname = 'b'").ok());
  }
}

TEST_F(JobBadInputTest, SkipFileQuarantinesOnlyTheBadFiles) {
  Stage({{"good.csv", "a.csv"},
         {"truncated.csv.gz", "b.csv.gz"},
         {"empty.csv", "c.csv"},
         {"wrong_columns.csv", "d.csv"},
         {"good.csv", "e.csv"}});
  Create(", \"on_error\" = \"skip_file\"");
  ASSERT_TRUE(WaitForTasks(1));
  EXPECT_EQ(Column("Status"), "RUNNING");
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "4");
  EXPECT_EQ(Ledger(), (Rows{{"a.csv", "LOADED", "2", "false"},
                            {"b.csv.gz", "QUARANTINED", "0", "true"},
                            {"c.csv", "LOADED", "0", "false"},
                            {"d.csv", "QUARANTINED", "0", "true"},
                            {"e.csv", "LOADED", "2", "false"}}));
  EXPECT_NE(harness_
                .QueryExpanded("SELECT Error FROM job_files(\"job\" = \"b\") WHERE FileName LIKE "
                               "'%b.csv.gz'")[0][0]
                .find("truncated"),
            std::string::npos);
  EXPECT_EQ(Column("CurrentOffset"), "{\"fileName\":\"" + in_ + "/e.csv\"}");
}

TEST_F(JobBadInputTest, StrictBadRowsOverTheRatioPauseWithoutAutoResume) {
  Stage({{"bad_rows.csv", "a.csv"}});
  Create("");
  ASSERT_TRUE(WaitForStatus("PAUSED"));
  const std::string msg = Column("ErrorMsg");
  EXPECT_NE(msg.find("TOO_MANY_FAILURE_ROWS_ERR"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1 of 4 rows were filtered"), std::string::npos) << msg;
  EXPECT_EQ(Column("JobRuntimeMsg"), "NULL");  // no automatic resume
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "0");
  EXPECT_EQ(harness_.Value("SELECT FirstErrorMsg FROM tasks(type := 'insert')"),
            "file " + in_ +
                "/a.csv line 2 column id: value cannot be converted to INTEGER "
                "(value 'x')");
}

TEST_F(JobBadInputTest, BadRowsWithinTheRatioAreFilteredAndRecorded) {
  Stage({{"bad_rows.csv", "a.csv"}});
  Create(", \"session.insert_max_filter_ratio\" = \"0.5\"");
  ASSERT_TRUE(WaitForTasks(1));
  EXPECT_EQ(harness_.Query("SELECT id, name FROM t ORDER BY name"),
            (Rows{{"1", "a"}, {"3", "c"}, {"NULL", "d"}}));
  EXPECT_NE(Column("LoadStatistic").find("\"scannedRows\":4,"), std::string::npos);
  EXPECT_NE(Column("LoadStatistic").find("\"filteredRows\":1}"), std::string::npos);
  EXPECT_EQ(harness_.QueryExpanded("SELECT regexp_replace(FileName, '.*/', ''), Line, ColumnName, "
                                   "Value, Reason FROM filtered_rows(\"job\" = \"b\")"),
            (Rows{{"a.csv", "2", "id", "x", "value cannot be converted to INTEGER"}}));
  EXPECT_EQ(Ledger(), (Rows{{"a.csv", "LOADED", "3", "false"}}));
}

TEST_F(JobBadInputTest, NonStrictTurnsUnconvertibleValuesIntoNull) {
  Stage({{"bad_rows.csv", "a.csv"}});
  Create(", \"session.enable_insert_strict\" = \"false\"");
  ASSERT_TRUE(WaitForTasks(1));
  EXPECT_EQ(harness_.Query("SELECT id, name FROM t ORDER BY name"),
            (Rows{{"1", "a"}, {"NULL", "b"}, {"3", "c"}, {"NULL", "d"}}));
  EXPECT_NE(Column("LoadStatistic").find("\"filteredRows\":0}"), std::string::npos);
}

TEST_F(JobBadInputTest, NullIntoNotNullColumnIsFiltered) {
  ASSERT_TRUE(harness_.conn().Execute("DROP TABLE t").ok());
  ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE t (id INTEGER NOT NULL, name VARCHAR)").ok());
  Stage({{"bad_rows.csv", "a.csv"}});
  Create(
      ", \"session.insert_max_filter_ratio\" = \"0.5\", \"session.enable_insert_strict\" = "
      "\"false\"");
  ASSERT_TRUE(WaitForTasks(1));
  EXPECT_EQ(harness_.Query("SELECT id, name FROM t ORDER BY name"), (Rows{{"1", "a"}, {"3", "c"}}));
  EXPECT_EQ(
      harness_.QueryExpanded("SELECT Line, Value, Reason FROM filtered_rows(\"job\" = \"b\") "
                             "ORDER BY Line"),
      (Rows{{"2", "x", "value is NULL or cannot be converted for NOT NULL column of type INTEGER"},
            {"4", "NULL", "NULL value for NOT NULL column"}}));
}

// The careful load that follows a bad row numbers records in file order in files large enough to
// be read by several threads, after fast loads that let DuckDB's threads insert in any order.
// (DuckDB keeps row_number() OVER () in scan order either way: this checks the line numbers,
// not which preserve_insertion_order the careful load runs with.)
TEST_F(JobBadInputTest, ABadRowDeepInALargeFileIsReportedAtItsLine) {
  constexpr int kRows = 2'000'000;
  constexpr int kBadLine = 1'500'001;
  for (const char* name : {"a.csv", "b.csv"}) {
    std::ofstream out(in_ + "/" + name);
    for (int line = 1; line <= kRows; ++line) {
      out << (std::string(name) == "b.csv" && line == kBadLine ? "oops" : std::to_string(line))
          << ",n\n";
    }
  }
  Create(", \"session.insert_max_filter_ratio\" = \"0.1\"");
  ASSERT_TRUE(harness_.WaitFor([&] { return Ledger().size() == 2; }));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), std::to_string(2 * kRows - 1));
  EXPECT_EQ(harness_.QueryExpanded("SELECT regexp_replace(FileName, '.*/', ''), Line, Value FROM "
                                   "filtered_rows(\"job\" = \"b\")"),
            (Rows{{"b.csv", std::to_string(kBadLine), "oops"}}));
  EXPECT_EQ(Ledger(), (Rows{{"a.csv", "LOADED", std::to_string(kRows), "false"},
                            {"b.csv", "LOADED", std::to_string(kRows - 1), "false"}}));
}

// Small files load many to a statement; the outcome is the one of loading each alone.
class SmallFilesTest : public JobBadInputTest {
 protected:
  // Files f00.csv.. where file i holds ids 1..i+1; line `bad_line` of file `bad_file` (if any)
  // gets a third field. Returns the rows each file holds with an even id.
  std::vector<int> WriteSmallFiles(int count, int bad_file = -1, int bad_line = 0) {
    std::vector<int> even;
    for (int i = 0; i < count; ++i) {
      std::string content;
      for (int id = 1; id <= i + 1; ++id) {
        content += std::to_string(id) + ",f" + std::to_string(i) +
                   (i == bad_file && id == bad_line ? ",extra" : "") + "\n";
      }
      WriteFile(in_ + "/f" + (i < 10 ? "0" : "") + std::to_string(i) + ".csv", content);
      even.push_back((i + 1) / 2);
    }
    harness_.Tick();  // settled: one batch
    return even;
  }
  Rows LedgerRows() {
    return harness_.QueryExpanded(
        "SELECT State, Rows FROM job_files(\"job\" = \"b\") ORDER BY FileName");
  }
};

TEST_F(SmallFilesTest, EachFileRecordsTheRowsItInserted) {
  const std::vector<int> even = WriteSmallFiles(40);
  auto created = harness_.Run(
      "CREATE JOB b ON STREAMING DO INSERT INTO t SELECT c1, c2 FROM local(\"file_path\" = \"" +
      in_ +
      "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\") WHERE CAST(c1 AS INT) % 2 = "
      "0");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(harness_.WaitFor([&] { return LedgerRows().size() == even.size(); }));
  Rows expected;
  int total = 0;
  for (int rows : even) {
    expected.push_back({"LOADED", std::to_string(rows)});
    total += rows;
  }
  EXPECT_EQ(LedgerRows(), expected);
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), std::to_string(total));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t WHERE id % 2 = 1"), "0");
}

TEST_F(SmallFilesTest, ABadFileAmongSmallOnesIsNamedAlone) {
  WriteSmallFiles(20, /*bad_file=*/12, /*bad_line=*/5);
  Create("");
  ASSERT_TRUE(WaitForStatus("PAUSED"));
  const std::string msg = Column("ErrorMsg");
  EXPECT_NE(msg.find(in_ + "/f12.csv"), std::string::npos) << msg;
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "0");
}

TEST_F(SmallFilesTest, SkipFileQuarantinesOnlyTheBadSmallFile) {
  WriteSmallFiles(20, /*bad_file=*/12, /*bad_line=*/5);
  Create(", \"on_error\" = \"skip_file\"");
  ASSERT_TRUE(harness_.WaitFor([&] { return LedgerRows().size() == 20; }));
  const Rows ledger = LedgerRows();
  for (size_t i = 0; i < ledger.size(); ++i) {
    EXPECT_EQ(ledger[i][0], i == 12 ? "QUARANTINED" : "LOADED") << i;
  }
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), std::to_string(20 * 21 / 2 - 13));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t WHERE name = 'f12'"), "0");
}

TEST_F(SmallFilesTest, AnAggregatingSelectStillRunsOncePerFile) {
  ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE n (rows BIGINT)").ok());
  WriteSmallFiles(10);
  auto created = harness_.Run(
      "CREATE JOB b ON STREAMING DO INSERT INTO n SELECT count(*) FROM local(\"file_path\" = \"" +
      in_ + "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(harness_.WaitFor([&] { return LedgerRows().size() == 10; }));
  EXPECT_EQ(harness_.Query("SELECT list(rows ORDER BY rows) FROM n"),
            (Rows{{"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"}}));
}

// JSON files of one task are read with the fields of its first file, by name: a file with the
// fields in another order, one lacking a field or one with an extra field loads the same rows.
TEST_F(JobBadInputTest, JsonFilesOfATaskAreReadByTheFieldNamesOfTheFirst) {
  LoadJson({{"a.json", "{\"id\": 1, \"name\": \"a\"}\n"},
            {"b.json", "{\"name\": \"b\", \"id\": 2}\n"},
            {"c.json", "{\"id\": 3}\n"},
            {"d.json", "{\"id\": 4, \"name\": \"d\", \"extra\": true}\n"}});
  EXPECT_EQ(harness_.Query("SELECT id, name FROM t ORDER BY id"),
            (Rows{{"1", "a"}, {"2", "b"}, {"3", "NULL"}, {"4", "d"}}));
}

// A value that does not fit the first file's column type is a bad row, filtered like any.
TEST_F(JobBadInputTest, AJsonValueOfAnotherTypeInALaterFileIsABadRow) {
  LoadJson({{"a.json", "{\"id\": 1, \"name\": \"a\"}\n{\"id\": 2, \"name\": \"b\"}\n"},
            {"b.json", "{\"id\": \"oops\", \"name\": \"c\"}\n{\"id\": 4, \"name\": \"d\"}\n"}},
           ", \"session.insert_max_filter_ratio\" = \"0.5\"");
  EXPECT_EQ(harness_.Query("SELECT id, name FROM t ORDER BY id"),
            (Rows{{"1", "a"}, {"2", "b"}, {"4", "d"}}));
  EXPECT_EQ(harness_.QueryExpanded("SELECT regexp_replace(FileName, '.*/', ''), Line, Value FROM "
                                   "filtered_rows(\"job\" = \"b\")"),
            (Rows{{"b.json", "1", "\"oops\""}}));  // the value as JSON text
}

// A field null in every row of the first file says nothing of its type: a later file's
// strings load as strings, not as JSON text with quotes.
TEST_F(JobBadInputTest, AJsonFieldNullInTheFirstFileTakesTheLaterFilesValues) {
  LoadJson(
      {{"a.json", "{\"id\": 1, \"name\": null}\n"}, {"b.json", "{\"id\": 2, \"name\": \"b\"}\n"}});
  EXPECT_EQ(harness_.Query("SELECT id, name FROM t ORDER BY id"),
            (Rows{{"1", "NULL"}, {"2", "b"}}));
}

// A JSON value nested 100,000 levels deep (200 KB) would exhaust the stack of DuckDB's reader
// and kill the server, at every restart: it is a bad file, named with its line, between two
// good files that load.
TEST_F(JobBadInputTest, DeeplyNestedJsonIsABadFileNotACrash) {
  const std::string deep =
      "{\"id\": 2, \"name\": " + std::string(100000, '[') + "1" + std::string(100000, ']') + "}\n";
  // First in its task: its fields would be the ones DuckDB detects the columns from.
  LoadJson({{"a.json", "{\"id\": 5, \"name\": \"ok\"}\n" + deep},
            {"b.json", "{\"id\": 1, \"name\": \"b\"}\n"},
            {"c.json", "{\"id\": 3, \"name\": \"c\"}\n"}},
           ", \"on_error\" = \"skip_file\"");
  EXPECT_EQ(harness_.Query("SELECT id, name FROM t ORDER BY id"), (Rows{{"1", "b"}, {"3", "c"}}));
  EXPECT_EQ(Ledger(), (Rows{{"a.json", "QUARANTINED", "0", "true"},
                            {"b.json", "LOADED", "1", "false"},
                            {"c.json", "LOADED", "1", "false"}}));
  const std::string error = harness_.QueryExpanded(
      "SELECT Error FROM job_files(\"job\" = \"b\") WHERE State = 'QUARANTINED'")[0][0];
  EXPECT_NE(error.find("a.json"), std::string::npos) << error;
  EXPECT_NE(error.find("deeper than 1000 levels at line 2"), std::string::npos) << error;
}

// A symlink loop among the files stopped every listing, so no file behind it loaded: now it is
// one file that cannot be read.
TEST_F(JobBadInputTest, ASymlinkLoopIsOneBadFileNotAStalledJob) {
  std::filesystem::create_symlink(in_ + "/b_loop.csv", in_ + "/b_loop.csv");
  Stage({{"good.csv", "a.csv"}, {"good.csv", "c.csv"}});
  Create(", \"on_error\" = \"skip_file\"");
  ASSERT_TRUE(harness_.WaitFor([&] { return Ledger().size() == 3; }, std::chrono::seconds(5)))
      << Column("Status") << " " << Column("ErrorMsg") << " " << Column("JobRuntimeMsg");
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "4");
  EXPECT_EQ(Ledger(), (Rows{{"a.csv", "LOADED", "2", "false"},
                            {"b_loop.csv", "QUARANTINED", "0", "true"},
                            {"c.csv", "LOADED", "2", "false"}}));
  const std::string error = harness_.QueryExpanded(
      "SELECT Error FROM job_files(\"job\" = \"b\") WHERE State = 'QUARANTINED'")[0][0];
  EXPECT_NE(error.find("b_loop.csv"), std::string::npos) << error;
  EXPECT_NE(error.find("symbolic links"), std::string::npos) << error;
  EXPECT_EQ(Column("Status"), "RUNNING");
}

// A few KB that expand to 8 MB, past the job's bound: that file is quarantined, nothing of it
// stays in the work directory, the files around it load.
TEST_F(JobBadInputTest, ADecompressionBombIsABadFile) {
  Stage({{"good.csv", "a.csv"}, {"bomb.csv.gz", "b.csv.gz"}, {"good.csv", "c.csv"}});
  auto created = harness_.Run(
      "CREATE JOB b ON STREAMING PROPERTIES (\"max_interval\" = \"1\", \"on_error\" = "
      "\"skip_file\") DO INSERT INTO t SELECT c1, c2 FROM local(\"file_path\" = \"" +
      in_ +
      "/*\", \"format\" = \"csv\", \"column_separator\" = \",\", "
      "\"max_decompressed_bytes\" = \"1000000\")");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(harness_.WaitFor([&] { return Ledger().size() == 3; }));
  EXPECT_EQ(Ledger(), (Rows{{"a.csv", "LOADED", "2", "false"},
                            {"b.csv.gz", "QUARANTINED", "0", "true"},
                            {"c.csv", "LOADED", "2", "false"}}));
  const std::string error = harness_.QueryExpanded(
      "SELECT Error FROM job_files(\"job\" = \"b\") WHERE State = 'QUARANTINED'")[0][0];
  EXPECT_NE(error.find("expands past 1000000 bytes"), std::string::npos) << error;
}

// A last line longer than DuckDB's reader takes (40 MB here) was dropped without a word while
// the rows before it loaded: the file is refused whole, naming its last line.
TEST_F(JobBadInputTest, AnOverlongLastLineIsABadFileNotALostRow) {
  WriteFile(in_ + "/a.csv", "1,one\n2,two\n3," + std::string(40 << 20, 'x') + "\n");
  Stage({{"good.csv", "b.csv"}});
  Create(", \"on_error\" = \"skip_file\"");
  ASSERT_TRUE(harness_.WaitFor([&] { return Ledger().size() == 2; }));
  EXPECT_EQ(Ledger(),
            (Rows{{"a.csv", "QUARANTINED", "0", "true"}, {"b.csv", "LOADED", "2", "false"}}));
  const std::string error = harness_.QueryExpanded(
      "SELECT Error FROM job_files(\"job\" = \"b\") WHERE State = 'QUARANTINED'")[0][0];
  EXPECT_NE(error.find("last line"), std::string::npos) << error;
  EXPECT_LT(error.size(), 1000u);
}

TEST_F(JobBadInputTest, EmptyFileLoadsNothing) {
  Stage({{"empty.csv", "a.csv"}, {"good.csv", "b.csv"}});
  Create("");
  ASSERT_TRUE(WaitForTasks(1));
  EXPECT_EQ(Ledger(), (Rows{{"a.csv", "LOADED", "0", "false"}, {"b.csv", "LOADED", "2", "false"}}));
}

}  // namespace
}  // namespace millrace::job

namespace millrace::job {
namespace {

TEST_F(JobBadInputTest, RetryLoadsQuarantinedFilesAgain) {
  Stage({{"good.csv", "a.csv"}, {"wrong_columns.csv", "b.csv"}, {"truncated.csv.gz", "c.csv.gz"}});
  Create(", \"on_error\" = \"skip_file\"");
  // One task or two, as the files settle: wait for all three in the ledger.
  ASSERT_TRUE(harness_.WaitFor([&] { return Ledger().size() == 3; }));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "2");
  auto unknown = harness_.Run("ALTER JOB b RETRY FILE '" + in_ + "/a.csv'");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("no quarantined file"), std::string::npos);
  auto tasks = [&] { return std::stoi(Column("SucceedTaskCount")); };

  // The producer fixes b.csv; a retry loads it, once.
  std::filesystem::remove(in_ + "/b.csv");
  Stage({{"good.csv", "b.csv"}});
  int before = tasks();
  ASSERT_TRUE(harness_.Run("ALTER JOB b RETRY FILE '" + in_ + "/b.csv'").ok());
  ASSERT_TRUE(harness_.WaitFor([&] { return tasks() > before; }));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "4");
  EXPECT_EQ(Ledger(), (Rows{{"a.csv", "LOADED", "2", "false"},
                            {"b.csv", "LOADED", "2", "false"},
                            {"c.csv.gz", "QUARANTINED", "0", "true"}}));
  // RETRY ALL of a still-broken file quarantines it again.
  before = tasks();
  ASSERT_TRUE(harness_.Run("ALTER JOB b RETRY ALL").ok());
  ASSERT_TRUE(harness_.WaitFor([&] { return tasks() > before; }));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "4");
  EXPECT_EQ(Ledger()[2], (std::vector<std::string>{"c.csv.gz", "QUARANTINED", "0", "true"}));
  EXPECT_EQ(Column("Status"), "RUNNING");
}

}  // namespace
}  // namespace millrace::job

namespace millrace::job {
namespace {

// A job paused by a failure resumes by itself (after 1 s here, min(2^n * base, cap) in general);
// a manual pause never does.
TEST_F(JobBadInputTest, FailuresResumeAutomaticallyManualPausesDoNot) {
  harness_.Stop();
  harness_.set_configure(
      [](JobServiceConfig& config) { config.tasks.auto_resume_base = std::chrono::seconds(1); });
  harness_.Start();
  Stage({{"wrong_columns.csv", "a.csv"}});
  Create("");
  ASSERT_TRUE(WaitForStatus("PAUSED"));
  EXPECT_NE(Column("JobRuntimeMsg").find("resumes automatically in 1 s"), std::string::npos);
  // The producer replaces the bad file; the automatic resume loads it.
  std::filesystem::remove(in_ + "/a.csv");
  Stage({{"good.csv", "a.csv"}});
  ASSERT_TRUE(WaitForTasks(1));
  EXPECT_EQ(Column("Status"), "RUNNING");
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "2");
  EXPECT_NE(Column("JobRuntimeMsg").find("resumed automatically after"), std::string::npos);

  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'b'").ok());
  Stage({{"good.csv", "b.csv"}});
  EXPECT_FALSE(
      harness_.WaitFor([&] { return Column("Status") != "PAUSED"; }, std::chrono::seconds(4)));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "2");
}

}  // namespace
}  // namespace millrace::job

namespace millrace::job {
namespace {

// The real file system, except that files named *unreadable* cannot be opened (EACCES: the
// tests run as root, who reads everything), files named *vanish* are deleted by another
// process between the listing and the download, and files named *grows* get a line more when
// they are first opened (a writer still appending after the listing).
class HostileFileSystem final : public source::LocalFileSystem {
 public:
  Result<std::vector<source::DirectoryEntry>> ListDirectory(const std::string& path) override {
    return Posix()->ListDirectory(path);
  }
  Result<source::FileStat> Stat(const std::string& path) override { return Posix()->Stat(path); }
  Result<std::unique_ptr<source::ReadableFile>> OpenForRead(const std::string& path) override {
    if (path.find("unreadable") != std::string::npos) {
      return source::ErrnoStatus(EACCES, "open", path);
    }
    if (path.find("vanish") != std::string::npos) std::filesystem::remove(path);
    if (path.find("grows") != std::string::npos && grown_.insert(path).second) {
      std::ofstream(path, std::ios::app) << "9,late\n";
    }
    return Posix()->OpenForRead(path);
  }
  Result<std::string> Resolve(const std::string& path) override { return Posix()->Resolve(path); }

 private:
  std::set<std::string> grown_;  // the task's fetcher threads open files one at a time each
};

class HostileFilesTest : public JobBadInputTest {
 protected:
  void SetUp() override {
    JobBadInputTest::SetUp();
    harness_.Stop();
    harness_.set_configure([this](JobServiceConfig& config) {
      config.make_source = [this](const load::FileFunctionOptions& options)
          -> Result<std::unique_ptr<source::FileSource>> {
        source::LocalSourceOptions local;
        local.settle_time = std::chrono::milliseconds(100);
        local.file_system = &file_system_;
        MR_ASSIGN_OR_RETURN(auto src, source::LocalSource::Create(options.pattern, local));
        return std::unique_ptr<source::FileSource>(std::move(src));
      };
    });
    harness_.Start();
  }
  HostileFileSystem file_system_;
};

TEST_F(HostileFilesTest, UnreadableAndVanishedFilesAreQuarantinedWithSkipFile) {
  Stage({{"good.csv", "a.csv"},
         {"good.csv", "b_unreadable.csv"},
         {"good.csv", "c_vanish.csv"},
         {"good.csv", "d.csv"}});
  Create(", \"on_error\" = \"skip_file\"");
  ASSERT_TRUE(WaitForTasks(1));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "4");
  EXPECT_EQ(Ledger(), (Rows{{"a.csv", "LOADED", "2", "false"},
                            {"b_unreadable.csv", "QUARANTINED", "0", "true"},
                            {"c_vanish.csv", "QUARANTINED", "0", "true"},
                            {"d.csv", "LOADED", "2", "false"}}));
  const Rows errors = harness_.QueryExpanded(
      "SELECT Error FROM job_files(\"job\" = \"b\") WHERE State = 'QUARANTINED' ORDER BY FileName");
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0][0].find("b_unreadable.csv"), std::string::npos) << errors[0][0];
  EXPECT_NE(errors[0][0].find("Permission denied"), std::string::npos) << errors[0][0];
  EXPECT_NE(errors[1][0].find("c_vanish.csv"), std::string::npos) << errors[1][0];
}

// A file that grows after it was listed is not quarantined, even with skip_file: the task fails,
// and the file's whole new version loads once the job lists it again.
TEST_F(HostileFilesTest, AFileThatGrowsAfterTheListingLoadsWholeLater) {
  Stage({{"good.csv", "a.csv"}, {"good.csv", "b_grows.csv"}, {"good.csv", "c.csv"}});
  Create(", \"on_error\" = \"skip_file\"");
  ASSERT_TRUE(harness_.WaitFor([&] { return Ledger().size() == 3; }));
  EXPECT_EQ(Ledger(), (Rows{{"a.csv", "LOADED", "2", "false"},
                            {"b_grows.csv", "LOADED", "3", "false"},
                            {"c.csv", "LOADED", "2", "false"}}));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "7");
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t WHERE name = 'late'"), "1");
}

TEST_F(HostileFilesTest, AnUnreadableFilePausesADefaultJobNamingIt) {
  Stage({{"good.csv", "a_unreadable.csv"}});
  Create("");
  ASSERT_TRUE(WaitForStatus("PAUSED"));
  const std::string msg = Column("ErrorMsg");
  EXPECT_EQ(msg.rfind("{\"code\":\"GET_REMOTE_DATA_ERROR\"", 0), 0u) << msg;
  EXPECT_NE(msg.find("a_unreadable.csv"), std::string::npos) << msg;
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "0");
}

}  // namespace
}  // namespace millrace::job
