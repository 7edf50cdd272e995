// A file job into a PostgreSQL table through the real server binary, a real PostgreSQL 15 and
// the mariadb client's wire protocol: CREATE CATALOG, CREATE JOB ... INSERT INTO
// pg.public.events, the rows in PostgreSQL with the job's ledger next to them; a kill -9 and
// a crash between PostgreSQL's commit and the catalog's lose and double nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "access/access_e2e_util.h"
#include "access/server_on_postgres_suite.h"
#include "testing/server_process.h"
#include "testing/temp_dir.h"
#include "testing/wait_for.h"

namespace millrace::pgsink {
namespace {

class PgSinkE2ETest : public access::ServerOnPostgresSuite {
 protected:
  void SetUp() override {
    table_ = "events" + std::to_string(++counter_);
    Psql("CREATE TABLE public." + table_ + " (id bigint NOT NULL, name text, at timestamptz)");
    NewDataDir();
    Start();
    CreatePgCatalog();
  }

  // File `n` of the inbox: ids n*100 .. n*100+rows-1.
  void WriteFile(int n, int rows = 3) {
    std::string text;
    for (int i = 0; i < rows; ++i)
      text += std::to_string(n * 100 + i) + ",name " + std::to_string(i) + ",2024-05-0" +
              std::to_string(1 + i % 9) + " 10:00:00+00\n";
    char name[32];
    std::snprintf(name, sizeof(name), "f%03d.csv", n);
    std::ofstream(inbox_ + "/" + name) << text;
  }
  // `properties` are added to max_interval's.
  std::string CreateJob(const std::string& properties = "") {
    return "CREATE JOB ev ON STREAMING PROPERTIES (\"max_interval\" = \"1\"" + properties +
           ") DO INSERT INTO pg.public." + table_ +
           " SELECT CAST(c1 AS BIGINT), c2, CAST(c3 AS TIMESTAMPTZ) FROM local(\"file_path\" = "
           "\"" +
           inbox_ + "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")";
  }
  bool PgHas(int rows) { return ServerOnPostgresSuite::PgHas(table_, rows); }

  static int counter_;
  std::string table_;
};

int PgSinkE2ETest::counter_ = 0;

TEST_F(PgSinkE2ETest, AFileJobLoadsIntoPostgresqlExactlyOnce) {
  WriteFile(1);
  WriteFile(2);
  // A dry run stages the rows as the job would, and writes nothing into PostgreSQL.
  std::string dry = CreateJob();
  dry.replace(0, std::string("CREATE JOB ev").size(), "EXPLAIN CREATE JOB dry");
  const access::Rows explained = Exec(dry);
  EXPECT_FALSE(explained.empty());
  EXPECT_EQ(Psql("SELECT count(*) FROM public." + table_), "0");
  Exec(CreateJob());
  ASSERT_TRUE(PgHas(6)) << mr_->server->Log();
  EXPECT_EQ(Psql("SELECT id, name, at FROM public." + table_ + " WHERE id = 101"),
            "101|name 1|2024-05-02 10:00:00+00");
  EXPECT_EQ(Psql("SELECT string_agg(file_key || ':' || state || ':' || rows, ',' ORDER BY "
                 "file_key) FROM millrace.files"),
            inbox_ + "/f001.csv:LOADED:3," + inbox_ + "/f002.csv:LOADED:3");
  // The job's view shows the same offset as the sink's schema.
  const access::Rows offset =
      Exec("SELECT CurrentOffset FROM jobs(\"type\" = \"insert\") WHERE Name = 'ev'");
  ASSERT_EQ(offset.size(), 1u);
  EXPECT_EQ(Psql("SELECT job_offset FROM millrace.jobs"), offset[0][0]);

  // kill -9, more files, a restart: each file once.
  Kill();
  WriteFile(3);
  Start({});
  ASSERT_TRUE(PgHas(9)) << mr_->server->Log();
  EXPECT_EQ(Psql("SELECT count(DISTINCT id) FROM public." + table_), "9");
  // A SELECT through Millrace of the PostgreSQL table is refused, saying why.
  auto read = access::Query(mr_->root.get(), "SELECT count(*) FROM pg.public." + table_);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("1235"), std::string::npos) << read.status().message();
  EXPECT_NE(read.status().message().find("pg is an external catalog"), std::string::npos);
}

// A file whose rows PostgreSQL refuses (a CHECK) is set aside by on_error = skip_file, named
// with PostgreSQL's reason; the other files of its batch, before and after it, load (sent file
// by file once the batch's COPY was refused).
TEST_F(PgSinkE2ETest, SkipFileSetsAsideTheFilePostgresqlRefuses) {
  // With a primary key: each file's rows go through a temporary table of their own.
  Psql("ALTER TABLE public." + table_ +
       " ADD PRIMARY KEY (id), ADD CONSTRAINT no_201 CHECK (id "
       "<> 201)");
  for (int n = 1; n <= 4; ++n)
    WriteFile(n);
  Exec(CreateJob(", \"on_error\" = \"skip_file\""));
  ASSERT_TRUE(PgHas(9)) << mr_->server->Log();
  EXPECT_EQ(Psql("SELECT count(*) FROM public." + table_ + " WHERE id BETWEEN 200 AND 299"), "0");
  EXPECT_EQ(Psql("SELECT string_agg(file_key || ':' || state, ',' ORDER BY file_key) FROM "
                 "millrace.files WHERE file_key LIKE '" +
                 inbox_ + "/%'"),
            inbox_ + "/f001.csv:LOADED," + inbox_ + "/f002.csv:QUARANTINED," + inbox_ +
                "/f003.csv:LOADED," + inbox_ + "/f004.csv:LOADED");
  const access::Rows why =
      Exec("SELECT Error FROM job_files(\"job\" = \"ev\") WHERE State = 'QUARANTINED'");
  ASSERT_EQ(why.size(), 1u);
  EXPECT_NE(why[0][0].find("f002.csv"), std::string::npos) << why[0][0];
  EXPECT_NE(why[0][0].find("violates check constraint \"no_201\""), std::string::npos) << why[0][0];
  EXPECT_EQ(Exec("SELECT Status FROM jobs(\"type\" = \"insert\") WHERE Name = 'ev'")[0][0],
            "RUNNING");
}

// Rows that PostgreSQL's types would refuse are filtered before the COPY, each with its file,
// line, column and reason, as into a DuckDB table; the others arrive.
TEST_F(PgSinkE2ETest, BadRowsAreFilteredWithTheirReasons) {
  std::ofstream(inbox_ + "/bad.csv") << "1,one,2024-05-01 10:00:00+00\n"
                                        "x,two,2024-05-01 10:00:00+00\n"
                                        "3,three,not a time\n"
                                        ",four,2024-05-01 10:00:00+00\n"
                                        "5,five,2024-05-05 10:00:00+00\n";
  Exec(
      "CREATE JOB ev ON STREAMING PROPERTIES (\"max_interval\" = \"1\", "
      "\"session.insert_max_filter_ratio\" = \"0.9\") DO INSERT INTO pg.public." +
      table_ + " SELECT c1, c2, c3 FROM local(\"file_path\" = \"" + inbox_ +
      "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")");
  ASSERT_TRUE(PgHas(2)) << mr_->server->Log();
  EXPECT_EQ(Psql("SELECT string_agg(id || ':' || name, ',' ORDER BY id) FROM public." + table_),
            "1:one,5:five");
  EXPECT_EQ(Exec("SELECT regexp_replace(FileName, '.*/', ''), Line, ColumnName, Value, Reason "
                 "FROM filtered_rows(\"job\" = \"ev\") ORDER BY Line"),
            (access::Rows{{"bad.csv", "2", "id", "x", "value cannot be converted to BIGINT"},
                          {"bad.csv", "3", "at", "not a time",
                           "value cannot be converted to TIMESTAMP WITH TIME ZONE"},
                          {"bad.csv", "4", "id", "NULL", "NULL value for NOT NULL column"}}));
  EXPECT_EQ(Psql("SELECT string_agg(state || ':' || rows, ',') FROM millrace.files WHERE file_key "
                 "LIKE '" +
                 inbox_ + "/%'"),
            "LOADED:2");
}

TEST_F(PgSinkE2ETest, ACrashBetweenTheTwoCommitsLosesAndDoublesNothing) {
  WriteFile(1);
  Kill();
  // The first commit reaches PostgreSQL, then the server dies before the catalog's.
  Start({"MILLRACE_FAIL_POINTS=pgsink.between_commits=crash"});
  Exec(CreateJob());
  ASSERT_NO_FATAL_FAILURE(WaitForCrash("pgsink.between_commits"));
  EXPECT_EQ(Psql("SELECT count(*) FROM public." + table_), "3");
  WriteFile(2);
  Start({});
  ASSERT_TRUE(PgHas(6)) << mr_->server->Log();
  EXPECT_EQ(Psql("SELECT count(DISTINCT id) FROM public." + table_), "6");
  EXPECT_NE(mr_->server->Log().find("takes the offset its sink committed"), std::string::npos);
  const access::Rows files =
      Exec("SELECT count(*) FROM job_files(\"job\" = \"ev\") WHERE State = 'LOADED'");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0][0], "2");
}

// A table with a primary key is a Doris UNIQUE table: the newest row of each key wins, by file
// and then line within a batch, and by commit between tasks.
TEST_F(PgSinkE2ETest, ATableWithAPrimaryKeyKeepsTheNewestRowOfEachKey) {
  Psql("CREATE TABLE public.latest (id bigint PRIMARY KEY, name text, at timestamptz)");
  auto write = [&](const std::string& file, const std::string& text) {
    std::ofstream(inbox_ + "/" + file) << text;
  };
  // In one batch: id 1 in both files (the second's wins), id 3 twice in one file (its last
  // line wins).
  write("a1.csv", "1,first,2024-01-01 00:00:00+00\n2,kept,2024-01-01 00:00:00+00\n");
  write("a2.csv",
        "1,second,2024-01-02 00:00:00+00\n3,early,2024-01-02 00:00:00+00\n3,late,2024-01-03 "
        "00:00:00+00\n");
  Exec(
      "CREATE JOB latest ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO INSERT INTO "
      "pg.public.latest SELECT CAST(c1 AS BIGINT), c2, CAST(c3 AS TIMESTAMPTZ) FROM "
      "local(\"file_path\" = \"" +
      inbox_ + "/a*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")");
  auto rows = [&] { return Psql("SELECT id, name FROM public.latest ORDER BY id"); };
  ASSERT_TRUE(testing::WaitFor([&] { return rows() == "1|second\n2|kept\n3|late"; },
                               std::chrono::seconds(60)))
      << rows() << "\n"
      << mr_->server->Log();
  // A later task's row replaces the stored one.
  write("a3.csv", "2,replaced,2024-01-04 00:00:00+00\n4,new,2024-01-04 00:00:00+00\n");
  ASSERT_TRUE(testing::WaitFor([&] { return rows() == "1|second\n2|replaced\n3|late\n4|new"; },
                               std::chrono::seconds(60)))
      << rows() << "\n"
      << mr_->server->Log();
  EXPECT_EQ(Psql("SELECT at FROM public.latest WHERE id = 2"), "2024-01-04 00:00:00+00");
  Exec("DROP JOB WHERE jobname = 'latest'");
}

// Doris's delete sign into a table with a primary key: a key whose newest row has the sign 1 is
// deleted in PostgreSQL, within a batch by file and line, and between tasks by commit.
TEST_F(PgSinkE2ETest, TheDeleteSignDeletesByKey) {
  Psql("CREATE TABLE public.signed (id bigint PRIMARY KEY, name text)");
  auto write = [&](const std::string& file, const std::string& text) {
    std::ofstream(inbox_ + "/" + file) << text;
  };
  write("s1.csv", "1,one,0\n2,two,0\n3,three,0\n");
  // 2 deleted; 4 deleted before it exists (nothing to do); 3 deleted, then written again.
  write("s2.csv", "2,two,1\n4,four,1\n3,three,1\n3,three again,0\n");
  Exec(
      "CREATE JOB signed ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO INSERT INTO "
      "pg.public.signed (id, name, __DORIS_DELETE_SIGN__) SELECT CAST(c1 AS BIGINT), c2, "
      "CAST(c3 AS INT) FROM local(\"file_path\" = \"" +
      inbox_ + "/s*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")");
  auto rows = [&] { return Psql("SELECT id, name FROM public.signed ORDER BY id"); };
  ASSERT_TRUE(
      testing::WaitFor([&] { return rows() == "1|one\n3|three again"; }, std::chrono::seconds(60)))
      << rows() << "\n"
      << mr_->server->Log();
  write("s3.csv", "1,one,1\n5,five,0\n");
  ASSERT_TRUE(
      testing::WaitFor([&] { return rows() == "3|three again\n5|five"; }, std::chrono::seconds(60)))
      << rows() << "\n"
      << mr_->server->Log();
  // On a table without a primary key the sign is refused, as on a Doris DUPLICATE table.
  auto refused = access::Query(
      mr_->root.get(),
      "CREATE JOB nokey ON STREAMING DO INSERT INTO pg.public." + table_ +
          " (id, name, at, __DORIS_DELETE_SIGN__) SELECT CAST(c1 AS BIGINT), c2, NULL, 0 FROM "
          "local(\"file_path\" = \"" +
          inbox_ + "/s*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("has no primary key"), std::string::npos)
      << refused.status().message();
}

// A catalog that jobs write into stays until they are dropped; a new password given with ALTER
// CATALOG reaches the running job at its next connection.
TEST_F(PgSinkE2ETest, ACatalogFollowsItsJobs) {
  // The role makes the millrace schema itself (another role's would need grants: the docs).
  Psql(
      "DROP SCHEMA IF EXISTS millrace CASCADE; DROP ROLE IF EXISTS rotating; CREATE ROLE "
      "rotating LOGIN PASSWORD 'old-pw'; GRANT ALL ON SCHEMA public TO rotating; GRANT ALL ON "
      "public." +
      table_ + " TO rotating; GRANT CREATE ON DATABASE postgres TO rotating");
  Exec("CREATE CATALOG rot PROPERTIES ('type' = 'postgresql', 'host' = '" + pg_->host() +
       "', 'port' = '" + std::to_string(pg_->port()) +
       "', 'database' = 'postgres', 'user' = 'rotating', 'password' = 'old-pw')");
  WriteFile(1);
  std::string create = CreateJob();
  create.replace(create.find("pg.public."), 2, "rot");
  Exec(create);
  ASSERT_TRUE(PgHas(3)) << mr_->server->Log();
  auto refused = access::Query(mr_->root.get(), "DROP CATALOG rot");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("catalog rot is the target of job(s) ev"),
            std::string::npos)
      << refused.status().message();
  // The password changes in PostgreSQL and in the catalog; the job's connection is cut.
  Psql("ALTER ROLE rotating PASSWORD 'new-pw'");
  Exec("ALTER CATALOG rot SET PROPERTIES ('password' = 'new-pw')");
  Psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'rotating'");
  WriteFile(2);
  ASSERT_TRUE(PgHas(6)) << mr_->server->Log();
  Exec("DROP JOB WHERE jobname = 'ev'");
  Exec("DROP CATALOG rot");
}

}  // namespace
}  // namespace millrace::pgsink
