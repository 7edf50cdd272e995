#include "job/duckdb_catalog.h"

#include <limits>

#include "common/logging.h"
#include "job/catalog_sql.h"
#include "job/catalog_version.h"
#include "table/load_labels.h"
#include "table/model_catalog.h"

namespace millrace::job {
namespace {

using catalog_sql::ForEachRow;
using catalog_sql::Int;
using catalog_sql::Statement;
using catalog_sql::Text;
using engine::Connection;
using engine::DataChunk;
using engine::QueryResult;

// The five LoadStatistic columns, in the order every table stores them.
LoadStatistic ReadStats(const DataChunk& c, size_t* col, size_t r) {
  LoadStatistic s;
  s.scanned_rows = Int(c, (*col)++, r);
  s.load_bytes = Int(c, (*col)++, r);
  s.file_number = Int(c, (*col)++, r);
  s.file_size = Int(c, (*col)++, r);
  s.filtered_rows = Int(c, (*col)++, r);
  return s;
}

void BindStats(Statement& stmt, const LoadStatistic& s) {
  stmt.Int(s.scanned_rows).Int(s.load_bytes).Int(s.file_number).Int(s.file_size);
  stmt.Int(s.filtered_rows);
}

constexpr const char* kJobColumns =
    "id, name, definer, masked_sql, comment, state, create_time_us, current_offset, "
    "end_offset, succeed_tasks, failed_tasks, canceled_tasks, scanned_rows, load_bytes, "
    "file_number, file_size, filtered_rows, error_code, error_msg, runtime_msg, "
    "last_success_time_us, epoch, auto_resume_count, manual_pause, next_task_id, insert_sql, "
    "database_name, reconcile_floor";

constexpr const char* kTaskColumns =
    "job_id, task_id, state, error_msg, create_time_us, start_time_us, finish_time_us, "
    "scanned_rows, load_bytes, file_number, file_size, filtered_rows, first_error_msg, "
    "start_file, end_file";

constexpr const char* kFileColumns =
    "job_id, key, etag, size, state, task_id, rows, load_time_us, error, reason";

// The job tables at kCatalogVersion (the users' tables are catalog_sql::CreateUserTables).
// Version 1 (tests/job/catalog_v1.sql) had jobs.definition and file keys as offsets.
constexpr const char* kCreateTables = R"sql(
    CREATE SCHEMA IF NOT EXISTS __millrace;
    CREATE TABLE __millrace.catalog_version (version INTEGER NOT NULL);
    CREATE TABLE __millrace.jobs (
      id BIGINT PRIMARY KEY, name VARCHAR NOT NULL, definer VARCHAR,
      masked_sql VARCHAR, comment VARCHAR, state VARCHAR, create_time_us BIGINT,
      current_offset VARCHAR, end_offset VARCHAR, succeed_tasks BIGINT, failed_tasks BIGINT,
      canceled_tasks BIGINT, scanned_rows BIGINT, load_bytes BIGINT, file_number BIGINT,
      file_size BIGINT, filtered_rows BIGINT, error_code VARCHAR, error_msg VARCHAR,
      runtime_msg VARCHAR, last_success_time_us BIGINT, epoch BIGINT, auto_resume_count BIGINT,
      manual_pause BOOLEAN, next_task_id BIGINT, insert_sql VARCHAR, database_name VARCHAR,
      reconcile_floor VARCHAR);
    CREATE TABLE __millrace.job_properties (
      job_id BIGINT, key VARCHAR, value VARCHAR);
    CREATE TABLE __millrace.tasks (
      job_id BIGINT, task_id BIGINT, state VARCHAR, error_msg VARCHAR, create_time_us BIGINT,
      start_time_us BIGINT, finish_time_us BIGINT, scanned_rows BIGINT, load_bytes BIGINT,
      file_number BIGINT, file_size BIGINT, filtered_rows BIGINT, first_error_msg VARCHAR,
      start_file VARCHAR, end_file VARCHAR);
    CREATE TABLE __millrace.filtered_rows (
      job_id BIGINT, task_id BIGINT, file VARCHAR, line BIGINT, column_name VARCHAR,
      value VARCHAR, reason VARCHAR, time_us BIGINT);
    CREATE TABLE __millrace.files (
      job_id BIGINT, key VARCHAR, etag VARCHAR, size BIGINT, state VARCHAR, task_id BIGINT,
      rows BIGINT, load_time_us BIGINT, error VARCHAR, reason VARCHAR);
)sql";

// Files being read (catalog version 6): CatalogStore::MarkReading.
constexpr const char* kReadingTableDdl = R"sql(
    CREATE TABLE __millrace.reading (
      job_id BIGINT, key VARCHAR, task_id BIGINT, batch_files BIGINT, alone_crashes BIGINT,
      started_us BIGINT);
)sql";

Status SaveProperties(Connection& conn, const JobRecord& job) {
  MR_ASSIGN_OR_RETURN(auto del, Statement::Prepare(conn,
                                                   "DELETE FROM __millrace.job_properties "
                                                   "WHERE job_id = ?"));
  MR_RETURN_IF_ERROR(del.Int(job.id).Run().status());
  MR_ASSIGN_OR_RETURN(auto ins, Statement::Prepare(conn,
                                                   "INSERT INTO __millrace.job_properties "
                                                   "(job_id, key, value) VALUES (?, ?, ?)"));
  for (const auto& [key, value] : job.properties.given) {
    MR_RETURN_IF_ERROR(ins.Reset().Int(job.id).Str(key).Str(value).Run().status());
  }
  return Status::Ok();
}

Result<Offset> ReadOffset(const DataChunk& c, size_t col, size_t r, const JobRecord& job) {
  auto offset = Offset::Parse(Text(c, col, r));
  if (!offset.ok()) return offset.status().WithContext("job " + job.name + " in the catalog");
  return offset;
}

// Migration 1 -> 2: offsets were bare keys; they become {"fileName": key}.
Status MigrateOffsetsToJson(Connection& conn) {
  // The ALTER comes first: DuckDB cannot commit rows updated in a transaction that then alters
  // their table ("another transaction has altered this table").
  MR_RETURN_IF_ERROR(conn.Execute("ALTER TABLE __millrace.jobs DROP COLUMN definition"));
  MR_ASSIGN_OR_RETURN(auto rows,
                      engine::QueryTextRows(conn,
                                            "SELECT id, coalesce(current_offset, ''), "
                                            "coalesce(end_offset, '') FROM __millrace.jobs"));
  MR_ASSIGN_OR_RETURN(auto update,
                      Statement::Prepare(conn,
                                         "UPDATE __millrace.jobs SET current_offset = ?, "
                                         "end_offset = ? WHERE id = ?"));
  for (const auto& row : rows) {
    MR_RETURN_IF_ERROR(update.Reset()
                           .Str(Offset::FileName(row[1]).ToJson())
                           .Str(Offset::FileName(row[2]).ToJson())
                           .Int(std::stoll(row[0]))
                           .Run()
                           .status());
  }
  return Status::Ok();
}

// Migration 6 -> 7: each job's statement, which holds its credentials, is sealed.
Status SealStatements(Connection& conn, const SecretBox* secrets, const std::string& where) {
  MR_ASSIGN_OR_RETURN(auto rows, engine::QueryTextRows(conn,
                                                       "SELECT id, coalesce(insert_sql, '') FROM "
                                                       "__millrace.jobs ORDER BY id"));
  if (rows.empty()) return Status::Ok();
  if (secrets == nullptr) {
    return Status::FailedPrecondition("the jobs in " + where +
                                      " hold credentials in clear and no key was given to seal "
                                      "them");
  }
  MR_ASSIGN_OR_RETURN(auto update, Statement::Prepare(conn,
                                                      "UPDATE __millrace.jobs SET insert_sql = ? "
                                                      "WHERE id = ?"));
  for (const auto& row : rows) {
    if (SecretBox::IsSealed(row[1])) continue;
    MR_ASSIGN_OR_RETURN(std::string sealed, secrets->Seal(row[1]));
    MR_RETURN_IF_ERROR(update.Reset().Str(sealed).Int(std::stoll(row[0])).Run().status());
  }
  return Status::Ok();
}

Status RunMigration(Connection& conn, const MigrationStep& step, const SecretBox* secrets,
                    const std::string& where) {
  switch (step.from) {
    case 1:
      return MigrateOffsetsToJson(conn);
    case 2:
      return catalog_sql::CreateUserTables(conn);
    case 3:
      return catalog_sql::CreateAuditTable(conn);
    case 4:
      MR_RETURN_IF_ERROR(conn.Execute(table::kModelTableDdl));
      return conn.Execute(table::kLabelTableDdl);
    case 5:
      MR_RETURN_IF_ERROR(conn.Execute("ALTER TABLE __millrace.files ADD COLUMN reason VARCHAR"));
      return conn.Execute(kReadingTableDdl);
    case 6:
      return SealStatements(conn, secrets, where);
    default:
      return Status::Internal("no migration from catalog version " + std::to_string(step.from));
  }
}

// The rows of a query over filtered_rows that selects task_id, file, line, column_name, value,
// reason, time_us in that order.
Result<std::vector<FilteredRow>> ReadFilteredRows(QueryResult& result) {
  std::vector<FilteredRow> rows;
  MR_RETURN_IF_ERROR(ForEachRow(result, [&](const DataChunk& c, size_t r) -> Status {
    rows.push_back(FilteredRow{Int(c, 0, r), Text(c, 1, r), Int(c, 2, r), Text(c, 3, r),
                               Text(c, 4, r), Text(c, 5, r), Int(c, 6, r)});
    return Status::Ok();
  }));
  return rows;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// In a task's transaction

namespace catalog {

Result<bool> AdvanceOffset(Connection& conn, const JobRecord& j, const Offset& start,
                           int64_t epoch) {
  MR_ASSIGN_OR_RETURN(
      auto stmt,
      Statement::Prepare(
          conn,
          "UPDATE __millrace.jobs SET current_offset = ?, end_offset = ?, succeed_tasks = ?, "
          "scanned_rows = ?, load_bytes = ?, file_number = ?, file_size = ?, filtered_rows = ?, "
          "last_success_time_us = ?, next_task_id = ?, runtime_msg = ? "
          "WHERE id = ? AND state = 'RUNNING' AND epoch = ? AND current_offset = ?"));
  stmt.Str(j.current_offset.ToJson()).Str(j.end_offset.ToJson()).Int(j.succeed_tasks);
  BindStats(stmt, j.stats);
  stmt.Int(j.last_success_time_us).Int(j.next_task_id);
  stmt.Str(j.runtime_msg).Int(j.id).Int(epoch).Str(start.ToJson());
  MR_ASSIGN_OR_RETURN(int64_t changed, stmt.Run());
  return changed == 1;
}

Status InsertTask(Connection& conn, const TaskRecord& t) {
  MR_ASSIGN_OR_RETURN(
      auto stmt,
      Statement::Prepare(conn, std::string("INSERT INTO __millrace.tasks (") + kTaskColumns +
                                   ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                                   "?, ?, ?, ?)"));
  stmt.Int(t.job_id).Int(t.task_id).Str(std::string(TaskStateName(t.state))).Str(t.error_msg);
  stmt.Int(t.create_time_us).Int(t.start_time_us).Int(t.finish_time_us);
  BindStats(stmt, t.stats);
  stmt.Str(t.first_error_msg);
  stmt.Str(t.start_file).Str(t.end_file);
  return stmt.Run().status();
}

Status PruneTasks(Connection& conn, int64_t job_id, int keep) {
  MR_ASSIGN_OR_RETURN(
      auto stmt,
      Statement::Prepare(conn,
                         "DELETE FROM __millrace.tasks WHERE job_id = ? AND task_id <= "
                         "(SELECT max(task_id) FROM __millrace.tasks WHERE job_id = ?) - ?"));
  return stmt.Int(job_id).Int(job_id).Int(keep).Run().status();
}

Status PruneFilteredRows(Connection& conn, int64_t job_id, int64_t keep) {
  MR_ASSIGN_OR_RETURN(
      auto stmt,
      Statement::Prepare(conn,
                         "DELETE FROM __millrace.filtered_rows WHERE job_id = ? AND task_id < "
                         "(SELECT coalesce(min(task_id), 0) FROM (SELECT task_id FROM "
                         "__millrace.filtered_rows WHERE job_id = ? ORDER BY task_id DESC "
                         "LIMIT ?))"));
  return stmt.Int(job_id).Int(job_id).Int(keep).Run().status();
}

Result<std::vector<FilteredRow>> TaskFilteredRows(Connection& conn, int64_t job_id, int64_t task_id,
                                                  int64_t limit) {
  MR_ASSIGN_OR_RETURN(auto stmt,
                      Statement::Prepare(conn,
                                         "SELECT task_id, file, line, column_name, value, reason, "
                                         "time_us FROM __millrace.filtered_rows WHERE job_id = ? "
                                         "AND task_id = ? ORDER BY file, line LIMIT ?"));
  MR_ASSIGN_OR_RETURN(auto result, stmt.Int(job_id).Int(task_id).Int(limit).Query());
  return ReadFilteredRows(*result);
}

Status InsertLedger(Connection& conn, const std::vector<LedgerEntry>& entries) {
  if (entries.empty()) return Status::Ok();
  // One DELETE and one INSERT for the whole batch: the ledger has no index, so a statement
  // per file would scan it once per file, quadratic in the files a job has loaded.
  std::string keys;
  std::string rows;
  for (const LedgerEntry& e : entries) {
    const std::string job = std::to_string(e.job_id);
    const std::string key = engine::QuoteLiteral(e.key);
    keys += (keys.empty() ? "(" : ", (") + job + ", " + key + ")";
    rows += (rows.empty() ? "(" : ", (") + job + ", " + key + ", " + engine::QuoteLiteral(e.etag) +
            ", " + std::to_string(e.size) + ", " +
            engine::QuoteLiteral(std::string(FileStateName(e.state))) + ", " +
            std::to_string(e.task_id) + ", " + std::to_string(e.rows) + ", " +
            std::to_string(e.load_time_us) + ", " + engine::QuoteLiteral(e.error) + ", " +
            engine::QuoteLiteral(e.reason) + ")";
  }
  // A key has one ledger row: a reload (offset moved back, retry) replaces the old one.
  MR_RETURN_IF_ERROR(
      conn.Execute("DELETE FROM __millrace.files AS f USING (VALUES " + keys +
                   ") AS v(job_id, key) WHERE f.job_id = v.job_id AND f.key = v.key"));
  return conn.Execute(std::string("INSERT INTO __millrace.files (") + kFileColumns + ") VALUES " +
                      rows);
}

}  // namespace catalog

// ---------------------------------------------------------------------------------------------
// DuckDbCatalogStore

Result<int> DuckDbCatalogStore::StoredVersion() {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(auto tables, engine::QueryTextRows(*conn,
                                                         "SELECT table_name FROM duckdb_tables() "
                                                         "WHERE schema_name = '__millrace' AND "
                                                         "table_name IN ('jobs', "
                                                         "'catalog_version')"));
  bool has_jobs = false;
  bool has_version = false;
  for (const auto& row : tables) {
    has_jobs = has_jobs || row[0] == "jobs";
    has_version = has_version || row[0] == "catalog_version";
  }
  if (!has_version) return has_jobs ? 1 : 0;
  MR_ASSIGN_OR_RETURN(auto rows, engine::QueryTextRows(
                                     *conn, "SELECT max(version) FROM __millrace.catalog_version"));
  if (rows.size() != 1 || rows[0][0].empty()) {
    return Status::DataLoss("the job catalog in " + where_ + " has an empty catalog_version");
  }
  return std::stoi(rows[0][0]);
}

Status DuckDbCatalogStore::Open() {
  MR_ASSIGN_OR_RETURN(const int stored, StoredVersion());
  if (stored == 0) {
    return InTransaction([](Connection& conn) -> Status {
      MR_RETURN_IF_ERROR(conn.Execute(kCreateTables));
      MR_RETURN_IF_ERROR(catalog_sql::CreateUserTables(conn));
      MR_RETURN_IF_ERROR(catalog_sql::CreateAuditTable(conn));
      MR_RETURN_IF_ERROR(conn.Execute(table::kModelTableDdl));
      MR_RETURN_IF_ERROR(conn.Execute(table::kLabelTableDdl));
      MR_RETURN_IF_ERROR(conn.Execute(kReadingTableDdl));
      return conn.Execute("INSERT INTO __millrace.catalog_version VALUES (" +
                          std::to_string(kCatalogVersion) + ")");
    });
  }
  MR_ASSIGN_OR_RETURN(auto steps, PlanMigration(stored, where_));
  if (steps.empty()) return Status::Ok();
  Status migrated = InTransaction([&](Connection& conn) -> Status {
    for (const MigrationStep& step : steps) {
      Status s = RunMigration(conn, step, secrets_, where_);
      if (!s.ok()) {
        return s.WithContext("migrating the job catalog in " + where_ + " from version " +
                             std::to_string(step.from) + " (" + step.what + ")");
      }
    }
    MR_RETURN_IF_ERROR(conn.Execute(
        "CREATE TABLE IF NOT EXISTS __millrace.catalog_version (version INTEGER NOT NULL)"));
    MR_RETURN_IF_ERROR(conn.Execute("DELETE FROM __millrace.catalog_version"));
    return conn.Execute("INSERT INTO __millrace.catalog_version VALUES (" +
                        std::to_string(kCatalogVersion) + ")");
  });
  if (migrated.ok()) {
    MR_LOG(kInfo) << "migrated the job catalog in " << where_ << " from version " << stored
                  << " to " << kCatalogVersion;
  }
  return migrated;
}

Result<std::vector<JobRecord>> DuckDbCatalogStore::LoadJobs() {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(auto result, conn->Query(std::string("SELECT ") + kJobColumns +
                                               " FROM __millrace.jobs ORDER BY id"));
  std::vector<JobRecord> jobs;
  MR_RETURN_IF_ERROR(ForEachRow(*result, [&](const DataChunk& c, size_t r) -> Status {
    JobRecord j;
    size_t col = 0;
    j.id = Int(c, col++, r);
    j.name = Text(c, col++, r);
    j.definer = Text(c, col++, r);
    j.masked_sql = Text(c, col++, r);
    j.comment = Text(c, col++, r);
    MR_ASSIGN_OR_RETURN(j.state, ParseJobState(Text(c, col++, r)));
    j.create_time_us = Int(c, col++, r);
    MR_ASSIGN_OR_RETURN(j.current_offset, ReadOffset(c, col++, r, j));
    MR_ASSIGN_OR_RETURN(j.end_offset, ReadOffset(c, col++, r, j));
    j.succeed_tasks = Int(c, col++, r);
    j.failed_tasks = Int(c, col++, r);
    j.canceled_tasks = Int(c, col++, r);
    j.stats = ReadStats(c, &col, r);
    j.error_code = Text(c, col++, r);
    j.error_msg = Text(c, col++, r);
    j.runtime_msg = Text(c, col++, r);
    j.last_success_time_us = Int(c, col++, r);
    j.epoch = Int(c, col++, r);
    j.auto_resume_count = Int(c, col++, r);
    j.manual_pause = !c.IsNull(col, r) && c.GetBool(col, r);
    ++col;
    j.next_task_id = Int(c, col++, r);
    // A statement that cannot be opened does not keep the others from loading.
    auto statement = UnsealStatement(Text(c, col++, r), j.name);
    if (statement.ok()) {
      j.insert_sql = std::move(statement).value();
    } else {
      j.statement_error = statement.status().message();
    }
    j.database = Text(c, col++, r);
    j.reconcile_floor = Text(c, col++, r);
    jobs.push_back(std::move(j));
    return Status::Ok();
  }));
  MR_ASSIGN_OR_RETURN(auto props, Statement::Prepare(*conn,
                                                     "SELECT key, value FROM "
                                                     "__millrace.job_properties WHERE "
                                                     "job_id = ?"));
  for (JobRecord& job : jobs) {
    MR_ASSIGN_OR_RETURN(auto rows, props.Reset().Int(job.id).Query());
    PropertyMap given;
    MR_RETURN_IF_ERROR(ForEachRow(*rows, [&](const DataChunk& c, size_t r) {
      given[Text(c, 0, r)] = Text(c, 1, r);
      return Status::Ok();
    }));
    auto properties = JobProperties::Parse(given);
    if (!properties.ok()) {
      return properties.status().WithContext("job " + job.name + " in the catalog");
    }
    job.properties = std::move(properties).value();
  }
  return jobs;
}

Result<std::vector<TaskRecord>> DuckDbCatalogStore::LoadTasks(int64_t job_id, int limit) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(
      auto stmt,
      Statement::Prepare(*conn,
                         "SELECT * FROM (SELECT task_id, state, error_msg, create_time_us, "
                         "start_time_us, finish_time_us, scanned_rows, load_bytes, file_number, "
                         "file_size, filtered_rows, first_error_msg, start_file, end_file FROM "
                         "__millrace.tasks WHERE job_id = ? ORDER BY task_id DESC LIMIT ?) "
                         "ORDER BY task_id"));
  MR_ASSIGN_OR_RETURN(auto result, stmt.Int(job_id).Int(limit).Query());
  std::vector<TaskRecord> tasks;
  MR_RETURN_IF_ERROR(ForEachRow(*result, [&](const DataChunk& c, size_t r) -> Status {
    TaskRecord t;
    t.job_id = job_id;
    size_t col = 0;
    t.task_id = Int(c, col++, r);
    MR_ASSIGN_OR_RETURN(t.state, ParseTaskState(Text(c, col++, r)));
    t.error_msg = Text(c, col++, r);
    t.create_time_us = Int(c, col++, r);
    t.start_time_us = Int(c, col++, r);
    t.finish_time_us = Int(c, col++, r);
    t.stats = ReadStats(c, &col, r);
    t.first_error_msg = Text(c, col++, r);
    t.start_file = Text(c, col++, r);
    t.end_file = Text(c, col++, r);
    tasks.push_back(std::move(t));
    return Status::Ok();
  }));
  return tasks;
}

Result<std::string> DuckDbCatalogStore::SealStatement(const std::string& insert_sql) const {
  if (secrets_ == nullptr) {
    return Status::FailedPrecondition("the job catalog in " + where_ +
                                      " has no key to seal a job's credentials with");
  }
  return secrets_->Seal(insert_sql);
}

Result<std::string> DuckDbCatalogStore::UnsealStatement(const std::string& stored,
                                                        const std::string& job) const {
  if (secrets_ == nullptr) {
    return Status::FailedPrecondition("the job catalog in " + where_ + " has no key to open job " +
                                      job + "'s credentials with");
  }
  auto opened = secrets_->Unseal(stored);
  if (!opened.ok()) return opened.status().WithContext("job " + job + " in " + where_);
  return opened;
}

Status DuckDbCatalogStore::InsertJob(const JobRecord& j) {
  MR_ASSIGN_OR_RETURN(const std::string sealed, SealStatement(j.insert_sql));
  return InTransaction([&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(
        auto stmt,
        Statement::Prepare(conn, std::string("INSERT INTO __millrace.jobs (") + kJobColumns +
                                     ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                                     "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    stmt.Int(j.id).Str(j.name).Str(j.definer).Str(j.masked_sql).Str(j.comment);
    stmt.Str(std::string(JobStateName(j.state))).Int(j.create_time_us);
    stmt.Str(j.current_offset.ToJson()).Str(j.end_offset.ToJson());
    stmt.Int(j.succeed_tasks).Int(j.failed_tasks).Int(j.canceled_tasks);
    BindStats(stmt, j.stats);
    stmt.Str(j.error_code).Str(j.error_msg);
    stmt.Str(j.runtime_msg).Int(j.last_success_time_us).Int(j.epoch).Int(j.auto_resume_count);
    stmt.Bool(j.manual_pause).Int(j.next_task_id).Str(sealed).Str(j.database);
    stmt.Str(j.reconcile_floor);
    MR_RETURN_IF_ERROR(stmt.Run().status());
    return SaveProperties(conn, j);
  });
}

Status DuckDbCatalogStore::SaveJob(const JobRecord& j) {
  // A statement that could not be opened is kept as stored: the right key may open it later.
  const bool keep = !j.statement_error.empty();
  MR_ASSIGN_OR_RETURN(const std::string sealed,
                      keep ? Result<std::string>(std::string()) : SealStatement(j.insert_sql));
  return InTransaction([&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(
        auto stmt,
        Statement::Prepare(
            conn,
            "UPDATE __millrace.jobs SET masked_sql = ?, comment = ?, state = ?, "
            "current_offset = ?, end_offset = ?, succeed_tasks = ?, failed_tasks = ?, "
            "canceled_tasks = ?, scanned_rows = ?, load_bytes = ?, file_number = ?, "
            "file_size = ?, filtered_rows = ?, error_code = ?, error_msg = ?, runtime_msg = ?, "
            "last_success_time_us = ?, epoch = ?, auto_resume_count = ?, manual_pause = ?, "
            "next_task_id = ?, reconcile_floor = ?, insert_sql = CASE WHEN ? THEN insert_sql "
            "ELSE ? END, definer = ? WHERE id = ?"));
    stmt.Str(j.masked_sql).Str(j.comment).Str(std::string(JobStateName(j.state)));
    stmt.Str(j.current_offset.ToJson()).Str(j.end_offset.ToJson());
    stmt.Int(j.succeed_tasks).Int(j.failed_tasks).Int(j.canceled_tasks);
    BindStats(stmt, j.stats);
    stmt.Str(j.error_code).Str(j.error_msg).Str(j.runtime_msg).Int(j.last_success_time_us);
    stmt.Int(j.epoch).Int(j.auto_resume_count).Bool(j.manual_pause).Int(j.next_task_id);
    stmt.Str(j.reconcile_floor).Bool(keep).Str(sealed).Str(j.definer).Int(j.id);
    MR_ASSIGN_OR_RETURN(int64_t changed, stmt.Run());
    if (changed != 1) return Status::NotFound("job " + j.name + " is not in the catalog");
    return SaveProperties(conn, j);
  });
}

Status DuckDbCatalogStore::DeleteJob(int64_t job_id) {
  return InTransaction([&](Connection& conn) -> Status {
    for (const char* table :
         {"jobs", "job_properties", "tasks", "files", "filtered_rows", "reading"}) {
      const std::string column = std::string(table) == "jobs" ? "id" : "job_id";
      MR_ASSIGN_OR_RETURN(auto stmt,
                          Statement::Prepare(conn, std::string("DELETE FROM __millrace.") + table +
                                                       " WHERE " + column + " = ?"));
      MR_RETURN_IF_ERROR(stmt.Int(job_id).Run().status());
    }
    return Status::Ok();
  });
}

Result<std::vector<LedgerEntry>> DuckDbCatalogStore::LedgerEntries(int64_t job_id,
                                                                   std::optional<FileState> state) {
  return LedgerPage(job_id, "", std::numeric_limits<int64_t>::max(), state, "");
}

Result<std::vector<LedgerEntry>> DuckDbCatalogStore::LedgerPage(int64_t job_id,
                                                                const std::string& after,
                                                                int64_t limit,
                                                                std::optional<FileState> state,
                                                                const std::string& search) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  const std::string wanted = state ? std::string(FileStateName(*state)) : "";
  // Keyset: the ledger is written in key order (files load in order), so DuckDB's zone maps
  // skip the row groups before `after`.
  MR_ASSIGN_OR_RETURN(auto stmt,
                      Statement::Prepare(*conn,
                                         "SELECT key, etag, size, state, task_id, rows, "
                                         "load_time_us, error, reason FROM __millrace.files WHERE "
                                         "job_id = ? AND key > ? AND (? = '' OR state = ?) AND "
                                         "(? = '' OR contains(key, ?)) ORDER BY key LIMIT ?"));
  MR_ASSIGN_OR_RETURN(auto result, stmt.Int(job_id)
                                       .Str(after)
                                       .Str(wanted)
                                       .Str(wanted)
                                       .Str(search)
                                       .Str(search)
                                       .Int(limit)
                                       .Query());
  std::vector<LedgerEntry> entries;
  MR_RETURN_IF_ERROR(ForEachRow(*result, [&](const DataChunk& c, size_t r) -> Status {
    LedgerEntry e;
    e.job_id = job_id;
    e.key = Text(c, 0, r);
    e.etag = Text(c, 1, r);
    e.size = Int(c, 2, r);
    MR_ASSIGN_OR_RETURN(e.state, ParseFileState(Text(c, 3, r)));
    e.task_id = Int(c, 4, r);
    e.rows = Int(c, 5, r);
    e.load_time_us = Int(c, 6, r);
    e.error = Text(c, 7, r);
    e.reason = Text(c, 8, r);
    entries.push_back(std::move(e));
    return Status::Ok();
  }));
  return entries;
}

Result<std::vector<FilteredRow>> DuckDbCatalogStore::FilteredRowsPage(int64_t job_id,
                                                                      const FilteredRow& after,
                                                                      int64_t limit) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(auto stmt,
                      Statement::Prepare(*conn,
                                         "SELECT task_id, file, line, column_name, value, reason, "
                                         "time_us FROM __millrace.filtered_rows WHERE job_id = ? "
                                         "AND (task_id > ? OR (task_id = ? AND (file > ? OR (file "
                                         "= ? AND line > ?)))) ORDER BY task_id, file, line "
                                         "LIMIT ?"));
  MR_ASSIGN_OR_RETURN(auto result, stmt.Int(job_id)
                                       .Int(after.task_id)
                                       .Int(after.task_id)
                                       .Str(after.file)
                                       .Str(after.file)
                                       .Int(after.line)
                                       .Int(limit)
                                       .Query());
  return ReadFilteredRows(*result);
}

Result<std::map<int64_t, int64_t>> DuckDbCatalogStore::CountFiles(FileState state) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(auto stmt, Statement::Prepare(*conn,
                                                    "SELECT job_id, count(*) FROM "
                                                    "__millrace.files WHERE state = ? GROUP BY "
                                                    "job_id"));
  MR_ASSIGN_OR_RETURN(auto result, stmt.Str(std::string(FileStateName(state))).Query());
  std::map<int64_t, int64_t> counts;
  MR_RETURN_IF_ERROR(ForEachRow(*result, [&](const DataChunk& c, size_t r) -> Status {
    counts[Int(c, 0, r)] = Int(c, 1, r);
    return Status::Ok();
  }));
  return counts;
}

Result<std::map<int64_t, std::map<std::string, int64_t>>>
DuckDbCatalogStore::CountQuarantinedByReason() {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(auto result,
                      conn->Query("SELECT job_id, coalesce(nullif(reason, ''), 'UNKNOWN'), "
                                  "count(*) FROM __millrace.files WHERE state = 'QUARANTINED' "
                                  "GROUP BY ALL"));
  std::map<int64_t, std::map<std::string, int64_t>> counts;
  MR_RETURN_IF_ERROR(ForEachRow(*result, [&](const DataChunk& c, size_t r) -> Status {
    counts[Int(c, 0, r)][Text(c, 1, r)] = Int(c, 2, r);
    return Status::Ok();
  }));
  return counts;
}

Status DuckDbCatalogStore::RecordFiles(const std::vector<LedgerEntry>& entries) {
  if (entries.empty()) return Status::Ok();
  return InTransaction([&](Connection& conn) { return catalog::InsertLedger(conn, entries); });
}

Status DuckDbCatalogStore::MarkReading(int64_t job_id, const std::vector<ReadingMark>& marks) {
  if (marks.empty()) return Status::Ok();
  // One DELETE and one INSERT, as InsertLedger: a batch marks up to max_batch_files files.
  std::string keys;
  std::string rows;
  const std::string job = std::to_string(job_id);
  for (const ReadingMark& m : marks) {
    const std::string key = engine::QuoteLiteral(m.key);
    keys += (keys.empty() ? "" : ", ") + key;
    rows += (rows.empty() ? "(" : ", (") + job + ", " + key + ", " + std::to_string(m.task_id) +
            ", " + std::to_string(m.batch_files) + ", " + std::to_string(m.alone_crashes) + ", " +
            std::to_string(m.started_us) + ")";
  }
  return InTransaction([&](Connection& conn) -> Status {
    MR_RETURN_IF_ERROR(conn.Execute("DELETE FROM __millrace.reading WHERE job_id = " + job +
                                    " AND key IN (" + keys + ")"));
    return conn.Execute(
        "INSERT INTO __millrace.reading (job_id, key, task_id, batch_files, alone_crashes, "
        "started_us) VALUES " +
        rows);
  });
}

Status DuckDbCatalogStore::ClearReading(int64_t job_id, int64_t task_id) {
  return InTransaction([&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(auto stmt,
                        Statement::Prepare(conn,
                                           "DELETE FROM __millrace.reading WHERE job_id = ? AND "
                                           "task_id = ?"));
    return stmt.Int(job_id).Int(task_id).Run().status();
  });
}

Result<std::vector<ReadingMark>> DuckDbCatalogStore::ReadingMarks(int64_t job_id) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(auto stmt,
                      Statement::Prepare(*conn,
                                         "SELECT key, task_id, batch_files, alone_crashes, "
                                         "started_us FROM __millrace.reading WHERE job_id = ? "
                                         "ORDER BY key"));
  MR_ASSIGN_OR_RETURN(auto result, stmt.Int(job_id).Query());
  std::vector<ReadingMark> marks;
  MR_RETURN_IF_ERROR(ForEachRow(*result, [&](const DataChunk& c, size_t r) -> Status {
    marks.push_back(
        ReadingMark{Text(c, 0, r), Int(c, 1, r), Int(c, 2, r), Int(c, 3, r), Int(c, 4, r)});
    return Status::Ok();
  }));
  return marks;
}

}  // namespace millrace::job
