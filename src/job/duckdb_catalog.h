// The job catalog in the embedded DuckDB database: tables in schema __millrace of the same
// database file as the users' tables, so a task's rows and its bookkeeping commit in one
// transaction.
//
// Contract
// - DuckDbCatalogStore implements CatalogStore (catalog_store.h): each method runs on a
//   connection of its own, in a transaction of its own.
// - The functions in namespace catalog run on the connection they are given, inside whatever
//   transaction it has open (the task's: see DuckDbSink in sink.h); none begins or commits.
// - AdvanceOffset is the exactly-once gate: it moves the job's offset and statistics only if the
//   job is RUNNING, still at `start` and its epoch is still `epoch`; it returns false otherwise
//   (the task must then roll back). Concurrent writers of one job row conflict in DuckDB, so at
//   most one of them commits.
// - The stored statement holds the job's credentials, because the job needs them to run after
//   a restart; the SQL layer refuses user statements that name the __millrace schema, and views
//   show only masked text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/secret_box.h"
#include "engine/database.h"
#include "job/catalog_store.h"
#include "job/job_model.h"

namespace millrace::job {

namespace catalog {

inline constexpr const char* kSchema = "__millrace";

// See the contract above. On success the row holds `job`'s offsets, counters and statistics.
Result<bool> AdvanceOffset(engine::Connection& conn, const JobRecord& job, const Offset& start,
                           int64_t epoch);
Status InsertTask(engine::Connection& conn, const TaskRecord& task);
// Keeps the newest `keep` tasks of the job.
Status PruneTasks(engine::Connection& conn, int64_t job_id, int keep);
// Keeps about the newest `keep` filtered rows of the job (whole tasks are dropped).
Status PruneFilteredRows(engine::Connection& conn, int64_t job_id, int64_t keep);
// Records files in the ledger; an existing row of the same key is replaced.
Status InsertLedger(engine::Connection& conn, const std::vector<LedgerEntry>& entries);
// The filtered rows task `task_id` of the job recorded (BatchLoader), as the connection's
// transaction sees them (a dry run reads its own before it rolls back), in file and line order,
// at most `limit`.
Result<std::vector<FilteredRow>> TaskFilteredRows(engine::Connection& conn, int64_t job_id,
                                                  int64_t task_id, int64_t limit);

}  // namespace catalog

class DuckDbCatalogStore final : public CatalogStore {
 public:
  // `db` must outlive the store; `where` names it in errors (the database file). `secrets`
  // (borrowed) seals each job's statement, which holds its credentials, before it is stored
  // (jobs.insert_sql is never in clear: catalog version 7); without it, a job cannot be stored
  // or loaded, and a catalog holding jobs cannot be upgraded to version 7.
  DuckDbCatalogStore(engine::Database* db, std::string where, const SecretBox* secrets = nullptr)
      : db_(db), where_(std::move(where)), secrets_(secrets) {}

  Status Open() override;
  Result<std::vector<JobRecord>> LoadJobs() override;
  Result<std::vector<TaskRecord>> LoadTasks(int64_t job_id, int limit) override;
  Status InsertJob(const JobRecord& job) override;
  Status SaveJob(const JobRecord& job) override;
  Status DeleteJob(int64_t job_id) override;
  Result<std::vector<LedgerEntry>> LedgerEntries(int64_t job_id,
                                                 std::optional<FileState> state) override;
  Result<std::vector<LedgerEntry>> LedgerPage(int64_t job_id, const std::string& after,
                                              int64_t limit, std::optional<FileState> state,
                                              const std::string& search) override;
  Result<std::vector<FilteredRow>> FilteredRowsPage(int64_t job_id, const FilteredRow& after,
                                                    int64_t limit) override;
  Result<std::map<int64_t, int64_t>> CountFiles(FileState state) override;
  Result<std::map<int64_t, std::map<std::string, int64_t>>> CountQuarantinedByReason() override;
  Status RecordFiles(const std::vector<LedgerEntry>& entries) override;
  Status MarkReading(int64_t job_id, const std::vector<ReadingMark>& marks) override;
  Status ClearReading(int64_t job_id, int64_t task_id) override;
  Result<std::vector<ReadingMark>> ReadingMarks(int64_t job_id) override;

  // access::UserStore (duckdb_user_store.cc): tables __millrace.users (the password as its
  // mysql_native_password hash in MySQL's text form, "*HEX") and __millrace.grants (a row per
  // user, object and privilege).
  Result<access::UserCatalog> LoadUsers() override;
  Status InsertUser(const access::UserRecord& user) override;
  Status UpdateUser(const access::UserRecord& user) override;
  Status DeleteUser(std::string_view name) override;
  Status AddGrant(const access::Grant& grant) override;
  Status RemoveGrant(const access::Grant& grant) override;

  // access::AuditStore (duckdb_audit_store.cc): table __millrace.audit, numbered by a sequence.
  Status AppendAudit(const access::AuditEvent& event, int64_t keep) override;
  Result<std::vector<access::AuditEvent>> LoadAudit(int64_t limit, int64_t before) override;

  // The schema version the store is at (0 when it has no catalog yet).
  Result<int> StoredVersion();

 private:
  // Runs `fn` on a fresh connection inside one transaction, committed when it returns OK.
  template <typename Fn>
  Status InTransaction(Fn fn) {
    MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
    MR_ASSIGN_OR_RETURN(auto txn, conn->Begin());
    MR_RETURN_IF_ERROR(fn(*conn));
    return txn.Commit();
  }

  // The job's statement as stored (sealed), and back.
  Result<std::string> SealStatement(const std::string& insert_sql) const;
  Result<std::string> UnsealStatement(const std::string& stored, const std::string& job) const;

  engine::Database* const db_;
  const std::string where_;
  const SecretBox* const secrets_;
};

}  // namespace millrace::job
