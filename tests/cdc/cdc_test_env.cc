#include "cdc/cdc_test_env.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "engine/database.h"
#include "testing/wait_for.h"

namespace millrace::cdc {
namespace {

// Paused jobs are looked at every second, so a test sees the WAL-retention warning at once.
std::vector<std::string> ServerArgs() {
  return {"--paused-check-interval", "1"};
}

}  // namespace

std::unique_ptr<CdcTestEnv> CdcEnvTest::env_;

void CdcEnvTest::SetUpTestSuite() {
  auto env = CdcTestEnv::Start();
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  env_ = std::move(env).value();
}

Result<std::unique_ptr<CdcTestEnv>> CdcTestEnv::Start() {
  auto env = std::make_unique<CdcTestEnv>();
  MR_ASSIGN_OR_RETURN(env->pg_, testing::PostgresServer::Start());
  MR_ASSIGN_OR_RETURN(env->mr_, access::E2EServer::Start("", ServerArgs()));
  MR_RETURN_IF_ERROR(env->Mr("CREATE DATABASE cdc").status());
  return env;
}

std::string CdcTestEnv::Pg(const std::string& sql) const {
  auto out = pg_->Sql(sql);
  EXPECT_TRUE(out.ok()) << sql << ": " << out.status().ToString();
  return out.ok() ? *out : "";
}

Result<access::Rows> CdcTestEnv::Mr(const std::string& sql) const {
  return access::Query(mr_->root.get(), sql);
}

std::string CdcTestEnv::MrValue(const std::string& sql) const {
  auto rows = Mr(sql);
  if (!rows.ok()) return rows.status().ToString();
  if (rows->size() != 1 || (*rows)[0].size() != 1) return "?";
  return (*rows)[0][0];
}

std::string CdcTestEnv::Stream(const std::string& table, const std::string& extra,
                               const std::string& password) const {
  return "cdc_stream(\"type\" = \"postgres\", \"jdbc_url\" = \"" + pg_->JdbcUrl("postgres") +
         "\", \"user\" = \"" + pg_->user() + "\", \"password\" = \"" +
         (password.empty() ? pg_->password() : password) + "\", \"schema\" = \"public\", " +
         "\"table\" = \"" + table + "\"" + extra + ")";
}

Status CdcTestEnv::CreateJob(const std::string& name, const std::string& insert,
                             const std::string& properties) const {
  return Mr("CREATE JOB " + name + " ON STREAMING PROPERTIES (" + properties + ") DO " + insert)
      .status();
}

std::pair<std::string, std::string> CdcTestEnv::Converge(const std::string& pg_table,
                                                         const std::string& mr_table,
                                                         const std::vector<CanonColumn>& columns,
                                                         std::chrono::seconds timeout) const {
  std::string want;
  std::string got;
  testing::WaitFor(
      [&] {
        want = Pg(PgChecksumSql(pg_table, columns));
        got = MrValue(DuckChecksumSql(mr_table, columns));
        return want == got;
      },
      timeout);
  if (want == got) return {want, got};
  for (const CanonColumn& c : columns) {
    const std::string w = Pg(PgChecksumSql(pg_table, {c}));
    const std::string g = MrValue(DuckChecksumSql(mr_table, {c}));
    if (w != g) got += " [column " + c.name + " differs]";
  }
  auto jobs = Mr(
      "SELECT concat_ws(' ', Name, Status, ErrorMsg, CurrentOffset) FROM jobs(type := 'insert')");
  if (jobs.ok()) {
    for (auto& r : *jobs)
      got += " [job " + r[0] + "]";
  }
  const std::string log = mr_->server->Log();
  got += " [server log: " + log.substr(log.size() > 4000 ? log.size() - 4000 : 0) + "]";
  // Both sides' rows, the first few that differ, over the columns as text.
  std::string pg_text;
  std::string mr_text;
  for (const CanonColumn& c : columns) {
    pg_text +=
        std::string(pg_text.empty() ? "" : " || '|' || ") + "coalesce(" + c.name + "::text, '~')";
    mr_text += std::string(mr_text.empty() ? "" : " || '|' || ") + "coalesce(CAST(" + c.name +
               " AS VARCHAR), '~')";
  }
  std::set<std::string> source;
  std::set<std::string> target;
  std::stringstream in(Pg("SELECT " + pg_text + " FROM " + pg_table));
  for (std::string line; std::getline(in, line);)
    source.insert(line);
  if (auto rows = Mr("SELECT " + mr_text + " FROM " + mr_table); rows.ok()) {
    for (auto& r : *rows)
      target.insert(r[0]);
  }
  int shown = 0;
  for (const auto& row : source)
    if (!target.count(row) && shown++ < 5) got += " [only in source: " + row + "]";
  shown = 0;
  for (const auto& row : target)
    if (!source.count(row) && shown++ < 5) got += " [only in target: " + row + "]";
  return {want, got};
}

void CdcTestEnv::KillMillrace() {
  if (mr_ == nullptr) return;
  mr_dir_ = std::move(mr_->dir);
  mr_.reset();  // ServerProcess's destructor: SIGKILL, then waits for the exit
}

Status CdcTestEnv::RestartMillrace() {
  if (mr_dir_ == nullptr) return Status::FailedPrecondition("the server was not killed");
  MR_ASSIGN_OR_RETURN(mr_, access::E2EServer::Start("", ServerArgs(), std::move(mr_dir_)));
  return Status::Ok();
}

Result<access::Rows> CdcTestEnv::QueryDatabaseFile(const std::string& sql) const {
  if (mr_dir_ == nullptr) return Status::FailedPrecondition("the server was not killed");
  engine::DatabaseOptions options;
  options.path = mr_dir_->Join("data/millrace.duckdb");
  MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::Database> db, engine::Database::Open(options));
  MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::Connection> conn, db->Connect());
  return engine::QueryTextRows(*conn, sql);
}

}  // namespace millrace::cdc
