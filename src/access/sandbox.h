// Sandbox: the statements and functions no one may use, root included. The first of the two
// layers that keep a client inside Millrace (docs/security.md); the second is DuckDB's own
// lock (engine::Database::LockDown).
//
// Policy
// - Statement kinds (as DuckDB's parser names them): SELECT, INSERT, UPDATE, DELETE, CREATE,
//   ALTER, DROP, transactions, EXPLAIN (of an allowed statement), CALL of an allowed table
//   function (CHECKPOINT is one). Everything else is refused: COPY, EXPORT/IMPORT DATABASE,
//   ATTACH, DETACH, INSTALL, LOAD, SET and RESET of engine settings, PRAGMA, PREPARE/EXECUTE,
//   VACUUM, ANALYZE, SET VARIABLE, CREATE MACRO and FUNCTION. Millrace's own statements (USE, SHOW,
//   SET of MySQL variables, job and user statements) never reach DuckDB as the client wrote them.
// - What CREATE, DROP and ALTER may name: tables, views, schemas (databases) and indexes; not
//   secrets, sequences, types or macros.
// - Table functions: an allowlist (range, generate_series, unnest, json_each, json_tree, and
//   the functions Millrace registers: jobs, tasks, ...). DuckDB's metadata functions
//   (duckdb_tables(), ..., and so information_schema and pg_catalog, which are views over
//   them) list every database, the job catalog's included: ADMIN_PRIV only. CHECKPOINT and
//   audit_log(): ADMIN_PRIV only (MySQL error 1227); FORCE CHECKPOINT never (it aborts the
//   jobs' open transactions).
// - Scalar, aggregate and window functions: DuckDB's built-in catalog as it is at start (no
//   extension can be loaded and no macro created afterwards, so it cannot grow), minus the
//   functions that run or describe other SQL (json_serialize_sql, json_serialize_plan,
//   json_deserialize_sql, json_execute_serialized_sql) or reveal secrets (which_secret).
// - Every refusal is MySQL error 1290 naming what was refused and why.
// - Thread-safety: immutable after Create; every method may be called concurrently.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engine/database.h"
#include "engine/statement_plan.h"

namespace millrace::access {

class Sandbox {
 public:
  // Reads DuckDB's function catalog through `conn`. `extra_table_functions`: the table
  // functions Millrace registered (engine::Database::RegisteredTableFunctions); those also in
  // `admin_table_functions` (audit_log) are for holders of ADMIN_PRIV only.
  static Result<std::unique_ptr<Sandbox>> Create(engine::Connection& conn,
                                                 std::vector<std::string> extra_table_functions,
                                                 std::vector<std::string> admin_table_functions);

  Status CheckKind(engine::StatementKind kind) const;
  // Before DuckDB binds a statement that is not a SELECT: what its leading keywords say it is
  // (statement_screen.h's StatementStart; the kinds refused by CheckKind, and CREATE, DROP or
  // ALTER of anything but a table, view, schema or index), and the table functions it seems to
  // call (names from CalledNames that DuckDB has as table functions or table macros).
  Status CheckStart(std::string_view start) const;
  Status CheckCalledNames(const std::vector<std::string>& names, bool admin) const;
  // The root operator of a plan and what it creates, drops or alters.
  Status CheckPlan(const engine::PlanFacts& plan) const;
  // `admin`: the user holds ADMIN_PRIV (metadata functions, CHECKPOINT). `bound`: the names
  // come from a plan, so each is a catalog function; names from a parse tree that are not in
  // the catalog are left to DuckDB's binder, which refuses them as unknown. `metadata`:
  // DuckDB's metadata functions are allowed without ADMIN_PRIV (bound inside the filtered
  // information_schema, information_schema.h). The functions that tell the host's settings or
  // library versions (current_setting(), version(), ...) need `admin` too.
  Status CheckFunctions(const std::vector<std::string>& functions,
                        const std::vector<std::string>& table_functions, bool admin, bool bound,
                        bool metadata = false) const;

 private:
  using Names = std::set<std::string, std::less<>>;
  Sandbox(Names functions, Names tables, Names admin_tables, Names duckdb_tables)
      : functions_(std::move(functions)),
        table_functions_(std::move(tables)),
        admin_table_functions_(std::move(admin_tables)),
        duckdb_table_functions_(std::move(duckdb_tables)) {}

  Names functions_;               // scalar, aggregate, window
  Names table_functions_;         // for everyone
  Names admin_table_functions_;   // for ADMIN_PRIV, with checkpoint
  Names duckdb_table_functions_;  // every table function and table macro DuckDB has
};

}  // namespace millrace::access
