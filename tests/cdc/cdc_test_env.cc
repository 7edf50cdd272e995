#include "cdc/cdc_test_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
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

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoi(value) : fallback;
}

Result<std::unique_ptr<CdcTestEnv>> CdcTestEnv::Start(CdcSource source) {
  auto env = std::make_unique<CdcTestEnv>();
  env->source_ = source;
  if (source == CdcSource::kPostgres) {
    MR_ASSIGN_OR_RETURN(env->pg_, testing::PostgresServer::Start());
  } else {
    MR_ASSIGN_OR_RETURN(env->mariadb_, testing::MariadbServer::Start());
    MR_RETURN_IF_ERROR(
        env->mariadb_->Sql("CREATE DATABASE " + std::string(kMysqlDatabase)).status());
  }
  MR_ASSIGN_OR_RETURN(env->mr_, access::E2EServer::Start("", ServerArgs()));
  MR_RETURN_IF_ERROR(env->Mr("CREATE DATABASE cdc").status());
  return env;
}

const std::string& CdcTestEnv::source_password() const {
  return source_ == CdcSource::kPostgres ? pg_->password() : mariadb_->password();
}

std::string CdcTestEnv::Src(const std::string& sql) const {
  auto out = source_ == CdcSource::kPostgres ? pg_->Sql(sql) : mariadb_->Sql(sql, kMysqlDatabase);
  EXPECT_TRUE(out.ok()) << sql << ": " << out.status().ToString();
  return out.ok() ? *out : "";
}

Status CdcTestEnv::TrySrc(const std::string& sql) const {
  return (source_ == CdcSource::kPostgres ? pg_->Sql(sql) : mariadb_->Sql(sql, kMysqlDatabase))
      .status();
}

Status CdcTestEnv::CrashRestartSource() {
  return source_ == CdcSource::kPostgres ? pg_->CrashRestart() : mariadb_->CrashRestart();
}

std::string CdcTestEnv::RandomTransaction(std::mt19937& rng, int rows, int* next_id) const {
  const bool pg = source_ == CdcSource::kPostgres;
  const std::string div = pg ? " / 3" : " DIV 3";
  const std::string bx = pg ? "b || 'x'" : "CONCAT(b, 'x')";
  auto key = [&] { return std::to_string(1 + rng() % rows); };
  std::string sql = "BEGIN;";
  for (int i = 0, changes = 1 + static_cast<int>(rng() % 6); i < changes; ++i) {
    switch (rng() % 7) {
      case 0:
      case 1:
        sql += "INSERT INTO crash_a VALUES (" + std::to_string((*next_id)++) + ", 'new', 1);";
        break;
      case 2:
        sql += "UPDATE crash_a SET qty = qty + 1, name = 'upd' WHERE id = " + key() + ";";
        break;
      case 3:  // a key update, to a key no other row takes
        sql += "UPDATE crash_a SET id = id + 10000000 WHERE id = " + key() + ";";
        break;
      case 4:
        sql += "DELETE FROM crash_a WHERE id = " + key() + ";";
        break;
      case 5:
        sql += "UPDATE crash_b SET v = v + 1 WHERE a = " + key() + div + ";";
        break;
      case 6:
        sql += "UPDATE crash_b SET b = " + bx + " WHERE a = " + key() + div +
               " AND b = 'k1'; DELETE FROM crash_b WHERE a = " + key() + div +
               " AND b = 'k2'; INSERT INTO crash_b VALUES (" + std::to_string((*next_id)++) +
               ", 'k0', 0);";
        break;
    }
  }
  return sql + "COMMIT;";
}

void CdcTestEnv::MakeCrashTables(int rows) const {
  const std::string n = std::to_string(rows);
  // A one-column key and a two-column key (whose splits resume after a composite bound).
  if (source_ == CdcSource::kPostgres) {
    Src("CREATE TABLE crash_a (id int PRIMARY KEY, name text, qty int);"
        "INSERT INTO crash_a SELECT g, 'name ' || g, g % 97 FROM generate_series(1, " +
        n +
        ") g;"
        "CREATE TABLE crash_b (a int, b text, v int, PRIMARY KEY (a, b));"
        "INSERT INTO crash_b SELECT g / 3, 'k' || (g % 3), g FROM generate_series(1, " +
        n + ") g");
  } else {
    Src("CREATE TABLE crash_a (id INT PRIMARY KEY, name VARCHAR(40), qty INT);"
        "INSERT INTO crash_a SELECT seq, CONCAT('name ', seq), seq % 97 FROM seq_1_to_" +
        n +
        ";"
        "CREATE TABLE crash_b (a INT, b VARCHAR(40), v INT, PRIMARY KEY (a, b));"
        "INSERT INTO crash_b SELECT seq DIV 3, CONCAT('k', seq % 3), seq FROM seq_1_to_" +
        n);
  }
}

Status CdcTestEnv::MakeSinkCatalog() const {
  if (pg_ == nullptr) return Status::FailedPrecondition("the sink catalog needs PostgreSQL");
  MR_RETURN_IF_ERROR(pg_->Sql(std::string("CREATE SCHEMA IF NOT EXISTS ") + kSinkSchema).status());
  return Mr(std::string("CREATE CATALOG IF NOT EXISTS ") + kSinkCatalog +
            " PROPERTIES ('type' = 'postgresql', 'host' = '" + pg_->host() + "', 'port' = '" +
            std::to_string(pg_->port()) + "', 'database' = 'postgres', 'user' = '" + pg_->user() +
            "', 'password' = '" + pg_->password() + "')")
      .status();
}

std::string CdcTestEnv::SourceChecksumSql(const std::string& table,
                                          const std::vector<CanonColumn>& columns) const {
  return source_ == CdcSource::kPostgres ? PgChecksumSql(table, columns)
                                         : MysqlChecksumSql(table, columns);
}

std::string CdcTestEnv::SourceRowText(const std::vector<CanonColumn>& columns) const {
  std::string text;
  for (const CanonColumn& c : columns) {
    if (source_ == CdcSource::kPostgres) {
      text +=
          std::string(text.empty() ? "" : " || '|' || ") + "coalesce(" + c.name + "::text, '~')";
    } else {
      text += std::string(text.empty() ? "" : ", '|', ") + "coalesce(CAST(" + c.name +
              " AS CHAR), '~')";
    }
  }
  return source_ == CdcSource::kPostgres ? text : "CONCAT(" + text + ")";
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
  if (source_ == CdcSource::kMariadb) {
    return "cdc_stream(\"type\" = \"mysql\", \"jdbc_url\" = \"" + mariadb_->JdbcUrl() +
           "\", \"user\" = \"" + mariadb_->user() + "\", \"password\" = \"" +
           (password.empty() ? mariadb_->password() : password) + "\", \"database\" = \"" +
           kMysqlDatabase + "\", \"table\" = \"" + table + "\"" + extra + ")";
  }
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

std::pair<std::string, std::string> CdcTestEnv::Converge(const std::string& source_table,
                                                         const std::string& mr_table,
                                                         const std::vector<CanonColumn>& columns,
                                                         std::chrono::seconds timeout) const {
  // A table of the PostgreSQL sink is read on PostgreSQL, as schema.table.
  const std::string sink_prefix = std::string(kSinkCatalog) + ".";
  const bool in_sink = mr_table.starts_with(sink_prefix);
  const std::string sink_table = in_sink ? mr_table.substr(sink_prefix.size()) : "";
  auto target_checksum = [&](const std::vector<CanonColumn>& of) {
    return in_sink ? Src(PgChecksumSql(sink_table, of)) : MrValue(DuckChecksumSql(mr_table, of));
  };
  std::string want;
  std::string got;
  testing::WaitFor(
      [&] {
        want = Src(SourceChecksumSql(source_table, columns));
        got = target_checksum(columns);
        return want == got;
      },
      timeout);
  if (want == got) return {want, got};
  for (const CanonColumn& c : columns) {
    const std::string w = Src(SourceChecksumSql(source_table, {c}));
    const std::string g = target_checksum({c});
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
  std::string mr_text;
  for (const CanonColumn& c : columns) {
    mr_text += std::string(mr_text.empty() ? "" : " || '|' || ") + "coalesce(CAST(" + c.name +
               " AS VARCHAR), '~')";
  }
  std::set<std::string> source;
  std::set<std::string> target;
  std::stringstream in(Src("SELECT " + SourceRowText(columns) + " FROM " + source_table));
  for (std::string line; std::getline(in, line);)
    source.insert(line);
  if (in_sink) {
    std::stringstream sink(Src("SELECT " + SourceRowText(columns) + " FROM " + sink_table));
    for (std::string line; std::getline(sink, line);)
      target.insert(line);
  } else if (auto rows = Mr("SELECT " + mr_text + " FROM " + mr_table); rows.ok()) {
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
