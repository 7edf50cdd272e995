#include "catalog/duckdb_job_store.h"

#include <limits>

#include "catalog/catalog_sql.h"
#include "catalog/catalog_tables.h"

namespace millrace::catalog {
namespace {

using engine::QueryResult;
using job::FileState;
using job::FilteredRow;
using job::JobProperties;
using job::JobRecord;
using job::LedgerEntry;
using job::Offset;
using job::ParseFileState;
using job::ParseJobState;
using job::ParseTaskState;
using job::PropertyMap;
using job::ReadingMark;
using job::TaskRecord;

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

}  // namespace

Result<std::vector<JobRecord>> DuckDbJobStore::LoadJobs() {
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

Result<std::vector<TaskRecord>> DuckDbJobStore::LoadTasks(int64_t job_id, int limit) {
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

Result<std::string> DuckDbJobStore::SealStatement(const std::string& insert_sql) const {
  if (secrets_ == nullptr) {
    return Status::FailedPrecondition("the job catalog in " + where_ +
                                      " has no key to seal a job's credentials with");
  }
  return secrets_->Seal(insert_sql);
}

Result<std::string> DuckDbJobStore::UnsealStatement(const std::string& stored,
                                                    const std::string& job) const {
  if (secrets_ == nullptr) {
    return Status::FailedPrecondition("the job catalog in " + where_ + " has no key to open job " +
                                      job + "'s credentials with");
  }
  auto opened = secrets_->Unseal(stored);
  if (!opened.ok()) return opened.status().WithContext("job " + job + " in " + where_);
  return opened;
}

Status DuckDbJobStore::InsertJob(const JobRecord& j) {
  MR_ASSIGN_OR_RETURN(const std::string sealed, SealStatement(j.insert_sql));
  return InTransaction(*db_, [&](Connection& conn) -> Status {
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

Status DuckDbJobStore::SaveJob(const JobRecord& j) {
  // A statement that could not be opened is kept as stored: the right key may open it later.
  const bool keep = !j.statement_error.empty();
  MR_ASSIGN_OR_RETURN(const std::string sealed,
                      keep ? Result<std::string>(std::string()) : SealStatement(j.insert_sql));
  return InTransaction(*db_, [&](Connection& conn) -> Status {
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

Status DuckDbJobStore::DeleteJob(int64_t job_id) {
  return InTransaction(*db_, [&](Connection& conn) -> Status {
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

Result<std::vector<LedgerEntry>> DuckDbJobStore::LedgerEntries(int64_t job_id,
                                                               std::optional<FileState> state) {
  return LedgerPage(job_id, "", std::numeric_limits<int64_t>::max(), state, "");
}

Result<std::vector<LedgerEntry>> DuckDbJobStore::LedgerPage(int64_t job_id,
                                                            const std::string& after, int64_t limit,
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

Result<std::vector<FilteredRow>> DuckDbJobStore::FilteredRowsPage(int64_t job_id,
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

Result<std::map<int64_t, int64_t>> DuckDbJobStore::CountFiles(FileState state) {
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
DuckDbJobStore::CountQuarantinedByReason() {
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

Status DuckDbJobStore::RecordFiles(const std::vector<LedgerEntry>& entries) {
  if (entries.empty()) return Status::Ok();
  return InTransaction(*db_, [&](Connection& conn) { return InsertLedger(conn, entries); });
}

Status DuckDbJobStore::MarkReading(int64_t job_id, const std::vector<ReadingMark>& marks) {
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
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_RETURN_IF_ERROR(conn.Execute("DELETE FROM __millrace.reading WHERE job_id = " + job +
                                    " AND key IN (" + keys + ")"));
    return conn.Execute(
        "INSERT INTO __millrace.reading (job_id, key, task_id, batch_files, alone_crashes, "
        "started_us) VALUES " +
        rows);
  });
}

Status DuckDbJobStore::ClearReading(int64_t job_id, int64_t task_id) {
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(auto stmt,
                        Statement::Prepare(conn,
                                           "DELETE FROM __millrace.reading WHERE job_id = ? AND "
                                           "task_id = ?"));
    return stmt.Int(job_id).Int(task_id).Run().status();
  });
}

Result<std::vector<ReadingMark>> DuckDbJobStore::ReadingMarks(int64_t job_id) {
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

}  // namespace millrace::catalog
