// Jobs and privileges (job_access.h): what managing a job needs, a job that runs as its
// definer and pauses when the definer loses a privilege, and views that show a user only the
// jobs on tables the user may read.
#include "job/job_access.h"

#include <gtest/gtest.h>

#include "access/access_control.h"
#include "access/memory_user_store.h"
#include "job/job_errors.h"
#include "job/job_test_util.h"

namespace millrace::job {
namespace {

using access::GrantObject;
using access::Privilege;
using access::PrivilegeSet;
using access::UserIdentity;

PrivilegeSet Set(std::initializer_list<Privilege> privileges) {
  PrivilegeSet set;
  for (Privilege p : privileges)
    set.Add(p);
  return set;
}

class JobAccessTest : public LocalJobTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(control_.Load().ok());
    harness_.set_configure([this](JobServiceConfig& config) {
      config.access.control = &control_;
      config.access.connection_user = [this](uint64_t id) -> std::optional<std::string> {
        if (id == viewer_connection_) return viewer_;
        return std::nullopt;
      };
    });
    LocalJobTest::SetUp();
    ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE u (id INTEGER, name VARCHAR)").ok());
    for (const char* user : {"ops", "loader", "reader", "stranger"}) {
      ASSERT_TRUE(control_.CreateUser(UserIdentity{user, {}}, {}, false).ok()) << user;
    }
    // local() is an administrator's: a job reading local files needs ADMIN_PRIV.
    Grant("ops", {Privilege::kAdmin}, "", "");
    Grant("loader", {Privilege::kLoad}, "main", "t");
    Grant("reader", {Privilege::kSelect}, "main", "t");
    WriteFile(in_ + "/a.csv", "1,one\n");
  }

  void Grant(const std::string& user, std::initializer_list<Privilege> privileges,
             const std::string& db, const std::string& table) {
    ASSERT_TRUE(
        control_.GrantPrivileges(UserIdentity{user, {}}, GrantObject{db, table}, Set(privileges))
            .ok());
  }
  void Revoke(const std::string& user, std::initializer_list<Privilege> privileges,
              const std::string& db, const std::string& table) {
    ASSERT_TRUE(
        control_.RevokePrivileges(UserIdentity{user, {}}, GrantObject{db, table}, Set(privileges))
            .ok());
  }

  static sql::SessionInfo As(const std::string& user) {
    return sql::SessionInfo{.connection_id = 1, .user = user, .host = "127.0.0.1"};
  }

  std::string CreateSql(const std::string& name, const std::string& table = "t") {
    return "CREATE JOB " + name +
           " ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO INSERT "
           "INTO " +
           table + " SELECT CAST(c1 AS INTEGER), c2 FROM local(\"file_path\" = \"" + in_ +
           "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")";
  }

  // `sql` (through the views' expansion) as `user` runs it.
  std::vector<std::vector<std::string>> QueryAs(const std::string& user, const std::string& sql) {
    viewer_ = user;
    viewer_connection_ = harness_.conn().id();
    auto rows = harness_.QueryExpanded(sql);
    viewer_connection_ = UINT64_MAX;
    return rows;
  }
  // The job names jobs() shows to `user`.
  std::vector<std::vector<std::string>> JobsSeenBy(const std::string& user) {
    return QueryAs(user, "SELECT Name FROM jobs(type := 'insert') ORDER BY Name");
  }

  access::MemoryUserStore store_;
  access::AccessControl control_{&store_, ""};
  std::string viewer_;
  uint64_t viewer_connection_ = UINT64_MAX;
};

TEST_F(JobAccessTest, CreatingAJobNeedsLoadOnItsTableAndAdminForLocalFiles) {
  auto loader = harness_.RunAs(As("loader"), CreateSql("by_loader"));
  ASSERT_FALSE(loader.ok());
  // LOAD_PRIV on t is not enough to read the server's local files.
  EXPECT_EQ(loader.status().message(),
            "Access denied; you need (at least one of) the ADMIN_PRIV privilege(s) for this "
            "operation");
  auto reader = harness_.RunAs(As("reader"), CreateSql("by_reader"));
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().message(),
            "LOAD_PRIV command denied to user 'reader'@'127.0.0.1' for table 'main.t'");
  // Nothing was left behind: the names are free.
  ASSERT_TRUE(harness_.RunAs(As("ops"), CreateSql("by_reader")).ok());
  EXPECT_EQ(harness_.JobColumn("by_reader", "Definer"), "ops");
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.Value("SELECT count(*) FROM t") == "1"; }));
}

TEST_F(JobAccessTest, ManagingAJobNeedsLoadOnItsTable) {
  ASSERT_TRUE(harness_.RunAs(As("ops"), CreateSql("j")).ok());
  auto pause = harness_.RunAs(As("reader"), "PAUSE JOB WHERE jobname = 'j'");
  ASSERT_FALSE(pause.ok());
  EXPECT_EQ(pause.status().message(),
            "LOAD_PRIV command denied to user 'reader'@'127.0.0.1' for table 'main.t'");
  EXPECT_FALSE(harness_.RunAs(As("stranger"), "DROP JOB WHERE jobname = 'j'").ok());
  EXPECT_EQ(harness_.JobColumn("j", "Status"), "RUNNING");
  // LOAD_PRIV on the table is enough to pause and resume (not to create: local files).
  ASSERT_TRUE(harness_.RunAs(As("loader"), "PAUSE JOB WHERE jobname = 'j'").ok());
  ASSERT_TRUE(harness_.RunAs(As("loader"), "RESUME JOB WHERE jobname = 'j'").ok());
  EXPECT_EQ(harness_.JobColumn("j", "Status"), "RUNNING");
}

// VERIFY JOB lists the job's source with the job's credentials: it needs what PAUSE needs.
TEST_F(JobAccessTest, VerifyingAJobNeedsLoadOnItsTable) {
  ASSERT_TRUE(harness_.RunAs(As("ops"), CreateSql("j")).ok());
  auto reader = harness_.service().VerifyJob("j", 100, As("reader"));
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().message(),
            "LOAD_PRIV command denied to user 'reader'@'127.0.0.1' for table 'main.t'");
  EXPECT_FALSE(harness_.service().VerifyJob("j", 100, As("stranger")).ok());
  auto loader = harness_.service().VerifyJob("j", 100, As("loader"));
  ASSERT_TRUE(loader.ok()) << loader.status().ToString();
  EXPECT_EQ(loader->front().kind, VerifyKind::kSource);
}

TEST_F(JobAccessTest, AJobPausesWhenItsDefinerLosesAPrivilegeAndResumesWhenGranted) {
  ASSERT_TRUE(harness_.RunAs(As("ops"), CreateSql("j")).ok());
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.Value("SELECT count(*) FROM t") == "1"; }));
  Revoke("ops", {Privilege::kAdmin}, "", "");
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.JobColumn("j", "Status") == "PAUSED"; }));
  const std::string error = harness_.JobColumn("j", "ErrorMsg");
  EXPECT_NE(error.find("ACCESS_DENIED_ERR"), std::string::npos) << error;
  EXPECT_NE(error.find("the job's definer 'ops' no longer holds LOAD_PRIV on main.t"),
            std::string::npos)
      << error;
  // No file is loaded while it is paused, and it does not resume by itself.
  WriteFile(in_ + "/b.csv", "2,two\n");
  for (int i = 0; i < 20; ++i)
    harness_.Tick(std::chrono::seconds(30));
  EXPECT_EQ(harness_.JobColumn("j", "Status"), "PAUSED");
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "1");
  // Back: an administrator resumes it and it loads as its definer again.
  Grant("ops", {Privilege::kAdmin}, "", "");
  ASSERT_TRUE(harness_.Run("RESUME JOB WHERE jobname = 'j'").ok());
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.Value("SELECT count(*) FROM t") == "2"; }));
}

TEST_F(JobAccessTest, AJobPausesWhenItsDefinerIsDropped) {
  ASSERT_TRUE(harness_.RunAs(As("ops"), CreateSql("j")).ok());
  ASSERT_TRUE(control_.DropUser(UserIdentity{"ops", {}}, false).ok());
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.JobColumn("j", "Status") == "PAUSED"; }));
  EXPECT_NE(harness_.JobColumn("j", "ErrorMsg").find("the job's definer 'ops' no longer exists"),
            std::string::npos);
}

TEST_F(JobAccessTest, ViewsShowTheJobsOnTablesTheUserMayRead) {
  ASSERT_TRUE(harness_.RunAs(As("ops"), CreateSql("into_t")).ok());
  ASSERT_TRUE(harness_.RunAs(As("ops"), CreateSql("into_u", "u")).ok());
  EXPECT_EQ(JobsSeenBy("reader"), (std::vector<std::vector<std::string>>{{"into_t"}}));
  EXPECT_EQ(JobsSeenBy("stranger"), (std::vector<std::vector<std::string>>{}));
  EXPECT_EQ(JobsSeenBy("ops"), (std::vector<std::vector<std::string>>{{"into_t"}, {"into_u"}}));
  // Millrace's own connections see every job.
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM jobs(type := 'insert')"), "2");
}

// A job's filtered rows and its errors quote its source's data: a user who may read the job's
// table sees the job and its counts, not them; its definer and administrators do.
TEST_F(JobAccessTest, SourceDataIsShownOnlyToTheDefinerAndAdministrators) {
  WriteFile(in_ + "/b.csv", "2,two\nnot-a-number,private value\n3,three\n");
  ASSERT_TRUE(harness_
                  .RunAs(As("ops"),
                         "CREATE JOB leaky ON STREAMING PROPERTIES (\"max_interval\" = \"1\", "
                         "\"session.insert_max_filter_ratio\" = \"0.5\") DO INSERT INTO t SELECT "
                         "c1, c2 FROM local(\"file_path\" = \"" +
                             in_ + "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")")
                  .ok());
  // The rows, then the task's record: the views publish it just after the commit.
  ASSERT_TRUE(harness_.WaitFor([&] {
    return harness_.Value("SELECT count(*) FROM t") == "3" &&
           harness_.Value(
               "SELECT count(*) FROM tasks(type := 'insert') WHERE JobName = 'leaky' "
               "AND Status = 'SUCCESS'") != "0";
  })) << harness_.JobColumn("leaky", "ErrorMsg");
  const std::string rows = "SELECT Value FROM filtered_rows(\"job\" = \"leaky\")";
  const std::string first_error =
      "SELECT max(FirstErrorMsg) FROM tasks(type := 'insert') WHERE JobName = 'leaky'";
  EXPECT_EQ(QueryAs("ops", rows), (std::vector<std::vector<std::string>>{{"not-a-number"}}));
  EXPECT_NE(QueryAs("ops", first_error)[0][0].find("not-a-number"), std::string::npos);
  // reader may read t, and so sees the job, not what it read.
  EXPECT_EQ(JobsSeenBy("reader"), (std::vector<std::vector<std::string>>{{"leaky"}}));
  EXPECT_EQ(QueryAs("reader", rows), (std::vector<std::vector<std::string>>{}));
  EXPECT_EQ(QueryAs("reader", first_error),
            (std::vector<std::vector<std::string>>{{std::string(kSourceDataHidden)}}));
  EXPECT_EQ(QueryAs("reader",
                    "SELECT json_extract_string(LoadStatistic, '$.filteredRows') FROM "
                    "jobs(type := 'insert')"),
            (std::vector<std::vector<std::string>>{{"1"}}));
  // The HTTP API says the same.
  JobApiContext api = harness_.service().ApiContext();
  auto filtered = ApiFilteredRows(api, "reader", "leaky", ApiPage{});
  EXPECT_EQ(filtered.status().code(), StatusCode::kPermissionDenied);
  auto job = ApiJob(api, "reader", "leaky");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->find("not-a-number"), std::string::npos) << *job;
  auto own = ApiJob(api, "ops", "leaky");
  ASSERT_TRUE(own.ok());
  EXPECT_NE(own->find("not-a-number"), std::string::npos) << *own;
}

}  // namespace
}  // namespace millrace::job
