// Helpers for the job tests: a database with a running JobService over local directories.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "engine/engine_test_util.h"
#include "job/job_service.h"
#include "testing/temp_dir.h"
#include "testing/wait_for.h"

namespace millrace::job {

inline void WriteFile(const std::string& path, const std::string& content) {
  // Written under a temporary name and renamed, as a well-behaved producer does.
  {
    std::ofstream out(path + ".tmp", std::ios::binary);
    out << content;
  }
  std::rename((path + ".tmp").c_str(), path.c_str());
}

// The job tests spell it WaitFor (testing/wait_for.h).
using testing::WaitFor;

class JobServiceHarness {
 public:
  explicit JobServiceHarness(const std::string& db_path) : db_path_(db_path) {}

  void Start() {
    db_ = engine::OpenOrDie({.path = db_path_});
    conn_ = engine::ConnectOrDie(*db_);
    JobServiceConfig config;
    config.db = db_.get();
    config.clock = Clock::Real();
    config.work_root = db_path_ + ".work";
    config.retry_backoff = std::chrono::milliseconds(10);
    // Local files settle quickly in tests; S3 sources ignore the setting.
    config.make_source = load::DefaultSourceFactory(Clock::Real(), std::chrono::milliseconds(100));
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
    conn_.reset();
    db_.reset();
  }

  Result<std::string> Run(const std::string& statement) { return service_->Execute(statement); }

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
  std::function<void(JobServiceConfig&)> configure_;
  std::unique_ptr<engine::Database> db_;
  std::unique_ptr<engine::Connection> conn_;
  sql::TableFunctionRegistry registry_;
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
