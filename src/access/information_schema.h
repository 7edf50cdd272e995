// The information_schema of a user without ADMIN_PRIV: the views clients read (MySQL's shape,
// sql/mysql_information_schema.h, else DuckDB's own), with only the rows of what the user holds
// a privilege on, as SHOW DATABASES and SHOW TABLES list.
//
// Contract
// - InstallFilteredInformationSchema (at start, before DuckDB is locked down) creates or
//   replaces the schema kFilteredSchema with one view per view of the MySQL information_schema
//   (installed first) and per other view of DuckDB's, of the same name and columns, keeping:
//   - rows of a table or view (table_schema, table_name: tables, columns, views, ...) the user
//     holds any privilege on, directly or through its database or *.*;
//   - rows of a database (schemata.schema_name) the user holds any privilege in;
//   - rows that name only a database (constraint_schema: check_constraints,
//     referential_constraints) when the user holds a privilege on the whole database;
//   - the rows of views that name no database (character_sets) as they are;
//   and never the rows of `hidden` schemas (the job catalog, kFilteredSchema itself). The views
//   are derived from DuckDB's columns at start, so a view a later DuckDB adds is filtered by
//   the same rules.
// - The views read the user's grants through the table function millrace_grants()
//   (MakeGrantsFunction): one row per grant of the user behind the calling connection
//   (database '' for *.*, table '' for db.*); none for a connection of no client.
// - RouteToFilteredInformationSchema rewrites a SELECT so that every relation it reads from
//   information_schema (or system.information_schema), or from the MySQL views the router
//   routed it to, is read from kFilteredSchema instead;
//   nullopt when the statement is not a SELECT or reads none. Statements other than SELECT are
//   not rewritten: DuckDB's metadata stays for administrators there.
// - StubFilteredViews rewrites a statement so that it reads, for each filtered view, a stub of
//   the same columns that reads no metadata (kStubSchema, installed with the views): the plan
//   of the stub statement shows whether the statement reaches DuckDB's metadata any other way.
// - Clients cannot name kFilteredSchema or kStubSchema: they are internal databases
//   (internal_databases.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "access/access_control.h"
#include "common/result.h"
#include "engine/database.h"
#include "engine/table_function.h"

namespace millrace::access {

inline constexpr std::string_view kFilteredSchema = "__millrace_info";
inline constexpr std::string_view kStubSchema = "__millrace_info_stub";

Status InstallFilteredInformationSchema(engine::Connection& conn,
                                        const std::vector<std::string>& hidden);

std::shared_ptr<engine::TableFunction> MakeGrantsFunction(
    const AccessControl* access,
    std::function<std::optional<std::string>(uint64_t)> connection_user);

Result<std::optional<std::string>> RouteToFilteredInformationSchema(engine::Connection& conn,
                                                                    std::string_view sql);
Result<std::optional<std::string>> StubFilteredViews(engine::Connection& conn,
                                                     std::string_view sql);

}  // namespace millrace::access
