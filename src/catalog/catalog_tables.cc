#include "catalog/catalog_tables.h"

#include "table/load_labels.h"
#include "table/model_catalog.h"

namespace millrace::catalog {
namespace {

using job::FileStateName;
using job::FilteredRow;
using job::LedgerEntry;
using job::LoadStatistic;

// The job tables at kCatalogVersion.
// Version 1 (tests/catalog/catalog_v1.sql) had jobs.definition and file keys as offsets.
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

// Files being read (catalog version 6): job::JobStore::MarkReading.
constexpr const char* kReadingTableDdl = R"sql(
    CREATE TABLE __millrace.reading (
      job_id BIGINT, key VARCHAR, task_id BIGINT, batch_files BIGINT, alone_crashes BIGINT,
      started_us BIGINT);
)sql";

constexpr const char* kCreateUserTables = R"sql(
    CREATE TABLE __millrace.users (
      name VARCHAR NOT NULL, host VARCHAR NOT NULL, password_hash VARCHAR NOT NULL,
      require_ssl BOOLEAN NOT NULL, max_user_connections BIGINT NOT NULL,
      created_at_us BIGINT NOT NULL);
    CREATE TABLE __millrace.grants (
      user_name VARCHAR NOT NULL, database_name VARCHAR NOT NULL, table_name VARCHAR NOT NULL,
      privilege VARCHAR NOT NULL);
)sql";

}  // namespace

const char* const kJobColumns =
    "id, name, definer, masked_sql, comment, state, create_time_us, current_offset, "
    "end_offset, succeed_tasks, failed_tasks, canceled_tasks, scanned_rows, load_bytes, "
    "file_number, file_size, filtered_rows, error_code, error_msg, runtime_msg, "
    "last_success_time_us, epoch, auto_resume_count, manual_pause, next_task_id, insert_sql, "
    "database_name, reconcile_floor";

const char* const kTaskColumns =
    "job_id, task_id, state, error_msg, create_time_us, start_time_us, finish_time_us, "
    "scanned_rows, load_bytes, file_number, file_size, filtered_rows, first_error_msg, "
    "start_file, end_file";

const char* const kFileColumns =
    "job_id, key, etag, size, state, task_id, rows, load_time_us, error, reason";

Status CreateTables(Connection& conn) {
  MR_RETURN_IF_ERROR(conn.Execute(kCreateTables));
  MR_RETURN_IF_ERROR(CreateUserTables(conn));
  MR_RETURN_IF_ERROR(CreateAuditTable(conn));
  MR_RETURN_IF_ERROR(conn.Execute(table::kModelTableDdl));
  MR_RETURN_IF_ERROR(conn.Execute(table::kLabelTableDdl));
  return CreateReadingTable(conn);
}

Status CreateUserTables(Connection& conn) {
  return conn.Execute(kCreateUserTables);
}

Status CreateAuditTable(Connection& conn) {
  return conn.Execute(R"sql(
      CREATE SEQUENCE __millrace.audit_seq;
      CREATE TABLE __millrace.audit (
        seq BIGINT NOT NULL, time_us BIGINT NOT NULL, user_name VARCHAR NOT NULL,
        host VARCHAR NOT NULL, kind VARCHAR NOT NULL, action VARCHAR NOT NULL,
        statement VARCHAR NOT NULL, error VARCHAR NOT NULL);
  )sql");
}

Status CreateReadingTable(Connection& conn) {
  return conn.Execute(kReadingTableDdl);
}

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

Result<std::vector<FilteredRow>> ReadFilteredRows(engine::QueryResult& result) {
  std::vector<FilteredRow> rows;
  MR_RETURN_IF_ERROR(ForEachRow(result, [&](const DataChunk& c, size_t r) -> Status {
    rows.push_back(FilteredRow{Int(c, 0, r), Text(c, 1, r), Int(c, 2, r), Text(c, 3, r),
                               Text(c, 4, r), Text(c, 5, r), Int(c, 6, r)});
    return Status::Ok();
  }));
  return rows;
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

}  // namespace millrace::catalog
