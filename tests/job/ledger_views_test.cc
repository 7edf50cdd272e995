// job_files() and filtered_rows() over the job store's pages (job/ledger_views.h), as cluster
// mode serves them: every row once across page boundaries, job by job, "job" picking one.
#include "job/ledger_views.h"

#include <gtest/gtest.h>

#include "access/access_control.h"
#include "catalog/duckdb_catalog.h"
#include "job/job_test_util.h"

namespace millrace::job {
namespace {

class TwoJobs final : public JobSnapshotSource {
 public:
  std::vector<JobRow> SnapshotJobs() override {
    std::vector<JobRow> rows(2);
    rows[0].record.id = 2;
    rows[0].record.name = "b";
    rows[0].target = engine::RelationName{"main", "t_b"};
    rows[1].record.id = 1;
    rows[1].record.name = "a";
    rows[1].target = engine::RelationName{"main", "t_a"};
    return rows;
  }
  std::vector<TaskRecord> SnapshotTasks() override { return {}; }
};

class LedgerViewsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(catalog_.Open().ok());
    std::vector<LedgerEntry> files;
    // Job 1 spans three pages; job 2 fits one.
    for (int i = 0; i < 2 * kPageRows + 5; ++i) {
      char key[16];
      std::snprintf(key, sizeof(key), "k%05d", i);
      files.push_back({.job_id = 1, .key = key, .state = FileState::kLoaded, .rows = 1});
    }
    for (const char* key : {"x", "y", "z"})
      files.push_back({.job_id = 2, .key = key, .state = FileState::kQuarantined, .error = "bad"});
    ASSERT_TRUE(catalog_.jobs()->RecordFiles(files).ok());
    ASSERT_TRUE(
        conn_
            ->Execute("INSERT INTO __millrace.filtered_rows SELECT 1, 1 + i // 1000, 'f', i, "
                      "'c', 'v', 'why', 0 FROM range(" +
                      std::to_string(kPageRows + 100) + ") t(i)")
            .ok());
    ASSERT_TRUE(
        db_->RegisterTableFunction(MakeJobFilesFunction(&source_, &access_, catalog_.jobs())).ok());
    ASSERT_TRUE(
        db_->RegisterTableFunction(MakeFilteredRowsFunction(&source_, &access_, catalog_.jobs()))
            .ok());
  }
  std::vector<std::vector<std::string>> Query(const std::string& sql) {
    return engine::QueryRows(*conn_, sql);
  }

  testing::TempDir dir_;
  std::unique_ptr<engine::Database> db_ = engine::OpenOrDie({.path = dir_.Join("db.duckdb")});
  catalog::DuckDbCatalog catalog_{db_.get(), "db.duckdb", TestSecrets().get()};
  std::unique_ptr<engine::Connection> conn_ = engine::ConnectOrDie(*db_);
  TwoJobs source_;
  JobAccess access_;  // no access control: every job is seen
};

TEST_F(LedgerViewsTest, EveryFileOnceAcrossPagesJobByJob) {
  const std::string total = std::to_string(2 * kPageRows + 5);
  EXPECT_EQ(Query("SELECT count(*), count(DISTINCT FileName) FROM job_files(job := 'a')"),
            (std::vector<std::vector<std::string>>{{total, total}}));
  EXPECT_EQ(Query("SELECT JobName, count(*), min(State), min(Error) FROM job_files() GROUP BY "
                  "JobName ORDER BY JobName"),
            (std::vector<std::vector<std::string>>{{"a", total, "LOADED", "NULL"},
                                                   {"b", "3", "QUARANTINED", "bad"}}));
  EXPECT_EQ(Query("SELECT count(*) FROM job_files(job := 'nosuch')"),
            (std::vector<std::vector<std::string>>{{"0"}}));
}

// As the SQL views: a reader sees the jobs whose table it may read, their files' errors hidden
// and their filtered rows not at all, since it neither defined them nor is an administrator
// (job a has filtered rows, which root sees: FilteredRowsOnceAcrossPages).
TEST_F(LedgerViewsTest, AReaderSeesItsJobsFilesWithoutTheirSourceData) {
  access::AccessControl control(catalog_.users(), "");
  ASSERT_TRUE(control.Load().ok());
  ASSERT_TRUE(control.CreateUser(access::UserIdentity{"reader", {}}, {}, false).ok());
  access::PrivilegeSet select;
  select.Add(access::Privilege::kSelect);
  // Both tables: the reader sees both jobs, neither's source data.
  for (const char* table : {"t_a", "t_b"}) {
    ASSERT_TRUE(control
                    .GrantPrivileges(access::UserIdentity{"reader", {}},
                                     access::GrantObject{"main", table}, select)
                    .ok());
  }
  access_.control = &control;
  const uint64_t reader = conn_->id();
  access_.connection_user = [reader](uint64_t id) -> std::optional<std::string> {
    if (id == reader) return "reader";
    return std::nullopt;
  };
  EXPECT_EQ(Query("SELECT JobName, count(*), min(Error) FROM job_files() GROUP BY JobName "
                  "ORDER BY JobName"),
            (std::vector<std::vector<std::string>>{{"a", std::to_string(2 * kPageRows + 5), "NULL"},
                                                   {"b", "3", std::string(kSourceDataHidden)}}));
  ASSERT_TRUE(control
                  .RevokePrivileges(access::UserIdentity{"reader", {}},
                                    access::GrantObject{"main", "t_a"}, select)
                  .ok());
  EXPECT_EQ(Query("SELECT DISTINCT JobName FROM job_files()"),
            (std::vector<std::vector<std::string>>{{"b"}}));
  EXPECT_EQ(Query("SELECT count(*) FROM filtered_rows()"),
            (std::vector<std::vector<std::string>>{{"0"}}));
  access_ = JobAccess{};  // before `control` goes
}

TEST_F(LedgerViewsTest, FilteredRowsOnceAcrossPages) {
  const std::string total = std::to_string(kPageRows + 100);
  EXPECT_EQ(Query("SELECT count(*), count(DISTINCT (TaskId, Line)) FROM filtered_rows(job := "
                  "'a')"),
            (std::vector<std::vector<std::string>>{{total, total}}));
  EXPECT_EQ(Query("SELECT count(*) FROM filtered_rows(job := 'b')"),
            (std::vector<std::vector<std::string>>{{"0"}}));
}

}  // namespace
}  // namespace millrace::job
