// kill -9 of the server while a file job loads 100 files into a PostgreSQL table, at moments
// picked by its progress and at the sink's two crash windows (fail points), with a PostgreSQL
// restart in the middle: at the end the table holds each file's rows exactly once and the
// ledger in PostgreSQL's millrace schema names each file once, as the job's view does. Into a
// table without a primary key (every row kept), and into one with a primary key (a Doris
// UNIQUE table) where each of the last 50 files repeats a key of the file 50 before it with a
// newer payload: every key ends with its newest row.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "access/access_e2e_util.h"
#include "access/server_on_postgres_suite.h"
#include "testing/server_process.h"
#include "testing/temp_dir.h"
#include "testing/wait_for.h"

namespace millrace::pgsink {
namespace {

// Enough that a job outrunning the test's polls is still mid-load at each kill.
constexpr int kFiles = 300;
constexpr int kRowsPerFile = 5;

constexpr int kRepeatFrom = 50;

class PgSinkCrashTest : public access::ServerOnPostgresSuite,
                        public ::testing::WithParamInterface<bool /*primary key*/> {
 protected:
  void SetUp() override {
    Psql("DROP TABLE IF EXISTS public.landed; DROP SCHEMA IF EXISTS millrace CASCADE");
    Psql(std::string("CREATE TABLE public.landed (file int NOT NULL, line int NOT NULL, payload "
                     "text") +
         (GetParam() ? ", PRIMARY KEY (file, line))" : ")"));
    NewDataDir();
    for (int f = 0; f < kFiles; ++f) {
      std::string text;
      for (int line = 0; line < kRowsPerFile; ++line)
        text += std::to_string(f) + "," + std::to_string(line) + ",payload " +
                std::to_string(f * 100 + line) + "\n";
      // The key (f - 50, 0) again, newer.
      if (GetParam() && f >= kRepeatFrom)
        text += std::to_string(f - kRepeatFrom) + ",0,newer from " + std::to_string(f) + "\n";
      char name[32];
      std::snprintf(name, sizeof(name), "/f%03d.csv", f);
      std::ofstream(inbox_ + name) << text;
    }
  }

  // Files the sink's ledger holds (-1 before the schema exists).
  static int LedgerFiles() {
    auto out = pg_->Sql("SELECT count(*) FROM millrace.files");
    return out.ok() ? std::atoi(out->c_str()) : -1;
  }
  // Runs the server with the fail point `point` crashing it; returns once it died there.
  void CrashAt(const std::string& point) {
    const int before = LedgerFiles();
    Start({"MILLRACE_FAIL_POINTS=" + point + "=crash"});
    int status = 0;
    ASSERT_TRUE(testing::WaitForExit(mr_->server->pid(), std::chrono::seconds(60), &status))
        << point << ": " << mr_->server->Log();
    EXPECT_EQ(testing::ExitCode(status), 137) << point;
    Kill();
    // The crash before PostgreSQL's commit left nothing; the one after it, one batch.
    if (point == "pgsink.before_commit") EXPECT_EQ(LedgerFiles(), before);
  }
};

TEST_P(PgSinkCrashTest, KillNineAndAPostgresqlRestartLoseAndDoubleNothing) {
  Start();
  auto created = access::Query(mr_->root.get(),
                               "CREATE CATALOG pg PROPERTIES ('type' = 'postgresql', 'host' = '" +
                                   pg_->host() + "', 'port' = '" + std::to_string(pg_->port()) +
                                   "', 'database' = 'postgres', 'user' = '" + pg_->user() +
                                   "', 'password' = '" + pg_->password() + "')");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  created = access::Query(
      mr_->root.get(),
      "CREATE JOB land ON STREAMING PROPERTIES (\"max_interval\" = \"1\", "
      "\"s3.max_batch_files\" = \"3\") DO INSERT INTO pg.public.landed SELECT CAST(c1 AS "
      "INT), CAST(c2 AS INT), c3 FROM local(\"file_path\" = \"" +
          inbox_ + "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  // Killed after a number of files picked at random past what the last run left, each time
  // further in.
  std::mt19937 random(20261206);
  for (int round = 0; round < 6; ++round) {
    int target = std::max(LedgerFiles(), 0) + 5 + static_cast<int>(random() % 8);
    ASSERT_TRUE(testing::WaitFor([&] { return LedgerFiles() >= target; }, std::chrono::seconds(60)))
        << "round " << round << ": " << LedgerFiles() << " files\n"
        << mr_->server->Log();
    if (round == 2) {
      // PostgreSQL restarts under the running job, which reconnects.
      ASSERT_TRUE(pg_->Restart().ok());
      target = LedgerFiles() + 3;
      ASSERT_TRUE(
          testing::WaitFor([&] { return LedgerFiles() >= target; }, std::chrono::seconds(60)))
          << mr_->server->Log();
    }
    Kill();
    // Killed mid-load: the crash windows below still have batches to cut.
    ASSERT_LT(LedgerFiles(), kFiles - 10) << "round " << round;
    Start();
  }
  Kill();
  CrashAt("pgsink.before_commit");
  CrashAt("pgsink.between_commits");
  CrashAt("task.after_commit");
  Start();
  ASSERT_TRUE(testing::WaitFor([&] { return LedgerFiles() == kFiles; }, std::chrono::seconds(120)))
      << LedgerFiles() << " files\n"
      << mr_->server->Log();
  EXPECT_EQ(Psql("SELECT count(*), count(DISTINCT (file, line)) FROM public.landed"),
            std::to_string(kFiles * kRowsPerFile) + "|" + std::to_string(kFiles * kRowsPerFile));
  EXPECT_EQ(Psql("SELECT count(*) FROM (SELECT file FROM public.landed GROUP BY file HAVING "
                 "count(*) <> " +
                 std::to_string(kRowsPerFile) + ") wrong"),
            "0");
  if (GetParam()) {
    // Every repeated key holds its newest row.
    EXPECT_EQ(Psql("SELECT count(*) FROM public.landed WHERE line = 0 AND file < " +
                   std::to_string(kRepeatFrom) + " AND payload = 'newer from ' || (file + " +
                   std::to_string(kRepeatFrom) + ")"),
              std::to_string(kRepeatFrom));
  }
  // The ledger in PostgreSQL names every file once, with the rows it read.
  EXPECT_EQ(Psql("SELECT count(*) FROM millrace.files f WHERE f.state = 'LOADED' AND f.rows = " +
                 std::to_string(kRowsPerFile) + " + CASE WHEN " + (GetParam() ? "true" : "false") +
                 " AND f.file_key >= '" + inbox_ + "/f0" + std::to_string(kRepeatFrom) +
                 ".csv' THEN 1 ELSE 0 END"),
            std::to_string(kFiles));
  // And the job's view agrees with the sink.
  auto view = access::Query(mr_->root.get(),
                            "SELECT count(*) FROM job_files(\"job\" = \"land\") WHERE State = "
                            "'LOADED'");
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ((*view)[0][0], std::to_string(kFiles));
  auto offset =
      access::Query(mr_->root.get(), "SELECT CurrentOffset FROM jobs(\"type\" = \"insert\")");
  ASSERT_TRUE(offset.ok());
  EXPECT_EQ(Psql("SELECT job_offset FROM millrace.jobs"), (*offset)[0][0]);
}

INSTANTIATE_TEST_SUITE_P(Targets, PgSinkCrashTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "PrimaryKey" : "NoKey";
                         });

}  // namespace
}  // namespace millrace::pgsink
