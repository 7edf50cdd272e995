#include "cdc/pg_source_factory.h"

#include <algorithm>

#include "cdc/cdc_params.h"
#include "cdc/pg_change_source.h"
#include "cdc/pg_tables.h"
#include "cdc/source_factory.h"

namespace millrace::cdc {
namespace {

// The tables of FROM POSTGRES: include_tables, or every table of the schema; less
// exclude_tables.
Result<std::vector<std::string>> ListTables(pg::PgConnection& conn, const PgSourceSpec& spec) {
  std::vector<std::string> all;
  if (spec.tables.empty()) {
    MR_ASSIGN_OR_RETURN(
        pg::Rows rows,
        conn.Query("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = "
                   "c.relnamespace WHERE n.nspname = " +
                   conn.Literal(spec.schema) +
                   " AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY c.relname"));
    for (auto& row : rows.rows)
      all.push_back(row[0].value_or(""));
  }
  return ChooseTables(spec.tables, std::move(all), spec.exclude_tables, "FROM POSTGRES",
                      "schema " + spec.schema + " of database " + spec.connect.database);
}

}  // namespace

Result<std::shared_ptr<job::JobSource>> MakePgChangeSource(
    const job::ChangeSourceRequest& request) {
  const bool whole_database = !request.analysis.to_database.empty();
  PgChangeSourceConfig config;
  if (whole_database) {
    MR_ASSIGN_OR_RETURN(config.spec, ParseFromPostgresArgs(request.analysis.args));
  } else {
    MR_ASSIGN_OR_RETURN(config.spec, ParseCdcStreamArgs(request.analysis.args));
  }
  MR_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Connect(config.spec.connect));
  MR_RETURN_IF_ERROR(CheckReplication(*conn));
  MR_ASSIGN_OR_RETURN(
      config.tables,
      BindSourceTables(
          request, "FROM POSTGRES", [&] { return ListTables(*conn, config.spec); },
          config.spec.tables.empty() ? std::string() : config.spec.tables.front(),
          [&](const std::string& name) { return DescribeTable(*conn, config.spec.schema, name); }));
  config.clock = request.clock;
  config.db = request.db;
  config.database = request.database;
  return std::shared_ptr<job::JobSource>(std::make_shared<PgChangeSource>(std::move(config)));
}

}  // namespace millrace::cdc
