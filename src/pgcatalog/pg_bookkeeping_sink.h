// PgBookkeepingSink: the bookkeeping sink of a job whose catalog is in PostgreSQL (cluster
// mode): the job's row, ledger, task record and filtered rows go to the catalog's database
// (catalog/bookkeeping.h, in a transaction there), while the batch's rows are written through
// the embedded DuckDB database, as the staging table a PostgreSQL sink copies from (PgSink's
// `bookkeeping`, pgsink/pg_sink.h). It is to a catalog in PostgreSQL what catalog::DuckDbSink
// is to the embedded one.
//
// Contract (beyond job/sink.h)
// - Begin opens a DuckDB transaction on the sink's own connection (the job's database
//   selected) and a transaction on a connection of the catalog's database.
// - WriteProgress is catalog::WriteBookkeeping in the catalog's transaction. RecordFilteredRows
//   reads the rows `select` gives (line, col, val, why) in DuckDB and writes them into the
//   catalog's filtered_rows in its transaction; TaskFilteredRows reads them there.
// - Commit commits the catalog's transaction, then DuckDB's (which holds only rows the sink
//   that owns this one has already copied, or will not need); a failure of the first rolls
//   back the second. Rollback ends both.
// - Interrupt cancels a statement on the DuckDB connection (the loads); the catalog's
//   statements are short. From any thread.
#pragma once

#include <memory>
#include <string>

#include "catalog/sql_db.h"
#include "engine/database.h"
#include "job/sink.h"

namespace millrace::pgcatalog {

class PgBookkeepingSink final : public job::Sink {
 public:
  // `catalog` is borrowed and must outlive the sink.
  PgBookkeepingSink(std::unique_ptr<engine::Connection> conn, catalog::SqlDatabase* catalog)
      : conn_(std::move(conn)), catalog_(catalog) {}
  // A sink on a new connection of `db` (borrowed, like `catalog`).
  static Result<std::unique_ptr<job::Sink>> Open(engine::Database* db,
                                                 catalog::SqlDatabase* catalog);

  Result<std::unique_ptr<job::SinkTransaction>> Begin(const std::string& database) override;
  void Interrupt() override { conn_->Interrupt(); }
  void ClearInterrupt() override { conn_->ClearInterrupt(); }

 private:
  const std::unique_ptr<engine::Connection> conn_;
  catalog::SqlDatabase* const catalog_;
};

}  // namespace millrace::pgcatalog
