// AccessGuard: the check every client statement passes before it runs (sql::StatementGuard):
// the sandbox (sandbox.h) for everyone, then the privileges of the session's user
// (access_control.h).
//
// How a DuckDB statement is checked
// 0. Scope: a CREATE VIEW's query is stored with its relations qualified as they resolve when
//    it is created (a view never re-binds to another schema's table of the same name); a
//    SELECT of a user without ADMIN_PRIV that reads information_schema reads the
//    filtered views instead (information_schema.h); they need no privilege (they list only
//    what the user holds one on), and DuckDB's metadata functions bound inside them are
//    allowed (step 3) when the statement names no other system view.
// 1. Before anything binds it (binding a file reader opens its files), a SELECT is screened on
//    DuckDB's parse tree: its table functions against the sandbox, and every relation it names
//    must be a table or view of the catalog or a WITH name of the statement. A file name in
//    FROM (DuckDB's replacement scan, `SELECT * FROM '/etc/passwd'`) is therefore refused as
//    an unknown table before DuckDB could open the file. DuckDB's parser describes only
//    SELECTs, so another statement is screened on its leading keywords, the table functions
//    it names, and the queries inside it, each read by DuckDB's parser
//    (statement_screen.h).
// 2. DuckDB prepares the statement (exactly one, as DuckDB splits it): its kind is checked.
// 3. DuckDB's bound plan (json_serialize_plan) gives the root operator and its target, every
//    table scanned and every function called, views and macros seen through: all checked
//    against the sandbox.
// 4. Privileges: a SELECT needs SELECT_PRIV on each table or view it names; a table read only
//    through a named view is covered by the view, as in Doris. Other statements need
//    SELECT_PRIV on every table their plan scans (through views too: DuckDB's plan of an
//    INSERT, UPDATE, DELETE or CREATE TABLE AS does not say which view a table was reached
//    through), LOAD_PRIV on the table they write, CREATE_PRIV, ALTER_PRIV or DROP_PRIV on what
//    they create, alter or drop. A CREATE VIEW needs SELECT_PRIV on what its query names.
//    Holders of ADMIN_PRIV on *.* pass step 4.
//    pg_catalog and DuckDB's metadata functions stay for holders of ADMIN_PRIV.
// Audit (audit_log.h): logins are recorded by the server's authenticator; this guard records
// statements on users and grants, job statements, and DDL (CREATE, ALTER and DROP of tables,
// views, indexes and databases), with their outcome, refusals included.
// - The internal databases (internal_databases.h: the job catalog, the MySQL and the filtered
//   information_schema views, their stubs) are the server's: no client, root included, uses
//   one (CheckObject) or names a relation of one in a statement (CheckNames, on DuckDB's parse
//   tree of the statement as the client wrote it, queries inside other statements included).
//   Their tables are read only by Millrace's own table functions: a statement whose bound plan
//   scans or writes one is refused too, on every path that reaches CheckStatement (text,
//   prepared, handlers' client queries), whatever names led there.
// - A relation named through an external catalog (catalog.schema.table, `is_external_catalog`)
//   is refused by CheckNames with 1235 saying so: Millrace writes those tables through jobs and
//   does not read them (DuckDB's postgres extension is not available, and extensions stay off).
// - Thread-safety: every method may be called concurrently; a session's statements run on its
//   own connection.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "access/access_control.h"
#include "access/audit_log.h"
#include "access/sandbox.h"
#include "common/fail_point.h"
#include "common/lru_cache.h"
#include "common/thread_annotations.h"
#include "sql/session.h"
#include "sql/statement_guard.h"

namespace millrace::access {

class AccessGuard final : public sql::StatementGuard {
 public:
  // `access` and `audit` (may be null: nothing is audited) are borrowed and must outlive the
  // guard.
  // `fail_points` (may be null) is borrowed too: kGateFailPoint is checked first in every
  // check.
  // `is_external_catalog` (may be empty: none) says whether a name is an external catalog's.
  AccessGuard(const AccessControl* access, std::unique_ptr<Sandbox> sandbox,
              AuditLog* audit = nullptr, const FailPoints* fail_points = nullptr,
              std::function<bool(std::string_view)> is_external_catalog = nullptr);
  ~AccessGuard() override;

  Status CheckNames(sql::Session& session, std::string_view sql) override;
  Result<std::optional<std::string>> Scope(sql::Session& session, std::string_view sql) override;
  Status CheckStatement(sql::Session& session, std::string_view sql) override;
  Status CheckTableFunction(sql::Session& session, std::string_view name) override;
  Status CheckObject(sql::Session& session, sql::ObjectAction action, std::string_view database,
                     std::string_view table) override;
  bool Visible(sql::Session& session, std::string_view database, std::string_view table) override;
  // ADMIN_PRIV: every session (MySQL's PROCESS and SUPER).
  bool MayManageSessions(sql::Session& session) override;
  // The SELECT of a job `who` defines (CREATE, ALTER or EXPLAIN CREATE JOB), in `database`,
  // with the relation `source` standing for its S3(), local() or cdc_stream() call: it must be
  // one query, whose functions the sandbox allows, and `who` must hold SELECT_PRIV on every
  // table and view it names (read by DuckDB's parser: subqueries, joins, UNION, IN and EXISTS
  // included); the internal databases and DuckDB's metadata are refused. Thread-safe; `conn`
  // is used by one thread.
  Status CheckJobQuery(engine::Connection& conn, const sql::SessionInfo& who,
                       const std::string& database, std::string_view select,
                       std::string_view source) const;
  void Executed(sql::Session& session, std::string_view statement, const Status& outcome) override;

 private:
  struct Relation;
  struct ParsedStatement;
  // DuckDB's parse of a statement's text, which depends on the text alone: kept for the last
  // kParseCacheEntries texts (short ones), so that CheckNames and CheckStatement of one
  // statement, and a client repeating one (a dashboard, a poller), ask DuckDB's parser once.
  // Every decision is still made again on each statement: the catalog, the user's grants and
  // the plan are read anew.
  Result<std::shared_ptr<const ParsedStatement>> Parse(engine::Connection& conn,
                                                       std::string_view sql) const;
  // CREATE VIEW: the statement with every table and view its query names without a schema
  // qualified (catalog.schema.name) as DuckDB resolves it now, so that the view reads what
  // it was created over and no table of the same name elsewhere; nullopt when nothing changes.
  Result<std::optional<std::string>> QualifyViewQuery(sql::Session& session,
                                                      std::string_view sql) const;
  // The relations `parsed` names, found in the catalog from `database` (nullopt: main).
  Result<std::vector<Relation>> Resolve(engine::Connection& conn,
                                        const std::optional<std::string>& database,
                                        const engine::ParsedFacts& parsed) const;
  Status CheckReads(sql::Session& session, const std::vector<Relation>& named,
                    const engine::PlanFacts& plan) const;
  Status CheckTarget(sql::Session& session, const engine::PlanTarget& target) const;
  Status Require(sql::Session& session, Privilege privilege, std::string_view database,
                 std::string_view table) const;
  Status Require(const sql::SessionInfo& who, Privilege privilege, std::string_view database,
                 std::string_view table) const;
  // Remembers the DDL a session's statement performs, for Executed to audit.
  void NoteDdl(sql::Session& session, std::string action) EXCLUDES(mu_);

  const AccessControl* access_;
  std::unique_ptr<Sandbox> sandbox_;
  AuditLog* audit_;
  const FailPoints* fail_points_;
  const std::function<bool(std::string_view)> is_external_catalog_;
  Mutex mu_;
  std::map<uint64_t, std::string> pending_ddl_ GUARDED_BY(mu_);  // by connection id
  static constexpr size_t kParseCacheEntries = 256;
  mutable LruCache<ParsedStatement> parses_;
};

}  // namespace millrace::access
