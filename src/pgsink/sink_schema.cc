#include "pgsink/sink_schema.h"

#include <charconv>

namespace millrace::pgsink {
namespace {

constexpr char kDdl[] =
    "CREATE SCHEMA IF NOT EXISTS millrace;"
    "CREATE TABLE IF NOT EXISTS millrace.version (version integer NOT NULL);"
    "CREATE TABLE IF NOT EXISTS millrace.jobs (job_key text PRIMARY KEY, job_offset text NOT "
    "NULL, epoch bigint NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());"
    "CREATE TABLE IF NOT EXISTS millrace.files (job_key text NOT NULL, file_key text NOT NULL, "
    "etag text NOT NULL, size bigint NOT NULL, state text NOT NULL, task_id bigint NOT NULL, "
    "rows bigint NOT NULL, load_time_us bigint NOT NULL, error text NOT NULL, reason text NOT "
    "NULL, epoch bigint NOT NULL DEFAULT 0, server text NOT NULL DEFAULT '', PRIMARY KEY "
    "(job_key, file_key));"
    "CREATE TABLE IF NOT EXISTS millrace.tasks (job_key text NOT NULL, task_id bigint NOT NULL, "
    "state text NOT NULL, error_msg text NOT NULL, create_time_us bigint NOT NULL, "
    "finish_time_us bigint NOT NULL, scanned_rows bigint NOT NULL, load_bytes bigint NOT NULL, "
    "file_number bigint NOT NULL, filtered_rows bigint NOT NULL, start_file text NOT NULL, "
    "end_file text NOT NULL, epoch bigint NOT NULL DEFAULT 0, server text NOT NULL DEFAULT '', "
    "PRIMARY KEY (job_key, task_id));";
// From version 1: who committed each file and task (CommitStamp); earlier rows say epoch 0 and
// no server.
constexpr char kMigrateFrom1[] =
    "ALTER TABLE millrace.files ADD COLUMN IF NOT EXISTS epoch bigint NOT NULL DEFAULT 0, ADD "
    "COLUMN IF NOT EXISTS server text NOT NULL DEFAULT '';"
    "ALTER TABLE millrace.tasks ADD COLUMN IF NOT EXISTS epoch bigint NOT NULL DEFAULT 0, ADD "
    "COLUMN IF NOT EXISTS server text NOT NULL DEFAULT '';"
    "UPDATE millrace.version SET version = 2;";

int64_t ToInt(const pg::Field& field) {
  int64_t v = 0;
  if (field) std::from_chars(field->data(), field->data() + field->size(), v);
  return v;
}

// The version recorded, 0 when the schema has none yet.
Result<int64_t> RecordedVersion(pg::PgConnection& conn) {
  MR_ASSIGN_OR_RETURN(pg::Rows exists,
                      conn.Query("SELECT to_regclass('millrace.version') IS NOT NULL"));
  if (exists.rows.empty() || exists.rows[0][0].value_or("f") != "t") return 0;
  MR_ASSIGN_OR_RETURN(pg::Rows version,
                      conn.Query("SELECT coalesce(max(version), 0) FROM millrace.version"));
  return version.rows.empty() ? 0 : ToInt(version.rows[0][0]);
}

Status CheckVersion(int64_t recorded, const pg::PgConnection& conn) {
  if (recorded <= kSinkSchemaVersion) return Status::Ok();
  return Status::FailedPrecondition("the millrace schema in " + pg::Describe(conn.params()) +
                                    " is at version " + std::to_string(recorded) +
                                    ", newer than this Millrace writes (version " +
                                    std::to_string(kSinkSchemaVersion) +
                                    "); run the Millrace release that wrote it, or a newer one");
}

// Runs `sql` in a transaction of its own.
Status InTransaction(pg::PgConnection& conn, const std::string& sql) {
  MR_RETURN_IF_ERROR(conn.Execute("BEGIN"));
  Status made = conn.Execute(sql);
  if (made.ok()) return conn.Execute("COMMIT");
  conn.Execute("ROLLBACK").IgnoreError();  // the statement's error is the one to report
  return made;
}

Status Create(pg::PgConnection& conn) {
  return InTransaction(conn, std::string(kDdl) + "INSERT INTO millrace.version SELECT " +
                                 std::to_string(kSinkSchemaVersion) +
                                 " WHERE NOT EXISTS (SELECT 1 FROM millrace.version)");
}

}  // namespace

std::string JobKey(const job::JobRecord& job) {
  return job.name + "#" + std::to_string(job.id) + "@" + std::to_string(job.create_time_us);
}

Status EnsureSinkSchema(pg::PgConnection& conn) {
  MR_ASSIGN_OR_RETURN(int64_t recorded, RecordedVersion(conn));
  MR_RETURN_IF_ERROR(CheckVersion(recorded, conn));
  if (recorded == kSinkSchemaVersion) return Status::Ok();
  if (recorded == 1) {
    // Servers migrating at once: the columns' IF NOT EXISTS and the table locks of ALTER make
    // the second a no-op.
    return InTransaction(conn, kMigrateFrom1)
        .WithContext("migrating the millrace schema in " + pg::Describe(conn.params()) +
                     " to version 2");
  }
  Status made = Create(conn);
  if (!made.ok()) {
    // Another server made it meanwhile: its DDL won (a duplicate schema, table or type).
    const std::string state = pg::SqlStateOf(made);
    if (state != "23505" && state != "42P06" && state != "42P07") {
      return made.WithContext("creating the millrace schema in " + pg::Describe(conn.params()));
    }
    MR_ASSIGN_OR_RETURN(recorded, RecordedVersion(conn));
    MR_RETURN_IF_ERROR(CheckVersion(recorded, conn));
    if (recorded != kSinkSchemaVersion) return made;
  }
  return Status::Ok();
}

Result<std::optional<SinkJobRow>> ReadJob(pg::PgConnection& conn, const std::string& job_key) {
  MR_ASSIGN_OR_RETURN(pg::Rows rows,
                      conn.Query("SELECT job_offset, epoch FROM millrace.jobs WHERE job_key = " +
                                 conn.Literal(job_key)));
  if (rows.rows.empty()) return std::optional<SinkJobRow>();
  auto offset = job::Offset::Parse(rows.rows[0][0].value_or("{}"));
  if (!offset.ok()) return offset.status().WithContext("job " + job_key + " in millrace.jobs");
  return std::optional<SinkJobRow>(SinkJobRow{std::move(offset).value(), ToInt(rows.rows[0][1])});
}

Result<bool> AdvanceJob(pg::PgConnection& conn, const std::string& job_key,
                        const job::Offset& start, const job::Offset& end, int64_t epoch) {
  const std::string key = conn.Literal(job_key);
  const std::string epoch_text = std::to_string(epoch);
  // The row is made at the job's first commit; FOR UPDATE holds it for this transaction.
  MR_ASSIGN_OR_RETURN(pg::Rows rows,
                      conn.Query("SELECT job_offset, epoch FROM millrace.jobs WHERE job_key = " +
                                 key + " FOR UPDATE"));
  if (rows.rows.empty()) {
    MR_ASSIGN_OR_RETURN(pg::Rows inserted,
                        conn.Query("INSERT INTO millrace.jobs (job_key, job_offset, epoch) "
                                   "VALUES (" +
                                   key + ", " + conn.Literal(end.ToJson()) + ", " + epoch_text +
                                   ") ON CONFLICT (job_key) DO NOTHING RETURNING 1"));
    return !inserted.rows.empty();
  }
  if (rows.rows[0][0].value_or("") != start.ToJson() || ToInt(rows.rows[0][1]) > epoch) {
    return false;
  }
  MR_RETURN_IF_ERROR(
      conn.Execute("UPDATE millrace.jobs SET job_offset = " + conn.Literal(end.ToJson()) +
                   ", epoch = " + epoch_text + ", updated_at = now() WHERE job_key = " + key));
  return true;
}

Status StampEpoch(pg::PgConnection& conn, const std::string& job_key, const job::Offset& offset,
                  int64_t epoch) {
  return conn.Execute("INSERT INTO millrace.jobs (job_key, job_offset, epoch) VALUES (" +
                      conn.Literal(job_key) + ", " + conn.Literal(offset.ToJson()) + ", " +
                      std::to_string(epoch) +
                      ") ON CONFLICT (job_key) DO UPDATE SET epoch = GREATEST(millrace.jobs.epoch, "
                      "EXCLUDED.epoch), updated_at = now()");
}

Status InsertLedger(pg::PgConnection& conn, const std::string& job_key,
                    const std::vector<job::LedgerEntry>& entries, const CommitStamp& stamp) {
  if (entries.empty()) return Status::Ok();
  const std::string key = conn.Literal(job_key);
  const std::string stamped = std::to_string(stamp.epoch) + ", " + conn.Literal(stamp.server);
  std::string rows;
  for (const job::LedgerEntry& e : entries) {
    rows += (rows.empty() ? "(" : ", (") + key + ", " + conn.Literal(e.key) + ", " +
            conn.Literal(e.etag) + ", " + std::to_string(e.size) + ", " +
            conn.Literal(job::FileStateName(e.state)) + ", " + std::to_string(e.task_id) + ", " +
            std::to_string(e.rows) + ", " + std::to_string(e.load_time_us) + ", " +
            conn.Literal(e.error) + ", " + conn.Literal(e.reason) + ", " + stamped + ")";
  }
  return conn.Execute(
      "INSERT INTO millrace.files (job_key, file_key, etag, size, state, task_id, rows, "
      "load_time_us, error, reason, epoch, server) VALUES " +
      rows +
      " ON CONFLICT (job_key, file_key) DO UPDATE SET etag = EXCLUDED.etag, size = "
      "EXCLUDED.size, state = EXCLUDED.state, task_id = EXCLUDED.task_id, rows = EXCLUDED.rows, "
      "load_time_us = EXCLUDED.load_time_us, error = EXCLUDED.error, reason = EXCLUDED.reason, "
      "epoch = EXCLUDED.epoch, server = EXCLUDED.server");
}

Status InsertTask(pg::PgConnection& conn, const std::string& job_key, const job::TaskRecord& t,
                  int keep, const CommitStamp& stamp) {
  const std::string key = conn.Literal(job_key);
  MR_RETURN_IF_ERROR(conn.Execute(
      "INSERT INTO millrace.tasks (job_key, task_id, state, error_msg, create_time_us, "
      "finish_time_us, scanned_rows, load_bytes, file_number, filtered_rows, start_file, "
      "end_file, epoch, server) VALUES (" +
      key + ", " + std::to_string(t.task_id) + ", " + conn.Literal(job::TaskStateName(t.state)) +
      ", " + conn.Literal(t.error_msg) + ", " + std::to_string(t.create_time_us) + ", " +
      std::to_string(t.finish_time_us) + ", " + std::to_string(t.stats.scanned_rows) + ", " +
      std::to_string(t.stats.load_bytes) + ", " + std::to_string(t.stats.file_number) + ", " +
      std::to_string(t.stats.filtered_rows) + ", " + conn.Literal(t.start_file) + ", " +
      conn.Literal(t.end_file) + ", " + std::to_string(stamp.epoch) + ", " +
      conn.Literal(stamp.server) + ") ON CONFLICT (job_key, task_id) DO NOTHING"));
  return conn.Execute("DELETE FROM millrace.tasks WHERE job_key = " + key +
                      " AND task_id <= " + std::to_string(t.task_id - keep));
}

Result<std::vector<job::LedgerEntry>> ReadLedger(pg::PgConnection& conn,
                                                 const std::string& job_key) {
  MR_ASSIGN_OR_RETURN(pg::Rows rows,
                      conn.Query("SELECT file_key, etag, size, state, task_id, rows, "
                                 "load_time_us, error, reason FROM millrace.files WHERE job_key "
                                 "= " +
                                 conn.Literal(job_key) + " ORDER BY file_key"));
  std::vector<job::LedgerEntry> entries;
  for (const pg::Row& row : rows.rows) {
    job::LedgerEntry e;
    e.key = row[0].value_or("");
    e.etag = row[1].value_or("");
    e.size = ToInt(row[2]);
    MR_ASSIGN_OR_RETURN(e.state, job::ParseFileState(row[3].value_or("")));
    e.task_id = ToInt(row[4]);
    e.rows = ToInt(row[5]);
    e.load_time_us = ToInt(row[6]);
    e.error = row[7].value_or("");
    e.reason = row[8].value_or("");
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace millrace::pgsink
