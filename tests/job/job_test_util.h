// Helpers for the job tests: a database with a running JobService over local directories.
//
// Time: the unit tests run the service on a ManualClock (the scheduler's due times, max_interval,
// retry backoff, auto-resume delays and the local source's settle rule all read it) and move it
// forward themselves: Tick() and the harness's WaitFor, which ticks between looks. The end-to-end
// tests (S3) run on the real clock and wait only through testing::WaitFor.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "catalog/catalog_views.h"
#include "catalog/duckdb_catalog.h"
#include "catalog/duckdb_sink.h"
#include "common/clock.h"
#include "engine/engine_test_util.h"
#include "files/file_job_source.h"
#include "job/job_service.h"
#include "table/create_table.h"
#include "table/model_catalog.h"
#include "testing/temp_dir.h"
#include "testing/wait_for.h"

namespace millrace::job {

// Creates a table from Doris's CREATE TABLE `ddl` in `database`, with its recorded definition,
// as the SQL router does for a client (table/table_statements.h).
inline Status CreateDorisTable(engine::Connection& conn, const std::string& ddl,
                               const std::string& database = "main") {
  MR_ASSIGN_OR_RETURN(table::CreateTable create, table::ParseCreateTable(ddl));
  create.def.database = database;
  MR_RETURN_IF_ERROR(conn.Execute(table::DuckDbCreateTable(create.def, false)));
  return conn.Execute(table::RecordModelSql(create.def));
}

inline void WriteFile(const std::string& path, const std::string& content) {
  // Written under a temporary name and renamed, as a well-behaved producer does.
  {
    std::ofstream out(path + ".tmp", std::ios::binary);
    out << content;
  }
  std::rename((path + ".tmp").c_str(), path.c_str());
}

// The end-to-end and crash tests spell it WaitFor (testing/wait_for.h); the unit tests use
// JobServiceHarness::WaitFor, which moves the manual clock while it waits.
using testing::WaitFor;

// The key the tests' job services seal credentials with: the same in every process and
// restart, as a data directory's key file is.
inline std::shared_ptr<const SecretBox> TestSecrets() {
  static const std::shared_ptr<const SecretBox> kBox =
      SecretBox::WithKey(std::string(SecretBox::kKeyBytes, 'k'), "the tests' key");
  return kBox;
}

// Opens (or creates, or migrates) the embedded catalog of `db` with TestSecrets() and points
// `config` at `db`, the catalog's job store, DuckDB sinks and the file source (src/files/), as
// the server wires them; `catalog` keeps the catalog, which must outlive the service.
inline Status UseDuckDbCatalog(engine::Database* db,
                               std::unique_ptr<catalog::DuckDbCatalog>* catalog,
                               JobServiceConfig* config) {
  const std::string where = db->options().path.empty() ? "memory" : db->options().path;
  auto opened = std::make_unique<catalog::DuckDbCatalog>(db, where, TestSecrets().get());
  MR_RETURN_IF_ERROR(opened->Open());
  config->db = db;
  config->store = opened->jobs();
  config->make_sink = catalog::DuckDbSink::Factory(db);
  config->views = catalog::CatalogViews();
  config->make_file_source = files::MakeFileJobSource;
  *catalog = std::move(opened);
  return Status::Ok();
}

class JobServiceHarness {
 public:
  enum class Time { kManual, kReal };
  // The local source's settle time in these tests.
  static constexpr std::chrono::milliseconds kSettle{100};

  // `ahead`: the manual clock starts that far past the real time (files written meanwhile are
  // settled without moving it).
  explicit JobServiceHarness(const std::string& db_path, Time time = Time::kManual,
                             std::chrono::seconds ahead = std::chrono::seconds(0))
      : db_path_(db_path) {
    // Starts at the real time: the settle rule compares files' real mtimes with it.
    if (time == Time::kManual)
      manual_ = std::make_unique<ManualClock>(std::chrono::system_clock::now() + ahead);
  }

  void Start() {
    db_ = engine::OpenOrDie({.path = db_path_});
    conn_ = engine::ConnectOrDie(*db_);
    JobServiceConfig config;
    const Status opened = UseDuckDbCatalog(db_.get(), &catalog_, &config);
    ASSERT_TRUE(opened.ok()) << opened.ToString();
    config.clock = clock();
    config.work_root = db_path_ + ".work";
    config.tasks.retry_backoff = std::chrono::milliseconds(10);
    // Local files settle quickly in tests; S3 sources ignore the setting.
    config.make_source = load::DefaultSourceFactory(clock(), kSettle);
    if (configure_) configure_(config);
    auto service = JobService::Start(std::move(config));
    ASSERT_TRUE(service.ok()) << service.status().ToString();
    service_ = std::move(service).value();
    ASSERT_TRUE(service_->RegisterViews(&registry_).ok());
  }

  // Adjusts the service's configuration before Start (e.g. faster auto-resume).
  void set_configure(std::function<void(JobServiceConfig&)> configure) {
    configure_ = std::move(configure);
  }

  void Stop() {
    service_.reset();
    catalog_.reset();
    conn_.reset();
    db_.reset();
  }

  Result<std::string> Run(const std::string& statement) { return service_->Execute(statement); }
  JobService& service() { return *service_; }
  // As the client `who` (the definer of a job it creates).
  Result<std::string> RunAs(const sql::SessionInfo& who, const std::string& statement) {
    return service_->Execute(statement, "", who);
  }

  Clock* clock() { return manual_ ? manual_.get() : Clock::Real(); }
  // Moves the manual clock at least `step` forward and past the real time by `step`, so that
  // files written before the call have settled and due times up to `step` from now have come.
  void Tick(std::chrono::milliseconds step = kSettle) {
    if (!manual_) return;
    const auto target = std::max(manual_->WallNow(), std::chrono::system_clock::now()) + step;
    manual_->Advance(
        std::chrono::duration_cast<std::chrono::microseconds>(target - manual_->WallNow()));
  }
  // Waits (real time, at most `timeout`) until `condition` holds, ticking the clock between
  // looks: time passes for the service only while the test waits.
  bool WaitFor(const std::function<bool()>& condition,
               std::chrono::steady_clock::duration timeout = std::chrono::seconds(60)) {
    return testing::WaitFor(
        [&] {
          if (condition()) return true;
          Tick();
          return false;
        },
        timeout);
  }

  std::vector<std::vector<std::string>> Query(const std::string& sql) {
    return engine::QueryRows(*conn_, sql);
  }
  // Runs `sql` after expanding the Doris-style table functions the service registered.
  std::vector<std::vector<std::string>> QueryExpanded(const std::string& sql) {
    auto expanded = registry_.Expand(sql);
    EXPECT_TRUE(expanded.ok()) << expanded.status().ToString();
    if (!expanded.ok()) return {};
    return engine::QueryRows(*conn_, expanded->sql);
  }
  std::string Value(const std::string& sql) { return engine::QueryValue(*conn_, sql); }
  engine::Connection& conn() { return *conn_; }

  // The value of `column` of job `name` in jobs().
  std::string JobColumn(const std::string& name, const std::string& column) {
    return Value("SELECT coalesce(CAST(" + column +
                 " AS VARCHAR), 'NULL') FROM jobs(type := 'insert') WHERE Name = '" + name + "'");
  }

 private:
  std::string db_path_;
  std::unique_ptr<ManualClock> manual_;  // null: the real clock
  std::function<void(JobServiceConfig&)> configure_;
  std::unique_ptr<engine::Database> db_;
  std::unique_ptr<engine::Connection> conn_;
  sql::TableFunctionRegistry registry_;
  std::unique_ptr<catalog::DuckDbCatalog> catalog_;
  std::unique_ptr<JobService> service_;
};

// A running job service over a database in a temp directory, a watched directory `in_`, and a
// table t (id INTEGER, name VARCHAR).
class LocalJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    in_ = dir_.Join("in");
    std::filesystem::create_directories(in_);
    harness_.Start();
    ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE t (id INTEGER, name VARCHAR)").ok());
  }

  testing::TempDir dir_;
  std::string in_;
  JobServiceHarness harness_{dir_.Join("db.duckdb")};
};

}  // namespace millrace::job
