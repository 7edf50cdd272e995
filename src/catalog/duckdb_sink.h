// The sink of the embedded DuckDB database (job::Sink, job/sink.h): a batch's rows, the job's
// offset, its ledger and the task record commit in one DuckDB transaction, the bookkeeping in
// the catalog's tables of the same database (catalog_tables.h).
//
// Contract
// - WriteProgress is the exactly-once gate (bookkeeping.h): it moves the job's offset and
//   statistics only if the job row is RUNNING, still at `start` and its epoch is still `epoch`,
//   and returns false otherwise (the task must then roll back). Concurrent writers of one job
//   row conflict in DuckDB, so at most one of them commits.
// - The sink owns its connection; Interrupt may be called from any thread.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "engine/database.h"
#include "job/sink.h"

namespace millrace::catalog {

class DuckDbSink final : public job::Sink {
 public:
  explicit DuckDbSink(std::unique_ptr<engine::Connection> conn) : conn_(std::move(conn)) {}
  // A sink on a new connection of `db`.
  static Result<std::unique_ptr<job::Sink>> Open(engine::Database* db);
  // A factory of sinks on `db`, which must outlive them.
  static job::SinkFactory Factory(engine::Database* db);

  Result<std::unique_ptr<job::SinkTransaction>> Begin(const std::string& database) override;
  void Interrupt() override { conn_->Interrupt(); }
  void ClearInterrupt() override { conn_->ClearInterrupt(); }

 private:
  const std::unique_ptr<engine::Connection> conn_;
};

}  // namespace millrace::catalog
