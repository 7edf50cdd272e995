#include "catalog/catalog_tables.h"

#include "access/password.h"
#include "catalog/catalog_sql.h"
#include "catalog/catalog_version.h"
#include "table/load_labels.h"
#include "table/model_catalog.h"

namespace millrace::catalog {
namespace {

using job::FileState;
using job::FilteredRow;
using job::JobRecord;
using job::LedgerEntry;
using job::LoadStatistic;
using job::Offset;
using job::ReadingMark;
using job::TaskRecord;

// The five LoadStatistic columns, in the order every table stores them.
template <typename Record>
void AddStatsColumns(LoadStatistic Record::*stats, std::vector<Column<Record>>* columns) {
  for (const auto& named : {std::pair{"scanned_rows", &LoadStatistic::scanned_rows},
                            std::pair{"load_bytes", &LoadStatistic::load_bytes},
                            std::pair{"file_number", &LoadStatistic::file_number},
                            std::pair{"file_size", &LoadStatistic::file_size},
                            std::pair{"filtered_rows", &LoadStatistic::filtered_rows}}) {
    int64_t LoadStatistic::*field = named.second;
    columns->push_back({named.first, "BIGINT",
                        [=](const Record& r, Values& out) { out.Int((r.*stats).*field); },
                        [=](const Cell& c, Record& r) {
                          (r.*stats).*field = c.Int();
                          return Status::Ok();
                        }});
  }
}

// A state column: the enum's name as text.
template <typename Record, typename State>
Column<Record> StateColumn(std::string name, State Record::*member,
                           std::string_view (*to_name)(State),
                           Result<State> (*parse)(std::string_view)) {
  return {std::move(name), "VARCHAR",
          [=](const Record& r, Values& out) { out.Str(std::string(to_name(r.*member))); },
          [=](const Cell& c, Record& r) -> Status {
            MR_ASSIGN_OR_RETURN(r.*member, parse(c.Text()));
            return Status::Ok();
          }};
}

// A job's offset as its JSON text.
Column<JobRecord> OffsetColumn(std::string name, Offset JobRecord::*member) {
  return {std::move(name), "VARCHAR",
          [=](const JobRecord& r, Values& out) { out.Str((r.*member).ToJson()); },
          [=](const Cell& c, JobRecord& r) -> Status {
            auto offset = Offset::Parse(c.Text());
            if (!offset.ok())
              return offset.status().WithContext("job " + r.name + " in the catalog");
            r.*member = std::move(offset).value();
            return Status::Ok();
          }};
}

Table<JobRecord> MakeJobsTable() {
  using J = JobRecord;
  std::vector<Column<J>> c = {
      IntColumn("id", &J::id, "BIGINT PRIMARY KEY"),
      TextColumn("name", &J::name, "VARCHAR NOT NULL"),
      TextColumn("definer", &J::definer),
      TextColumn("masked_sql", &J::masked_sql),
      TextColumn("comment", &J::comment),
      StateColumn("state", &J::state, job::JobStateName, job::ParseJobState),
      IntColumn("create_time_us", &J::create_time_us),
      OffsetColumn("current_offset", &J::current_offset),
      OffsetColumn("end_offset", &J::end_offset),
      IntColumn("succeed_tasks", &J::succeed_tasks),
      IntColumn("failed_tasks", &J::failed_tasks),
      IntColumn("canceled_tasks", &J::canceled_tasks),
  };
  AddStatsColumns(&J::stats, &c);
  for (auto&& column : {
           TextColumn("error_code", &J::error_code),
           TextColumn("error_msg", &J::error_msg),
           TextColumn("runtime_msg", &J::runtime_msg),
           IntColumn("last_success_time_us", &J::last_success_time_us),
           IntColumn("epoch", &J::epoch),
           IntColumn("auto_resume_count", &J::auto_resume_count),
           BoolColumn("manual_pause", &J::manual_pause),
           IntColumn("next_task_id", &J::next_task_id),
           TextColumn("insert_sql", &J::insert_sql),
           TextColumn("database_name", &J::database),
           TextColumn("reconcile_floor", &J::reconcile_floor),
       })
    c.push_back(column);
  return Table<J>("jobs", std::move(c));
}

Table<TaskRecord> MakeTasksTable() {
  using T = TaskRecord;
  std::vector<Column<T>> c = {
      IntColumn("job_id", &T::job_id),
      IntColumn("task_id", &T::task_id),
      StateColumn("state", &T::state, job::TaskStateName, job::ParseTaskState),
      TextColumn("error_msg", &T::error_msg),
      IntColumn("create_time_us", &T::create_time_us),
      IntColumn("start_time_us", &T::start_time_us),
      IntColumn("finish_time_us", &T::finish_time_us),
  };
  AddStatsColumns(&T::stats, &c);
  for (auto&& column :
       {TextColumn("first_error_msg", &T::first_error_msg),
        TextColumn("start_file", &T::start_file), TextColumn("end_file", &T::end_file)})
    c.push_back(column);
  return Table<T>("tasks", std::move(c));
}

Status CreateSchemaAndVersionTable(Connection& conn) {
  return conn.Execute(
      "CREATE SCHEMA IF NOT EXISTS __millrace; "
      "CREATE TABLE __millrace.catalog_version (version INTEGER NOT NULL)");
}

}  // namespace

const Table<JobRecord>& JobsTable() {
  static const Table<JobRecord> kTable = MakeJobsTable();
  return kTable;
}

const Table<PropertyRow>& JobPropertiesTable() {
  static const Table<PropertyRow> kTable(
      "job_properties",
      {IntColumn("job_id", &PropertyRow::job_id), TextColumn("key", &PropertyRow::key),
       TextColumn("value", &PropertyRow::value)});
  return kTable;
}

const Table<TaskRecord>& TasksTable() {
  static const Table<TaskRecord> kTable = MakeTasksTable();
  return kTable;
}

const Table<LedgerEntry>& FilesTable() {
  using L = LedgerEntry;
  static const Table<L> kTable(
      "files", {IntColumn("job_id", &L::job_id), TextColumn("key", &L::key),
                TextColumn("etag", &L::etag), IntColumn("size", &L::size),
                StateColumn("state", &L::state, job::FileStateName, job::ParseFileState),
                IntColumn("task_id", &L::task_id), IntColumn("rows", &L::rows),
                IntColumn("load_time_us", &L::load_time_us), TextColumn("error", &L::error),
                TextColumn("reason", &L::reason)});
  return kTable;
}

const Table<FilteredRow>& FilteredRowsTable() {
  using F = FilteredRow;
  static const Table<F> kTable(
      "filtered_rows", {OtherColumn<F>("job_id", "BIGINT"), IntColumn("task_id", &F::task_id),
                        TextColumn("file", &F::file), IntColumn("line", &F::line),
                        TextColumn("column_name", &F::column_name), TextColumn("value", &F::value),
                        TextColumn("reason", &F::reason), IntColumn("time_us", &F::time_us)});
  return kTable;
}

const Table<ReadingMark>& ReadingTable() {
  using M = ReadingMark;
  static const Table<M> kTable(
      "reading",
      {OtherColumn<M>("job_id", "BIGINT"), TextColumn("key", &M::key),
       IntColumn("task_id", &M::task_id), IntColumn("batch_files", &M::batch_files),
       IntColumn("alone_crashes", &M::alone_crashes), IntColumn("started_us", &M::started_us)});
  return kTable;
}

const Table<access::UserRecord>& UsersTable() {
  using U = access::UserRecord;
  // The password as mysql_native_password's hash in MySQL's text form, "*HEX".
  Column<U> password{
      "password_hash", "VARCHAR NOT NULL",
      [](const U& u, Values& out) { out.Str(access::NativeHashText(u.password_hash)); },
      [](const Cell& c, U& u) -> Status {
        auto hash = access::ParseNativeHashText(c.Text());
        // The stored text is not quoted: it may be a password someone wrote in clear.
        if (!hash.ok())
          return Status::DataLoss("user '" + u.name + "' has a malformed password hash");
        u.password_hash = std::move(hash).value();
        return Status::Ok();
      }};
  static const Table<U> kTable(
      "users", {TextColumn("name", &U::name, "VARCHAR NOT NULL"),
                TextColumn("host", &U::host, "VARCHAR NOT NULL"), password,
                BoolColumn("require_ssl", &U::require_ssl, "BOOLEAN NOT NULL"),
                IntColumn("max_user_connections", &U::max_user_connections, "BIGINT NOT NULL"),
                IntColumn("created_at_us", &U::created_at_us, "BIGINT NOT NULL")});
  return kTable;
}

const Table<GrantRow>& GrantsTable() {
  using G = GrantRow;
  static const Table<G> kTable(
      "grants", {TextColumn("user_name", &G::user_name, "VARCHAR NOT NULL"),
                 TextColumn("database_name", &G::database_name, "VARCHAR NOT NULL"),
                 TextColumn("table_name", &G::table_name, "VARCHAR NOT NULL"),
                 TextColumn("privilege", &G::privilege, "VARCHAR NOT NULL"),
                 TextColumn("catalog_name", &G::catalog_name, "VARCHAR DEFAULT ''")});
  return kTable;
}

const Table<access::AuditEvent>& AuditTable() {
  using A = access::AuditEvent;
  Column<A> seq = IntColumn("seq", &A::seq, "BIGINT NOT NULL");
  seq.write = nullptr;  // nextval('__millrace.audit_seq')
  static const Table<A> kTable("audit", {seq, IntColumn("time_us", &A::time_us, "BIGINT NOT NULL"),
                                         TextColumn("user_name", &A::user, "VARCHAR NOT NULL"),
                                         TextColumn("host", &A::host, "VARCHAR NOT NULL"),
                                         TextColumn("kind", &A::kind, "VARCHAR NOT NULL"),
                                         TextColumn("action", &A::action, "VARCHAR NOT NULL"),
                                         TextColumn("statement", &A::statement, "VARCHAR NOT NULL"),
                                         TextColumn("error", &A::error, "VARCHAR NOT NULL")});
  return kTable;
}

const Table<CatalogRow>& ExternalCatalogsTable() {
  using C = CatalogRow;
  static const Table<C> kTable(
      "external_catalogs",
      {TextColumn("name", &C::name, "VARCHAR PRIMARY KEY"), TextColumn("comment", &C::comment),
       TextColumn("properties", &C::sealed_properties, "VARCHAR NOT NULL"),
       IntColumn("create_time_us", &C::create_time_us, "BIGINT NOT NULL"),
       IntColumn("update_time_us", &C::update_time_us, "BIGINT NOT NULL")});
  return kTable;
}

// Version 1 (tests/catalog/catalog_v1.sql) had jobs.definition and file keys as offsets.
Status CreateTables(Connection& conn) {
  const SqlEngine engine = conn.engine();
  MR_RETURN_IF_ERROR(CreateSchemaAndVersionTable(conn));
  for (const std::string& ddl : {JobsTable().Create(engine), JobPropertiesTable().Create(engine),
                                 TasksTable().Create(engine), FilteredRowsTable().Create(engine),
                                 FilesTable().Create(engine)})
    MR_RETURN_IF_ERROR(conn.Execute(ddl));
  MR_RETURN_IF_ERROR(CreateUserTables(conn));
  MR_RETURN_IF_ERROR(CreateAuditTable(conn));
  if (engine == SqlEngine::kDuckDb) {
    // The embedded tables' own: a cluster's catalog holds no embedded table.
    MR_RETURN_IF_ERROR(conn.Execute(std::string(table::kModelTableDdl)));
    MR_RETURN_IF_ERROR(conn.Execute(std::string(table::kLabelTableDdl)));
  }
  MR_RETURN_IF_ERROR(CreateReadingTable(conn));
  return CreateExternalCatalogsTable(conn);
}

Status CreateCatalogAtVersion(Connection& conn) {
  MR_RETURN_IF_ERROR(CreateTables(conn));
  return conn.Execute("INSERT INTO __millrace.catalog_version VALUES (" +
                      std::to_string(kCatalogVersion) + ")");
}

Result<int> ReadStoredVersion(Connection& conn, const std::string& where) {
  // information_schema: both engines list their tables there (and views, which are not).
  MR_ASSIGN_OR_RETURN(auto tables, QueryTextRows(conn,
                                                 "SELECT table_name FROM "
                                                 "information_schema.tables WHERE table_schema = "
                                                 "'__millrace' AND table_type = 'BASE TABLE' "
                                                 "AND table_name IN ('jobs', 'catalog_version')"));
  bool has_jobs = false;
  bool has_version = false;
  for (const auto& row : tables) {
    has_jobs = has_jobs || row[0] == "jobs";
    has_version = has_version || row[0] == "catalog_version";
  }
  if (!has_version) return has_jobs ? 1 : 0;
  MR_ASSIGN_OR_RETURN(auto rows,
                      QueryTextRows(conn, "SELECT max(version) FROM __millrace.catalog_version"));
  if (rows.size() != 1 || rows[0][0].empty()) {
    return Status::DataLoss("the job catalog in " + where + " has an empty catalog_version");
  }
  return std::stoi(rows[0][0]);
}

Status CreateUserTables(Connection& conn) {
  MR_RETURN_IF_ERROR(conn.Execute(UsersTable().Create(conn.engine())));
  return conn.Execute(GrantsTable().Create(conn.engine()));
}

Status CreateAuditTable(Connection& conn) {
  MR_RETURN_IF_ERROR(conn.Execute("CREATE SEQUENCE __millrace.audit_seq"));
  return conn.Execute(AuditTable().Create(conn.engine()));
}

Status CreateReadingTable(Connection& conn) {
  return conn.Execute(ReadingTable().Create(conn.engine()));
}

Status CreateExternalCatalogsTable(Connection& conn) {
  return conn.Execute(ExternalCatalogsTable().Create(conn.engine()));
}

Status AddGrantsCatalogColumn(Connection& conn) {
  // Every grant kept so far is of the embedded catalog. IF NOT EXISTS: a catalog migrated from
  // version 2 made the table as this build declares it. (DuckDB adds no column with a
  // constraint: the column is NOT NULL by its writers, in a new catalog too.)
  return conn.Execute(
      "ALTER TABLE __millrace.grants ADD COLUMN IF NOT EXISTS catalog_name VARCHAR DEFAULT ''");
}

Status InsertLedger(Connection& conn, const std::vector<LedgerEntry>& entries) {
  if (entries.empty()) return Status::Ok();
  // One DELETE and one INSERT for the whole batch: the ledger has no index, so a statement
  // per file would scan it once per file, quadratic in the files a job has loaded. The rows go
  // as lists, one per column (ColumnLists).
  ColumnLists keys;
  ColumnLists rows;
  for (const LedgerEntry& e : entries) {
    keys.Int(e.job_id).Str(e.key);
    keys.EndRow();
    FilesTable().Write(e, rows);
    rows.EndRow();
  }
  // A key has one ledger row: a reload (offset moved back, retry) replaces the old one.
  MR_ASSIGN_OR_RETURN(Statement deleted,
                      Statement::Prepare(conn, "DELETE FROM " + FilesTable().qualified() +
                                                   " AS f USING (SELECT " + keys.Unnest() +
                                                   ") AS v(job_id, key) WHERE f.job_id = "
                                                   "v.job_id AND f.key = v.key"));
  MR_RETURN_IF_ERROR(deleted.Lists(keys).Run().status());
  MR_ASSIGN_OR_RETURN(
      Statement inserted,
      Statement::Prepare(conn, "INSERT INTO " + FilesTable().qualified() + " (" +
                                   FilesTable().Names() + ") SELECT " + rows.Unnest()));
  return inserted.Lists(rows).Run().status();
}

}  // namespace millrace::catalog
