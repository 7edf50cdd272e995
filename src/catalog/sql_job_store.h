// job::JobStore, one of the catalog's stores (sql_stores.h): jobs, their properties, task
// history, file ledgers and reading marks in tables of schema __millrace (catalog_tables.h).
//
// Contract
// - The stored statement holds the job's credentials, because the job needs them to run after
//   a restart: it is sealed with `secrets` (jobs.insert_sql is never in clear: catalog
//   version 7). The SQL layer refuses user statements that name the __millrace schema, and
//   views show only masked text.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "catalog/sql_db.h"
#include "common/result.h"
#include "common/secret_box.h"
#include "job/job_model.h"
#include "job/job_store.h"

namespace millrace::catalog {

class SqlJobStore final : public job::JobStore {
 public:
  // `db` and `secrets` are borrowed; `where` names the database in errors.
  SqlJobStore(SqlDatabase* db, std::string where, const SecretBox* secrets)
      : db_(db), where_(std::move(where)), secrets_(secrets) {}

  Result<std::vector<job::JobRecord>> LoadJobs() override;
  Result<job::JobRecord> LoadJob(int64_t job_id) override;
  Result<std::vector<job::TaskRecord>> LoadTasks(int64_t job_id, int limit) override;
  Status InsertJob(const job::JobRecord& job) override;
  Status SaveJob(const job::JobRecord& job) override;
  Status SaveJobFromOffset(const job::JobRecord& job) override;
  Status DeleteJob(int64_t job_id) override;
  Result<std::vector<job::LedgerEntry>> LedgerEntries(int64_t job_id,
                                                      std::optional<job::FileState> state) override;
  Result<std::vector<job::LedgerEntry>> LedgerPage(int64_t job_id, const std::string& after,
                                                   int64_t limit,
                                                   std::optional<job::FileState> state,
                                                   const std::string& search) override;
  Result<std::vector<job::FilteredRow>> FilteredRowsPage(int64_t job_id,
                                                         const job::FilteredRow& after,
                                                         int64_t limit) override;
  Result<std::map<int64_t, int64_t>> CountFiles(job::FileState state) override;
  Result<std::map<int64_t, std::map<std::string, int64_t>>> CountQuarantinedByReason() override;
  Status RecordFiles(const std::vector<job::LedgerEntry>& entries) override;
  Status MarkReading(int64_t job_id, const std::vector<job::ReadingMark>& marks) override;
  Status ClearReading(int64_t job_id, int64_t task_id) override;
  Result<std::vector<job::ReadingMark>> ReadingMarks(int64_t job_id) override;

 private:
  // The job's statement as stored (sealed), and back.
  Result<std::string> SealStatement(const std::string& insert_sql) const;
  Result<std::string> UnsealStatement(const std::string& stored, const std::string& job) const;
  // Job `job_id`, or every job.
  Result<std::vector<job::JobRecord>> Load(std::optional<int64_t> job_id);
  // SaveJob, then `then` in the same transaction.
  Status SaveJobThen(const job::JobRecord& job, const std::function<Status(SqlConnection&)>& then);

  SqlDatabase* const db_;
  const std::string where_;
  const SecretBox* const secrets_;
};

}  // namespace millrace::catalog
