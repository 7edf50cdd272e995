// What DuckDB says one statement touches, read from DuckDB's own parser and binder: the
// relations it names, the tables it scans, the object it writes, the functions it calls.
//
// Contract
// - ParseSelect asks DuckDB's parser (json_serialize_sql) and binds nothing: it works for
//   SELECT statements only and returns nullopt for any other statement.
// - PlanStatement asks DuckDB's binder (json_serialize_plan): names are resolved, views and
//   table macros are seen through (their tables and functions are reported), nothing runs.
//   Binding a table function binds its arguments (a file reader opens its files), so callers
//   screen a SELECT with ParseSelect first. A statement DuckDB cannot serialize (EXPLAIN, a
//   file reader without serialization) is NOT_SUPPORTED naming DuckDB's reason; a statement
//   that does not bind is DuckDB's error.
// - Names are as DuckDB reports them: lower-cased function names, schemas and tables as
//   stored in the catalog (plan) or as written (parse).
// - RenameRelations rewrites the names a SELECT's parse tree reads from and asks DuckDB to print
//   the tree back as SQL (json_deserialize_sql): the result means what the statement meant,
//   with the renamed relations read instead, though its text differs (count(*) becomes
//   count_star(), names are quoted).
// - Thread-safety: the functions use the given connection (one thread at a time).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/database.h"

namespace millrace::engine {

struct RelationName {
  std::string schema;  // empty when not written (parse) or not reported
  std::string name;
  // The catalog as written (parse: empty when not written), or an external catalog's name (a
  // job's target in another database); empty where DuckDB resolved the name (plan).
  std::string catalog = {};
  friend bool operator==(const RelationName&, const RelationName&) = default;
};

// What a statement's parse tree (or the parse trees inside its plan: a view's query, a COPY's
// SELECT) names.
struct ParsedFacts {
  std::vector<RelationName> relations;  // FROM / JOIN names (tables, views, CTEs, files)
  std::vector<std::string> cte_names;   // WITH names defined anywhere in the statement
  std::vector<std::string> functions;   // scalar, aggregate and window calls
  // Table functions called, and "show_<type>" for a SHOW or DESCRIBE of the catalog inside a
  // query ((SHOW ALL TABLES), (DESCRIBE t)).
  std::vector<std::string> table_functions;
  size_t statements = 0;  // ParseSelect: the statements of the text
};

// The object a statement creates, alters, drops or writes.
struct PlanTarget {
  // "INSERT", "UPDATE", "DELETE", "MERGE" (INSERT ... ON CONFLICT, MERGE INTO), "CREATE",
  // "ALTER", "DROP".
  std::string operation;
  std::string kind;     // "TABLE", "VIEW", "SCHEMA", "INDEX", "SEQUENCE", "SECRET", ...
  RelationName object;  // for a schema: name is empty and schema names it

  // True for the operations that write rows of a table (INSERT, UPDATE, DELETE, MERGE).
  bool writes_rows() const {
    return operation == "INSERT" || operation == "UPDATE" || operation == "DELETE" ||
           operation == "MERGE";
  }
};

struct PlanFacts {
  std::string root;                          // the root operator, e.g. "LOGICAL_INSERT"
  std::vector<RelationName> scans;           // tables scanned (views seen through)
  std::vector<std::string> functions;        // bound scalar and aggregate functions
  std::vector<std::string> table_functions;  // LOGICAL_GET other than table scans
  std::optional<PlanTarget> target;
  ParsedFacts parsed;  // parse trees carried inside the plan
};

// A name a SELECT reads from (FROM, JOIN), as written: parts not written are empty.
struct WrittenRelation {
  std::string catalog;
  std::string schema;
  std::string name;
};

Result<std::optional<ParsedFacts>> ParseSelect(Connection& conn, std::string_view sql);
// Calls `rename` for every relation `sql` names, anywhere in it (subqueries, CTEs, joins); it
// returns true when it changed the name. The statement with the new names, or nullopt when
// `sql` is not a SELECT or no name changed.
Result<std::optional<std::string>> RenameRelations(
    Connection& conn, std::string_view sql, const std::function<bool(WrittenRelation*)>& rename);
Result<PlanFacts> PlanStatement(Connection& conn, std::string_view sql);

// A SELECT that maps each row of one relation to at most one row: a SELECT_NODE reading one
// table (no join, subquery or table function), with no GROUP BY, HAVING, QUALIFY, window,
// DISTINCT, ORDER BY, LIMIT or sample; INVALID_ARGUMENT naming what is not. Returns the
// statement with its WHERE clause removed, printed back by DuckDB (json_deserialize_sql): the
// rows it maps, whichever the filter keeps; nullopt when it has no WHERE clause.
Result<std::optional<std::string>> RowMapWithoutFilter(Connection& conn, std::string_view select);

}  // namespace millrace::engine
