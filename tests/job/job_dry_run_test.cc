// EXPLAIN CREATE JOB (job_dry_run.h) over a local directory: the first batch, the reader's
// schema, the rows the SELECT produces and the filtered rows — and nothing left behind.
#include "job/job_dry_run.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "job/job_test_util.h"

namespace millrace::job {

void PrintTo(const DryRunLine& line, std::ostream* os) {
  *os << "{" << line.section << " | " << line.item << " | " << line.detail << "}";
}

namespace {

using Lines = std::vector<DryRunLine>;

class JobDryRunTest : public LocalJobTest {
 protected:
  void SetUp() override {
    LocalJobTest::SetUp();
    ASSERT_TRUE(harness_.conn().Execute("INSERT INTO t VALUES (100, 'before')").ok());
  }

  std::string CreateSql(const std::string& name, const std::string& properties,
                        const std::string& select = "c1, c2", const std::string& table = "t") {
    return "CREATE JOB " + name + " ON STREAMING PROPERTIES (" + properties + ") DO INSERT INTO " +
           table + " SELECT " + select + " FROM local(\"file_path\" = \"" + in_ +
           "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")";
  }

  Result<Lines> Explain(const std::string& create) {
    return harness_.service().ExplainCreateJob(create);
  }

  // The lines of one section.
  static Lines Section(const Lines& lines, const std::string& section) {
    Lines out;
    for (const DryRunLine& line : lines) {
      if (line.section == section) out.push_back(line);
    }
    return out;
  }

  // What holds something under the service's work root (config.work_root: the database path +
  // ".work"): a link, or a file with bytes. Directories and emptied files wait there for the
  // next batch (load/work_dir.h).
  size_t WorkFiles() {
    const std::string root = dir_.Join("db.duckdb.work");
    if (!std::filesystem::exists(root)) return 0;
    size_t n = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (entry.is_symlink() || (entry.is_regular_file() && entry.file_size() > 0)) ++n;
    }
    return n;
  }

  // Nothing of a dry run stays: no job, ledger entry, task, filtered row, row of t, or file.
  void ExpectNothingLeft() {
    EXPECT_EQ(harness_.Value("SELECT count(*) FROM jobs(type := 'insert')"), "0");
    EXPECT_EQ(harness_.Value("SELECT count(*) FROM __millrace.jobs"), "0");
    EXPECT_EQ(harness_.Value("SELECT count(*) FROM __millrace.files"), "0");
    EXPECT_EQ(harness_.Value("SELECT count(*) FROM __millrace.tasks"), "0");
    EXPECT_EQ(harness_.Value("SELECT count(*) FROM __millrace.filtered_rows"), "0");
    EXPECT_EQ(harness_.Query("SELECT id, name FROM t"),
              (std::vector<std::vector<std::string>>{{"100", "before"}}));
    EXPECT_EQ(WorkFiles(), 0u);
  }

  void WriteRows(const std::string& name, int first, int count, const std::string& bad = "") {
    std::string content;
    for (int i = first; i < first + count; ++i)
      content += std::to_string(i) + ",row" + std::to_string(i) + "\n";
    WriteFile(in_ + "/" + name, content + bad);
  }
};

// a.csv (8 rows) and b.csv (4 rows and a bad one) are the first batch of two files; c.csv waits
// for the next task. By default (max_filter_ratio 0) the task fails on the bad row, which the dry
// run shows with its reason all the same.
TEST_F(JobDryRunTest, ShowsTheFirstBatchItsSchemaRowsAndFilteredRows) {
  WriteRows("a.csv", 0, 8);
  WriteRows("b.csv", 8, 4, "x,bad\n");
  WriteRows("c.csv", 12, 3);
  harness_.Tick();  // settled
  const std::string a = in_ + "/a.csv";
  const std::string b = in_ + "/b.csv";
  const auto size = [](const std::string& path) {
    return std::to_string(std::filesystem::file_size(path)) + " bytes";
  };

  auto lines = Explain(CreateSql("ev", "\"s3.max_batch_files\" = \"2\""));
  ASSERT_TRUE(lines.ok()) << lines.status().ToString();
  const Lines task = Section(*lines, "Task");
  ASSERT_EQ(task.size(), 2u);
  EXPECT_EQ(task[0].item, "batch");
  EXPECT_EQ(task[0].detail,
            "2 files, " +
                std::to_string(std::filesystem::file_size(a) + std::filesystem::file_size(b)) +
                " bytes; more files wait after them for the next tasks (s3.max_batch_files = 2, "
                "s3.max_batch_bytes = 10737418240)");
  EXPECT_EQ(task[1].item, "outcome");
  EXPECT_EQ(task[1].detail.rfind("would fail: TOO_MANY_FAILURE_ROWS_ERR: 1 of 13 rows were "
                                 "filtered, more than session.insert_max_filter_ratio",
                                 0),
            0u)
      << task[1].detail;
  // Rows per file as the load read them (the ratio is checked over the whole batch).
  EXPECT_EQ(Section(*lines, "File"),
            (Lines{{"File", a, size(a) + ", 8 rows"}, {"File", b, size(b) + ", 4 rows"}}));
  EXPECT_EQ(Section(*lines, "Column"),
            (Lines{{"Column", "c1", "VARCHAR"}, {"Column", "c2", "VARCHAR"}}));
  // Ten of the 13 rows, as the SELECT produces them (before the INSERT converts them).
  std::set<std::string> possible;
  for (int i = 0; i < 12; ++i)
    possible.insert("{\"c1\":\"" + std::to_string(i) + "\",\"c2\":\"row" + std::to_string(i) +
                    "\"}");
  possible.insert("{\"c1\":\"x\",\"c2\":\"bad\"}");
  const Lines rows = Section(*lines, "Row");
  ASSERT_EQ(rows.size(), 10u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].item, std::to_string(i + 1));
    EXPECT_EQ(possible.count(rows[i].detail), 1u) << rows[i].detail;
  }
  // The reason a task records (filtered_rows()); line 5 of b.csv.
  EXPECT_EQ(Section(*lines, "Filtered"),
            (Lines{{"Filtered", b + " line 5",
                    "column id: value cannot be converted to INTEGER (value 'x')"}}));
  // The order of the sections.
  EXPECT_EQ(lines->front().section, "Task");
  EXPECT_EQ(lines->back().section, "Filtered");
  ExpectNothingLeft();

  // A ratio that allows the bad row: the task would commit, and the files show their rows.
  lines = Explain(CreateSql("ev",
                            "\"s3.max_batch_files\" = \"2\", "
                            "\"session.insert_max_filter_ratio\" = \"0.5\""));
  ASSERT_TRUE(lines.ok()) << lines.status().ToString();
  EXPECT_EQ(Section(*lines, "Task")[1].detail,
            "would commit: 12 rows loaded, 1 filtered, from 2 files");
  EXPECT_EQ(Section(*lines, "File"),
            (Lines{{"File", a, size(a) + ", 8 rows"}, {"File", b, size(b) + ", 4 rows"}}));
  ExpectNothingLeft();

  // The job created afterwards is the first job: the dry run took no name and no id.
  ASSERT_TRUE(harness_.Run(CreateSql("ev", "\"session.insert_max_filter_ratio\" = \"0.5\"")).ok());
  EXPECT_EQ(harness_.JobColumn("ev", "Id"), "1");
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.Value("SELECT count(*) FROM t") == "16"; }));
}

// The `offset` property and a 0-byte file: the batch starts after the offset; an empty file is
// listed and loads no rows; at most ten rows are shown of more.
TEST_F(JobDryRunTest, StartsAfterTheOffsetAndShowsTenRowsOfMore) {
  WriteRows("a.csv", 0, 3);
  WriteRows("b.csv", 3, 30);
  WriteFile(in_ + "/c.csv", "");
  harness_.Tick();
  auto lines = Explain(CreateSql("o", "\"offset\" = \"" + in_ + "/a.csv\""));
  ASSERT_TRUE(lines.ok()) << lines.status().ToString();
  const Lines files = Section(*lines, "File");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].item, in_ + "/b.csv");
  EXPECT_EQ(files[1], (DryRunLine{"File", in_ + "/c.csv", "0 bytes, 0 rows"}));
  EXPECT_EQ(Section(*lines, "Task")[1].detail,
            "would commit: 30 rows loaded, 0 filtered, from 2 files");
  EXPECT_EQ(Section(*lines, "Row").size(), 10u);
  EXPECT_TRUE(Section(*lines, "Filtered").empty());
  ExpectNothingLeft();
}

// A file that cannot be read: with on_error = skip_file the task quarantines it and loads the
// rest; with pause (the default) the task fails naming it.
TEST_F(JobDryRunTest, ShowsAQuarantinedFileOrTheErrorTheTaskWouldFailWith) {
  WriteRows("a.csv", 0, 2);
  WriteFile(in_ + "/b.csv", "1,a\n2,b,extra\n3,c\n");
  harness_.Tick();
  auto skipped = Explain(CreateSql("q", "\"on_error\" = \"skip_file\""));
  ASSERT_TRUE(skipped.ok()) << skipped.status().ToString();
  EXPECT_EQ(Section(*skipped, "Task")[1].detail,
            "would commit: 2 rows loaded, 0 filtered, from 1 file; 1 file quarantined");
  const Lines files = Section(*skipped, "File");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_NE(files[1].detail.find(", quarantined: "), std::string::npos) << files[1].detail;
  // The reader reads the loaded file only.
  EXPECT_EQ(Section(*skipped, "Row").size(), 2u);
  ExpectNothingLeft();

  auto paused = Explain(CreateSql("q", ""));
  ASSERT_TRUE(paused.ok()) << paused.status().ToString();
  const std::string outcome = Section(*paused, "Task")[1].detail;
  EXPECT_EQ(outcome.rfind("would fail: LOAD_ERR: ", 0), 0u) << outcome;
  EXPECT_NE(outcome.find(in_ + "/b.csv"), std::string::npos) << outcome;
  ExpectNothingLeft();
}

// A SELECT whose columns do not fit the table passes CREATE JOB (it checks the target exists)
// and fails the first task: the dry run says so in its outcome.
TEST_F(JobDryRunTest, ColumnsThatDoNotFitFailTheTaskInTheOutcome) {
  WriteRows("a.csv", 0, 2);
  harness_.Tick();
  auto lines = Explain(CreateSql("wide", "", "c1, c2, c1 || c2"));
  ASSERT_TRUE(lines.ok()) << lines.status().ToString();
  const std::string outcome = Section(*lines, "Task")[1].detail;
  EXPECT_EQ(outcome.rfind("would fail: LOAD_ERR: ", 0), 0u) << outcome;
  EXPECT_NE(outcome.find("3 values were supplied"), std::string::npos) << outcome;
  // The rows the SELECT produces are shown all the same.
  EXPECT_EQ(Section(*lines, "Row").size(), 2u);
  ExpectNothingLeft();
}

TEST_F(JobDryRunTest, NoFilesToLoadYetIsAnAnswer) {
  auto lines = Explain(CreateSql("idle", ""));
  ASSERT_TRUE(lines.ok()) << lines.status().ToString();
  EXPECT_EQ(*lines,
            (Lines{{"Task", "batch", "no files to load yet: nothing matches " + in_ + "/*.csv"}}));
  ExpectNothingLeft();
}

// A bad statement gets the error CREATE JOB gives it.
TEST_F(JobDryRunTest, BadStatementsGetTheErrorsOfCreateJob) {
  WriteRows("a.csv", 0, 2);
  harness_.Tick();
  const std::vector<std::string> bad = {
      // parse error
      "CREATE JOB p ONN STREAMING DO INSERT INTO t SELECT c1 FROM local(\"file_path\" = \"" + in_ +
          "/*.csv\")",
      // unknown property, bad value
      CreateSql("p", "\"max_intervals\" = \"2\""),
      CreateSql("p", "\"on_error\" = \"explode\""),
      // missing table
      CreateSql("p", "", "c1, c2", "nowhere"),
      // bad reader parameter
      "CREATE JOB p ON STREAMING DO INSERT INTO t SELECT c1 FROM local(\"file_path\" = \"" + in_ +
          "/*.csv\", \"colour\" = \"red\")",
      // no source call
      "CREATE JOB p ON STREAMING DO INSERT INTO t SELECT 1, 'x'",
  };
  for (const std::string& statement : bad) {
    auto explained = Explain(statement);
    ASSERT_FALSE(explained.ok()) << statement;
    auto created = harness_.Run(statement);
    ASSERT_FALSE(created.ok()) << statement;
    EXPECT_EQ(explained.status(), created.status()) << statement;
  }
  // A name taken: ALREADY_EXISTS, as CREATE JOB.
  ASSERT_TRUE(harness_.Run(CreateSql("taken", "")).ok());
  auto taken = Explain(CreateSql("taken", ""));
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(taken.status().message(), "job taken already exists");
}

TEST_F(JobDryRunTest, ChangeStreamsAreRefused) {
  for (const std::string& statement :
       {std::string("CREATE JOB cdc ON STREAMING DO INSERT INTO t SELECT * FROM cdc_stream("
                    "\"type\" = \"postgres\", \"jdbc_url\" = \"jdbc:postgresql://127.0.0.1:1/db\", "
                    "\"user\" = \"u\", \"password\" = \"p\", \"table\" = \"public.t\")"),
        std::string("CREATE JOB cdc ON STREAMING FROM POSTGRES (\"jdbc_url\" = "
                    "\"jdbc:postgresql://127.0.0.1:1/db\", \"user\" = \"u\", \"password\" = \"p\") "
                    "TO DATABASE shop")}) {
    auto explained = Explain(statement);
    ASSERT_FALSE(explained.ok()) << statement;
    EXPECT_EQ(explained.status().code(), StatusCode::kNotSupported) << statement;
    EXPECT_NE(explained.status().message().find("EXPLAIN CREATE JOB covers file jobs"),
              std::string::npos)
        << explained.status().ToString();
  }
  auto other = harness_.service().ExplainCreateJob("PAUSE JOB WHERE jobname = 'x'");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace millrace::job
