#include "job/job_catalog.h"

namespace millrace::job::catalog {
namespace {

using engine::Connection;
using engine::DataChunk;

// Runs a prepared statement with the given bindings and drains its result.
class Statement {
 public:
  static Result<Statement> Prepare(Connection& conn, const std::string& sql) {
    MR_ASSIGN_OR_RETURN(auto prepared, conn.Prepare(sql));
    return Statement(std::move(prepared));
  }
  Statement& Str(const std::string& v) { return Check(stmt_->BindString(++index_, v)); }
  Statement& Int(int64_t v) { return Check(stmt_->BindInt64(++index_, v)); }
  Statement& Bool(bool v) { return Check(stmt_->BindBool(++index_, v)); }
  Statement& Dbl(double v) { return Check(stmt_->BindDouble(++index_, v)); }

  // Executes and returns the number of rows changed.
  Result<int64_t> Run() {
    MR_RETURN_IF_ERROR(bind_status_);
    MR_ASSIGN_OR_RETURN(auto result, stmt_->Execute());
    while (true) {
      MR_ASSIGN_OR_RETURN(auto chunk, result->Next());
      if (!chunk) break;
    }
    return result->rows_changed();
  }

  // Starts binding again from the first parameter.
  Statement& Reset() {
    index_ = 0;
    return *this;
  }

  Result<std::unique_ptr<engine::QueryResult>> Query() {
    MR_RETURN_IF_ERROR(bind_status_);
    return stmt_->Execute();
  }

 private:
  explicit Statement(std::unique_ptr<engine::PreparedStatement> stmt) : stmt_(std::move(stmt)) {}
  Statement& Check(Status s) {
    if (bind_status_.ok() && !s.ok()) bind_status_ = s;
    return *this;
  }
  std::unique_ptr<engine::PreparedStatement> stmt_;
  size_t index_ = 0;
  Status bind_status_;
};

// Visits every row of a query.
template <typename Fn>
Status ForEachRow(engine::QueryResult& result, Fn fn) {
  while (true) {
    MR_ASSIGN_OR_RETURN(auto chunk, result.Next());
    if (!chunk) return Status::Ok();
    for (size_t r = 0; r < chunk->size(); ++r)
      MR_RETURN_IF_ERROR(fn(*chunk, r));
  }
}

std::string Text(const DataChunk& c, size_t col, size_t row) {
  return c.IsNull(col, row) ? std::string() : std::string(c.GetString(col, row));
}
int64_t Int(const DataChunk& c, size_t col, size_t row) {
  return c.IsNull(col, row) ? 0 : c.GetInt64(col, row);
}

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
    "id, name, definer, definition, masked_sql, comment, state, create_time_us, current_offset, "
    "end_offset, succeed_tasks, failed_tasks, canceled_tasks, scanned_rows, load_bytes, "
    "file_number, file_size, filtered_rows, error_code, error_msg, runtime_msg, "
    "last_success_time_us, epoch, auto_resume_count, manual_pause, next_task_id, insert_sql, "
    "database_name, reconcile_floor";

Status SaveProperties(Connection& conn, const JobRecord& job) {
  MR_ASSIGN_OR_RETURN(auto del, Statement::Prepare(conn,
                                                   "DELETE FROM __millrace.job_properties "
                                                   "WHERE job_id = ?"));
  MR_RETURN_IF_ERROR(del.Int(job.id).Run().status());
  for (const auto& [key, value] : job.properties.given) {
    MR_ASSIGN_OR_RETURN(auto ins, Statement::Prepare(conn,
                                                     "INSERT INTO __millrace.job_properties "
                                                     "VALUES (?, ?, ?)"));
    MR_RETURN_IF_ERROR(ins.Int(job.id).Str(key).Str(value).Run().status());
  }
  return Status::Ok();
}

}  // namespace

Status Init(Connection& conn) {
  return conn.Execute(R"sql(
    CREATE SCHEMA IF NOT EXISTS __millrace;
    CREATE TABLE IF NOT EXISTS __millrace.jobs (
      id BIGINT PRIMARY KEY, name VARCHAR NOT NULL, definer VARCHAR, definition VARCHAR,
      masked_sql VARCHAR, comment VARCHAR, state VARCHAR, create_time_us BIGINT,
      current_offset VARCHAR, end_offset VARCHAR, succeed_tasks BIGINT, failed_tasks BIGINT,
      canceled_tasks BIGINT, scanned_rows BIGINT, load_bytes BIGINT, file_number BIGINT,
      file_size BIGINT, filtered_rows BIGINT, error_code VARCHAR, error_msg VARCHAR,
      runtime_msg VARCHAR, last_success_time_us BIGINT, epoch BIGINT, auto_resume_count BIGINT,
      manual_pause BOOLEAN, next_task_id BIGINT, insert_sql VARCHAR, database_name VARCHAR,
      reconcile_floor VARCHAR);
    CREATE TABLE IF NOT EXISTS __millrace.job_properties (
      job_id BIGINT, key VARCHAR, value VARCHAR);
    CREATE TABLE IF NOT EXISTS __millrace.tasks (
      job_id BIGINT, task_id BIGINT, state VARCHAR, error_msg VARCHAR, create_time_us BIGINT,
      start_time_us BIGINT, finish_time_us BIGINT, scanned_rows BIGINT, load_bytes BIGINT,
      file_number BIGINT, file_size BIGINT, filtered_rows BIGINT, first_error_msg VARCHAR,
      start_file VARCHAR, end_file VARCHAR);
    CREATE TABLE IF NOT EXISTS __millrace.filtered_rows (
      job_id BIGINT, task_id BIGINT, file VARCHAR, line BIGINT, column_name VARCHAR,
      value VARCHAR, reason VARCHAR, time_us BIGINT);
    CREATE TABLE IF NOT EXISTS __millrace.files (
      job_id BIGINT, key VARCHAR, etag VARCHAR, size BIGINT, state VARCHAR, task_id BIGINT,
      rows BIGINT, load_time_us BIGINT, error VARCHAR);
  )sql");
}

Result<int64_t> NextJobId(Connection& conn) {
  MR_ASSIGN_OR_RETURN(auto result,
                      conn.Query("SELECT coalesce(max(id), 0) + 1 FROM __millrace.jobs"));
  MR_ASSIGN_OR_RETURN(auto chunk, result->Next());
  if (!chunk || chunk->size() != 1) return Status::Internal("cannot read the next job id");
  return chunk->GetInt64(0, 0);
}

Result<std::vector<StoredJob>> LoadJobs(Connection& conn) {
  MR_ASSIGN_OR_RETURN(auto result, conn.Query(std::string("SELECT ") + kJobColumns +
                                              " FROM __millrace.jobs ORDER BY id"));
  std::vector<StoredJob> jobs;
  MR_RETURN_IF_ERROR(ForEachRow(*result, [&](const DataChunk& c, size_t r) -> Status {
    StoredJob stored;
    JobRecord& j = stored.record;
    size_t col = 0;
    j.id = Int(c, col++, r);
    j.name = Text(c, col++, r);
    j.definer = Text(c, col++, r);
    j.definition = Text(c, col++, r);
    j.masked_sql = Text(c, col++, r);
    j.comment = Text(c, col++, r);
    MR_ASSIGN_OR_RETURN(j.state, ParseJobState(Text(c, col++, r)));
    j.create_time_us = Int(c, col++, r);
    j.current_offset = Text(c, col++, r);
    j.end_offset = Text(c, col++, r);
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
    stored.insert_sql = Text(c, col++, r);
    j.database = Text(c, col++, r);
    j.reconcile_floor = Text(c, col++, r);
    jobs.push_back(std::move(stored));
    return Status::Ok();
  }));
  for (StoredJob& stored : jobs) {
    MR_ASSIGN_OR_RETURN(auto props, Statement::Prepare(conn,
                                                       "SELECT key, value FROM "
                                                       "__millrace.job_properties WHERE "
                                                       "job_id = ?"));
    MR_ASSIGN_OR_RETURN(auto result, props.Int(stored.record.id).Query());
    PropertyMap given;
    MR_RETURN_IF_ERROR(ForEachRow(*result, [&](const DataChunk& c, size_t r) {
      given[Text(c, 0, r)] = Text(c, 1, r);
      return Status::Ok();
    }));
    auto properties = JobProperties::Parse(given);
    if (!properties.ok()) {
      return properties.status().WithContext("job " + stored.record.name + " in the catalog");
    }
    stored.record.properties = std::move(properties).value();
  }
  return jobs;
}

Result<std::vector<TaskRecord>> LoadTasks(Connection& conn, int64_t job_id, int limit) {
  MR_ASSIGN_OR_RETURN(
      auto stmt,
      Statement::Prepare(conn,
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
    const std::string state = Text(c, col++, r);
    for (TaskState s : {TaskState::kPending, TaskState::kRunning, TaskState::kSuccess,
                        TaskState::kFailed, TaskState::kCanceled}) {
      if (TaskStateName(s) == state) t.state = s;
    }
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

Status InsertJob(Connection& conn, const JobRecord& j, const std::string& insert_sql) {
  MR_ASSIGN_OR_RETURN(
      auto stmt,
      Statement::Prepare(conn, std::string("INSERT INTO __millrace.jobs (") + kJobColumns +
                                   ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                                   "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  stmt.Int(j.id).Str(j.name).Str(j.definer).Str(j.definition).Str(j.masked_sql).Str(j.comment);
  stmt.Str(std::string(JobStateName(j.state))).Int(j.create_time_us).Str(j.current_offset);
  stmt.Str(j.end_offset).Int(j.succeed_tasks).Int(j.failed_tasks).Int(j.canceled_tasks);
  BindStats(stmt, j.stats);
  stmt.Str(j.error_code).Str(j.error_msg);
  stmt.Str(j.runtime_msg).Int(j.last_success_time_us).Int(j.epoch).Int(j.auto_resume_count);
  stmt.Bool(j.manual_pause).Int(j.next_task_id).Str(insert_sql).Str(j.database);
  stmt.Str(j.reconcile_floor);
  MR_RETURN_IF_ERROR(stmt.Run().status());
  return SaveProperties(conn, j);
}

Status SaveJob(Connection& conn, const JobRecord& j, const std::string& insert_sql) {
  MR_ASSIGN_OR_RETURN(
      auto stmt,
      Statement::Prepare(
          conn,
          "UPDATE __millrace.jobs SET definition = ?, masked_sql = ?, comment = ?, state = ?, "
          "current_offset = ?, end_offset = ?, succeed_tasks = ?, failed_tasks = ?, "
          "canceled_tasks = ?, scanned_rows = ?, load_bytes = ?, file_number = ?, file_size = ?, "
          "filtered_rows = ?, error_code = ?, error_msg = ?, runtime_msg = ?, "
          "last_success_time_us = ?, epoch = ?, auto_resume_count = ?, manual_pause = ?, "
          "next_task_id = ?, reconcile_floor = ?, "
          "insert_sql = CASE WHEN ? = '' THEN insert_sql ELSE ? END WHERE id = ?"));
  stmt.Str(j.definition).Str(j.masked_sql).Str(j.comment).Str(std::string(JobStateName(j.state)));
  stmt.Str(j.current_offset).Str(j.end_offset).Int(j.succeed_tasks).Int(j.failed_tasks);
  stmt.Int(j.canceled_tasks);
  BindStats(stmt, j.stats);
  stmt.Str(j.error_code).Str(j.error_msg).Str(j.runtime_msg).Int(j.last_success_time_us);
  stmt.Int(j.epoch).Int(j.auto_resume_count).Bool(j.manual_pause).Int(j.next_task_id);
  stmt.Str(j.reconcile_floor).Str(insert_sql).Str(insert_sql).Int(j.id);
  MR_ASSIGN_OR_RETURN(int64_t changed, stmt.Run());
  if (changed != 1) return Status::NotFound("job " + j.name + " is not in the catalog");
  return SaveProperties(conn, j);
}

Status DeleteJob(Connection& conn, int64_t job_id) {
  for (const char* table : {"jobs", "job_properties", "tasks", "files", "filtered_rows"}) {
    const std::string column = std::string(table) == "jobs" ? "id" : "job_id";
    MR_ASSIGN_OR_RETURN(auto stmt,
                        Statement::Prepare(conn, std::string("DELETE FROM __millrace.") + table +
                                                     " WHERE " + column + " = ?"));
    MR_RETURN_IF_ERROR(stmt.Int(job_id).Run().status());
  }
  return Status::Ok();
}

Result<bool> AdvanceOffset(Connection& conn, const JobRecord& j, const std::string& start_offset,
                           int64_t epoch) {
  MR_ASSIGN_OR_RETURN(
      auto stmt,
      Statement::Prepare(
          conn,
          "UPDATE __millrace.jobs SET current_offset = ?, end_offset = ?, succeed_tasks = ?, "
          "scanned_rows = ?, load_bytes = ?, file_number = ?, file_size = ?, filtered_rows = ?, "
          "last_success_time_us = ?, next_task_id = ?, runtime_msg = ? "
          "WHERE id = ? AND state = 'RUNNING' AND epoch = ? AND current_offset = ?"));
  stmt.Str(j.current_offset).Str(j.end_offset).Int(j.succeed_tasks);
  BindStats(stmt, j.stats);
  stmt.Int(j.last_success_time_us).Int(j.next_task_id);
  stmt.Str(j.runtime_msg).Int(j.id).Int(epoch).Str(start_offset);
  MR_ASSIGN_OR_RETURN(int64_t changed, stmt.Run());
  return changed == 1;
}

Status InsertTask(Connection& conn, const TaskRecord& t) {
  MR_ASSIGN_OR_RETURN(auto stmt, Statement::Prepare(conn,
                                                    "INSERT INTO __millrace.tasks VALUES "
                                                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                                                    "?, ?, ?)"));
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
            std::to_string(e.load_time_us) + ", " + engine::QuoteLiteral(e.error) + ")";
  }
  // A key has one ledger row: a reload (offset moved back, retry) replaces the old one.
  MR_RETURN_IF_ERROR(
      conn.Execute("DELETE FROM __millrace.files AS f USING (VALUES " + keys +
                   ") AS v(job_id, key) WHERE f.job_id = v.job_id AND f.key = v.key"));
  return conn.Execute("INSERT INTO __millrace.files VALUES " + rows);
}

Result<std::vector<LedgerEntry>> LedgerEntries(Connection& conn, int64_t job_id,
                                               const std::string& state) {
  MR_ASSIGN_OR_RETURN(auto stmt,
                      Statement::Prepare(conn,
                                         "SELECT key, etag, size, state, task_id, rows, "
                                         "load_time_us, error FROM __millrace.files WHERE "
                                         "job_id = ? AND (? = '' OR state = ?) ORDER BY "
                                         "key"));
  MR_ASSIGN_OR_RETURN(auto result, stmt.Int(job_id).Str(state).Str(state).Query());
  std::vector<LedgerEntry> entries;
  MR_RETURN_IF_ERROR(ForEachRow(*result, [&](const DataChunk& c, size_t r) {
    LedgerEntry e;
    e.job_id = job_id;
    e.key = Text(c, 0, r);
    e.etag = Text(c, 1, r);
    e.size = Int(c, 2, r);
    const std::string s = Text(c, 3, r);
    for (FileState f :
         {FileState::kLoaded, FileState::kSkipped, FileState::kQuarantined, FileState::kRetrying}) {
      if (FileStateName(f) == s) e.state = f;
    }
    e.task_id = Int(c, 4, r);
    e.rows = Int(c, 5, r);
    e.load_time_us = Int(c, 6, r);
    e.error = Text(c, 7, r);
    entries.push_back(std::move(e));
    return Status::Ok();
  }));
  return entries;
}

Status SetLedgerState(Connection& conn, int64_t job_id, const std::string& key, FileState state,
                      const std::string& error) {
  MR_ASSIGN_OR_RETURN(auto stmt, Statement::Prepare(conn,
                                                    "UPDATE __millrace.files SET state = "
                                                    "?, error = ? WHERE job_id = ? AND key "
                                                    "= ?"));
  return stmt.Str(std::string(FileStateName(state))).Str(error).Int(job_id).Str(key).Run().status();
}

}  // namespace millrace::job::catalog
