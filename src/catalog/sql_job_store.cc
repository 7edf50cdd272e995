#include "catalog/sql_job_store.h"

#include <limits>
#include <set>

#include "catalog/catalog_sql.h"
#include "catalog/catalog_tables.h"

namespace millrace::catalog {
namespace {

using job::FileState;
using job::FilteredRow;
using job::JobProperties;
using job::JobRecord;
using job::LedgerEntry;
using job::PropertyMap;
using job::ReadingMark;
using job::TaskRecord;

Status SaveProperties(Connection& conn, const JobRecord& job) {
  const auto& table = JobPropertiesTable();
  MR_ASSIGN_OR_RETURN(
      auto del, Statement::Prepare(conn, "DELETE FROM " + table.qualified() + " WHERE job_id = ?"));
  MR_RETURN_IF_ERROR(del.Int(job.id).Run().status());
  for (const auto& [key, value] : job.properties.given) {
    MR_RETURN_IF_ERROR(table.InsertRow(conn, PropertyRow{job.id, key, value}));
  }
  return Status::Ok();
}

// Why SaveJob changed no row of job `j` (JobStore::SaveJob): it is gone, or its stored epoch
// is newer than the record's.
Status NotSaved(Connection& conn, const JobRecord& j) {
  MR_ASSIGN_OR_RETURN(
      auto stmt,
      Statement::Prepare(conn, "SELECT epoch FROM " + JobsTable().qualified() + " WHERE id = ?"));
  std::optional<int64_t> stored;
  MR_RETURN_IF_ERROR(stmt.Int(j.id)
                         .ForEach([&](const SqlRow& row) {
                           stored = row.Int(0);
                           return Status::Ok();
                         })
                         .status());
  if (!stored) return Status::NotFound("job " + j.name + " is not in the catalog");
  return Status::Aborted("job " + j.name + " changed elsewhere: its stored epoch " +
                         std::to_string(*stored) + " is newer than this server's " +
                         std::to_string(j.epoch) +
                         " (in a cluster, another server has taken the job over)");
}

// Reads every row of `sql` (a Select() of `table` and its conditions, bound by `bind`).
template <typename Record, typename Bind>
Result<std::vector<Record>> ReadRows(Connection& conn, const Table<Record>& table,
                                     const std::string& sql, Bind bind) {
  MR_ASSIGN_OR_RETURN(auto stmt, Statement::Prepare(conn, sql));
  bind(stmt);
  return table.ReadAll(stmt);
}

}  // namespace

Result<std::vector<JobRecord>> SqlJobStore::LoadJobs() {
  return Load(std::nullopt);
}

Result<JobRecord> SqlJobStore::LoadJob(int64_t job_id) {
  MR_ASSIGN_OR_RETURN(std::vector<JobRecord> jobs, Load(job_id));
  if (jobs.empty())
    return Status::NotFound("job " + std::to_string(job_id) + " is not in the catalog");
  return std::move(jobs[0]);
}

Result<std::vector<JobRecord>> SqlJobStore::Load(std::optional<int64_t> job_id) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  const auto bind = [&](Statement& stmt) {
    if (job_id) stmt.Int(*job_id);
  };
  MR_ASSIGN_OR_RETURN(
      std::vector<JobRecord> jobs,
      ReadRows(*conn, JobsTable(),
               JobsTable().Select() + (job_id ? " WHERE id = ?" : "") + " ORDER BY id", bind));
  for (JobRecord& j : jobs) {
    // A statement that cannot be opened does not keep the others from loading.
    auto statement = UnsealStatement(j.insert_sql, j.name);
    j.insert_sql.clear();
    if (statement.ok()) {
      j.insert_sql = std::move(statement).value();
    } else {
      j.statement_error = statement.status().message();
    }
  }
  // Every job's properties in one read: the cluster's servers load the jobs each lease period.
  const auto& properties_table = JobPropertiesTable();
  MR_ASSIGN_OR_RETURN(
      std::vector<PropertyRow> rows,
      ReadRows(*conn, properties_table,
               properties_table.Select() + (job_id ? " WHERE job_id = ?" : ""), bind));
  std::map<int64_t, PropertyMap> given;
  for (PropertyRow& row : rows)
    given[row.job_id][row.key] = std::move(row.value);
  for (JobRecord& job : jobs) {
    auto properties = JobProperties::Parse(given[job.id]);
    if (!properties.ok()) {
      return properties.status().WithContext("job " + job.name + " in the catalog");
    }
    job.properties = std::move(properties).value();
  }
  return jobs;
}

Result<std::vector<TaskRecord>> SqlJobStore::LoadTasks(int64_t job_id, int limit) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  const auto& table = TasksTable();
  return ReadRows(*conn, table,
                  "SELECT * FROM (" + table.Select() +
                      " WHERE job_id = ? ORDER BY task_id DESC LIMIT ?) AS newest ORDER BY task_id",
                  [&](Statement& stmt) { stmt.Int(job_id).Int(limit); });
}

Result<std::string> SqlJobStore::SealStatement(const std::string& insert_sql) const {
  if (secrets_ == nullptr) {
    return Status::FailedPrecondition("the job catalog in " + where_ +
                                      " has no key to seal a job's credentials with");
  }
  return secrets_->Seal(insert_sql);
}

Result<std::string> SqlJobStore::UnsealStatement(const std::string& stored,
                                                 const std::string& job) const {
  if (secrets_ == nullptr) {
    return Status::FailedPrecondition("the job catalog in " + where_ + " has no key to open job " +
                                      job + "'s credentials with");
  }
  auto opened = secrets_->Unseal(stored);
  if (!opened.ok()) return opened.status().WithContext("job " + job + " in " + where_);
  return opened;
}

Status SqlJobStore::InsertJob(const JobRecord& j) {
  JobRecord stored = j;
  MR_ASSIGN_OR_RETURN(stored.insert_sql, SealStatement(j.insert_sql));
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_RETURN_IF_ERROR(JobsTable().InsertRow(conn, stored));
    return SaveProperties(conn, j);
  });
}

Status SqlJobStore::SaveJob(const JobRecord& j) {
  return SaveJobThen(j, [](Connection&) { return Status::Ok(); });
}

Status SqlJobStore::SaveJobFromOffset(const JobRecord& j) {
  return SaveJobThen(j, [&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(auto stmt, Statement::Prepare(conn, "UPDATE " + FilesTable().qualified() +
                                                                " SET state = ? WHERE job_id = ? "
                                                                "AND key > ?"));
    return stmt.Str(std::string(job::FileStateName(job::FileState::kRetrying)))
        .Int(j.id)
        .Str(j.current_offset.Text(job::kFileNamePart))
        .Run()
        .status();
  });
}

Status SqlJobStore::SaveJobThen(const JobRecord& j,
                                const std::function<Status(Connection&)>& then) {
  // A statement that could not be opened is kept as stored: the right key may open it later.
  const bool keep = !j.statement_error.empty();
  JobRecord stored = j;
  if (!keep) {
    MR_ASSIGN_OR_RETURN(stored.insert_sql, SealStatement(j.insert_sql));
  }
  // What a job's life changes: every column but those fixed when it was created, and the
  // statement unless it is kept.
  const auto saved = [keep](const Column<JobRecord>& c) {
    static const std::set<std::string> kFixed = {"id", "name", "create_time_us", "database_name"};
    return kFixed.count(c.name) == 0 && !(keep && c.name == "insert_sql");
  };
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(
        int64_t changed,
        JobsTable().UpdateRows(conn, stored, saved, " WHERE id = ? AND epoch <= ?",
                               [&](Statement& stmt) { stmt.Int(j.id).Int(j.epoch); }));
    if (changed != 1) return NotSaved(conn, j);
    MR_RETURN_IF_ERROR(SaveProperties(conn, j));
    return then(conn);
  });
}

Status SqlJobStore::DeleteJob(int64_t job_id) {
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    for (const std::string& table :
         {JobsTable().qualified(), JobPropertiesTable().qualified(), TasksTable().qualified(),
          FilesTable().qualified(), FilteredRowsTable().qualified(), ReadingTable().qualified()}) {
      const std::string column = table == JobsTable().qualified() ? "id" : "job_id";
      MR_ASSIGN_OR_RETURN(auto stmt, Statement::Prepare(conn, "DELETE FROM " + table + " WHERE " +
                                                                  column + " = ?"));
      MR_RETURN_IF_ERROR(stmt.Int(job_id).Run().status());
    }
    return Status::Ok();
  });
}

Result<std::vector<LedgerEntry>> SqlJobStore::LedgerEntries(int64_t job_id,
                                                            std::optional<FileState> state) {
  return LedgerPage(job_id, "", std::numeric_limits<int64_t>::max(), state, "");
}

Result<std::vector<LedgerEntry>> SqlJobStore::LedgerPage(int64_t job_id, const std::string& after,
                                                         int64_t limit,
                                                         std::optional<FileState> state,
                                                         const std::string& search) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  const std::string wanted = state ? std::string(FileStateName(*state)) : "";
  // Keyset: the ledger is written in key order (files load in order), so DuckDB's zone maps
  // skip the row groups before `after`.
  return ReadRows(*conn, FilesTable(),
                  FilesTable().Select() +
                      " WHERE job_id = ? AND key > ? AND (? = '' OR state = ?) AND (? = '' OR "
                      "strpos(key, ?) > 0) ORDER BY key LIMIT ?",
                  [&](Statement& stmt) {
                    stmt.Int(job_id).Str(after).Str(wanted).Str(wanted).Str(search).Str(search);
                    stmt.Int(limit);
                  });
}

Result<std::vector<FilteredRow>> SqlJobStore::FilteredRowsPage(int64_t job_id,
                                                               const FilteredRow& after,
                                                               int64_t limit) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  return ReadRows(*conn, FilteredRowsTable(),
                  FilteredRowsTable().Select() +
                      " WHERE job_id = ? AND (task_id > ? OR (task_id = ? AND (file > ? OR (file "
                      "= ? AND line > ?)))) ORDER BY task_id, file, line LIMIT ?",
                  [&](Statement& stmt) {
                    stmt.Int(job_id).Int(after.task_id).Int(after.task_id).Str(after.file);
                    stmt.Str(after.file).Int(after.line).Int(limit);
                  });
}

Result<std::map<int64_t, int64_t>> SqlJobStore::CountFiles(FileState state) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(auto stmt, Statement::Prepare(*conn,
                                                    "SELECT job_id, count(*) FROM "
                                                    "__millrace.files WHERE state = ? GROUP BY "
                                                    "job_id"));
  std::map<int64_t, int64_t> counts;
  MR_RETURN_IF_ERROR(stmt.Str(std::string(FileStateName(state)))
                         .ForEach([&](const SqlRow& row) {
                           counts[row.Int(0)] = row.Int(1);
                           return Status::Ok();
                         })
                         .status());
  return counts;
}

Result<std::map<int64_t, std::map<std::string, int64_t>>> SqlJobStore::CountQuarantinedByReason() {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(auto stmt,
                      Statement::Prepare(*conn,
                                         "SELECT job_id, coalesce(nullif(reason, ''), 'UNKNOWN'), "
                                         "count(*) FROM __millrace.files WHERE state = "
                                         "'QUARANTINED' GROUP BY 1, 2"));
  std::map<int64_t, std::map<std::string, int64_t>> counts;
  MR_RETURN_IF_ERROR(stmt.ForEach([&](const SqlRow& row) {
                           counts[row.Int(0)][row.Text(1)] = row.Int(2);
                           return Status::Ok();
                         })
                         .status());
  return counts;
}

Status SqlJobStore::RecordFiles(const std::vector<LedgerEntry>& entries) {
  if (entries.empty()) return Status::Ok();
  return InTransaction(*db_, [&](Connection& conn) { return InsertLedger(conn, entries); });
}

Status SqlJobStore::MarkReading(int64_t job_id, const std::vector<ReadingMark>& marks) {
  if (marks.empty()) return Status::Ok();
  const auto& table = ReadingTable();
  // One DELETE and one INSERT, as InsertLedger: a batch marks up to max_batch_files files.
  ColumnLists keys;
  ColumnLists rows;
  for (const ReadingMark& m : marks) {
    keys.Str(m.key);
    keys.EndRow();
    rows.Int(job_id);  // job_id, the first column, is not the mark's
    table.Write(m, rows);
    rows.EndRow();
  }
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(Statement deleted,
                        Statement::Prepare(conn, "DELETE FROM " + table.qualified() +
                                                     " WHERE job_id = ? AND key IN (SELECT " +
                                                     keys.Unnest() + ")"));
    MR_RETURN_IF_ERROR(deleted.Int(job_id).Lists(keys).Run().status());
    MR_ASSIGN_OR_RETURN(Statement inserted,
                        Statement::Prepare(conn, "INSERT INTO " + table.qualified() + " (" +
                                                     table.Names() + ") SELECT " + rows.Unnest()));
    return inserted.Lists(rows).Run().status();
  });
}

Status SqlJobStore::ClearReading(int64_t job_id, int64_t task_id) {
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(auto stmt,
                        Statement::Prepare(conn, "DELETE FROM " + ReadingTable().qualified() +
                                                     " WHERE job_id = ? AND task_id = ?"));
    return stmt.Int(job_id).Int(task_id).Run().status();
  });
}

Result<std::vector<ReadingMark>> SqlJobStore::ReadingMarks(int64_t job_id) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  return ReadRows(*conn, ReadingTable(), ReadingTable().Select() + " WHERE job_id = ? ORDER BY key",
                  [&](Statement& stmt) { stmt.Int(job_id); });
}

}  // namespace millrace::catalog
