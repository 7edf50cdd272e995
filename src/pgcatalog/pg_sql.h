// The catalog's SQL interfaces (catalog/sql_db.h) over PostgreSQL, for the catalog of cluster
// mode (pg_catalog.h).
//
// Contract (beyond catalog/sql_db.h)
// - A statement's `?` parameters become $1, $2, ... (a `?` inside a quoted literal or
//   identifier is left alone) and are sent as text with the statement (PQexecParams):
//   PostgreSQL infers each one's type from where it stands. Lists go as array literals
//   ({"a","b"}, {1,2}, {t,f}), which `?::VARCHAR[]` and the like read.
// - PgSqlDatabase keeps up to kIdleConnections idle connections and hands them out again: a
//   catalog call costs a round trip, not a connection. A connection that broke, or is returned
//   inside a transaction, is closed instead. COMMIT of a transaction PostgreSQL had aborted
//   is reported as the failure it is (ABORTED), not taken for a commit.
// - Thread-safety: PgSqlDatabase::Connect from any thread; a connection as sql_db.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "catalog/sql_db.h"
#include "common/thread_annotations.h"
#include "pg/pg_connection.h"

namespace millrace::pgcatalog {

// `sql` with each `?` outside quotes numbered $1, $2, ...
std::string NumberParameters(const std::string& sql);
// PostgreSQL's text form of an array of these values (each element quoted and escaped).
std::string TextArray(const std::vector<std::string>& values);

class PgSqlDatabase final : public catalog::SqlDatabase {
 public:
  explicit PgSqlDatabase(pg::ConnectParams params) : params_(std::move(params)) {}
  ~PgSqlDatabase() override;

  Result<std::unique_ptr<catalog::SqlConnection>> Connect() override EXCLUDES(mu_);

  static constexpr size_t kIdleConnections = 4;

 private:
  friend class PgSqlConnection;
  // Takes back a connection whose transaction ended.
  void Release(std::unique_ptr<pg::PgConnection> conn) EXCLUDES(mu_);

  const pg::ConnectParams params_;
  Mutex mu_;
  std::vector<std::unique_ptr<pg::PgConnection>> idle_ GUARDED_BY(mu_);
};

}  // namespace millrace::pgcatalog
