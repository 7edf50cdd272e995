#include "cdc/pg_source_factory.h"

#include <algorithm>

#include "cdc/cdc_params.h"
#include "cdc/pg_change_source.h"
#include "cdc/pg_tables.h"
#include "cdc/target_schema.h"
#include "job/sink.h"
#include "table/model_catalog.h"

namespace millrace::cdc {
namespace {

// The job's SELECT checked against a source-shaped table on a scratch connection.
Status PrepareTarget(const job::ChangeSourceRequest& request, const SourceTable& table,
                     ApplyTarget* target) {
  MR_ASSIGN_OR_RETURN(auto conn, request.db->Connect());
  MR_RETURN_IF_ERROR(job::UseDatabase(*conn, request.database));
  MR_ASSIGN_OR_RETURN(std::optional<table::TableDef> def,
                      table::LoadModel(*conn, request.target.schema, request.target.name));
  if (!def || def->model != table::TableModel::kUnique) {
    return Status::InvalidArgument(
        "a cdc_stream job writes into a UNIQUE KEY table (changes are applied by key); " +
        request.analysis.target_table + " is a " +
        std::string(def ? table::ModelName(def->model) : "DUPLICATE") + " KEY table");
  }
  target->def = *def;
  target->table = request.analysis.target_table;
  target->columns = request.analysis.columns;
  if (target->columns.empty()) {
    for (const table::Column& c : def->columns)
      target->columns.push_back(c.name);
  }
  const std::string& sql = request.insert_sql;
  const job::InsertAnalysis& a = request.analysis;
  target->select_sql = sql.substr(a.select_begin, a.call_begin - a.select_begin) +
                       std::string(kSourceName) + sql.substr(a.call_end);

  return CheckSelect(*conn, table, target);
}

// The database form keeps a target's columns those of its source (schema changes add and drop
// them): an existing target must have exactly the source's columns, whatever their order.
Status SameColumns(const SourceTable& source, const table::TableDef& def) {
  std::string lacks;
  std::string extra;
  for (const SourceColumn& c : source.columns) {
    if (def.FindColumn(c.name) == nullptr) lacks += (lacks.empty() ? "" : ", ") + c.name;
  }
  for (const table::Column& c : def.columns) {
    if (source.Find(c.name) < 0) extra += (extra.empty() ? "" : ", ") + c.name;
  }
  if (lacks.empty() && extra.empty()) return Status::Ok();
  return Status::InvalidArgument(
      "table " + def.database + "." + def.name + " exists with other columns than " +
      source.Display() + (lacks.empty() ? "" : " (it lacks " + lacks + ")") +
      (extra.empty() ? "" : " (it also has " + extra + ")") +
      "; FROM ... TO DATABASE keeps each target's columns its source's: make them the same, "
      "drop the table (the job makes it), or leave the table out with exclude_tables");
}

// The tables of FROM POSTGRES: include_tables, or every table of the schema; less
// exclude_tables.
Result<std::vector<std::string>> ListTables(pg::PgConnection& conn, const PgSourceSpec& spec) {
  std::vector<std::string> names = spec.tables;
  if (names.empty()) {
    MR_ASSIGN_OR_RETURN(
        pg::Rows rows,
        conn.Query("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = "
                   "c.relnamespace WHERE n.nspname = " +
                   conn.Literal(spec.schema) +
                   " AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY c.relname"));
    for (auto& row : rows.rows)
      names.push_back(row[0].value_or(""));
  }
  std::erase_if(names, [&](const std::string& name) {
    return std::find(spec.exclude_tables.begin(), spec.exclude_tables.end(), name) !=
           spec.exclude_tables.end();
  });
  if (names.empty()) {
    return Status::InvalidArgument("FROM POSTGRES: no table to follow in schema " + spec.schema +
                                   " of database " + spec.connect.database);
  }
  return names;
}

// The database form: each table into the table of its name in the target database, made as
// a UNIQUE KEY table where missing.
Status BindDatabase(const job::ChangeSourceRequest& request, pg::PgConnection& pg,
                    PgChangeSourceConfig* config) {
  MR_ASSIGN_OR_RETURN(TargetDatabaseSpec target_spec,
                      ParseToDatabaseArgs(request.analysis.to_args));
  MR_ASSIGN_OR_RETURN(std::vector<std::string> names, ListTables(pg, config->spec));
  MR_ASSIGN_OR_RETURN(auto conn, request.db->Connect());
  const std::string& database = request.analysis.to_database;
  for (const std::string& name : names) {
    TableBinding binding;
    MR_ASSIGN_OR_RETURN(binding.table, DescribeTable(pg, config->spec.schema, name));
    MR_ASSIGN_OR_RETURN(std::optional<table::TableDef> def,
                        table::LoadModel(*conn, database, name));
    if (!def) {
      // Made by the job's first batch, after CREATE JOB's checks (nothing is made for a
      // statement that is refused).
      MR_ASSIGN_OR_RETURN(def, TargetDef(database, binding.table, target_spec));
      binding.create = true;
    } else if (def->model != table::TableModel::kUnique) {
      return Status::InvalidArgument("FROM POSTGRES ... TO DATABASE " + database + ": table " +
                                     name + " exists and is a " +
                                     std::string(table::ModelName(def->model)) +
                                     " KEY table; changes are applied by key into UNIQUE KEY "
                                     "tables");
    }
    // Only at CREATE JOB: later the source may have columns the stream has not brought yet.
    if (request.creating) MR_RETURN_IF_ERROR(SameColumns(binding.table, *def));
    MR_RETURN_IF_ERROR(BindByName(binding.table, *def, &binding.target));
    config->tables.push_back(std::move(binding));
  }
  return Status::Ok();
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
  if (whole_database) {
    MR_RETURN_IF_ERROR(BindDatabase(request, *conn, &config));
  } else {
    TableBinding binding;
    MR_ASSIGN_OR_RETURN(binding.table,
                        DescribeTable(*conn, config.spec.schema, config.spec.tables.front()));
    MR_RETURN_IF_ERROR(PrepareTarget(request, binding.table, &binding.target));
    config.tables.push_back(std::move(binding));
  }
  config.clock = request.clock;
  config.db = request.db;
  config.database = request.database;
  return std::shared_ptr<job::JobSource>(std::make_shared<PgChangeSource>(std::move(config)));
}

}  // namespace millrace::cdc
