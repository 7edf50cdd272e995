#include "cdc/source_factory.h"

#include <algorithm>

#include "cdc/cdc_params.h"
#include "cdc/mysql_source_factory.h"
#include "cdc/pg_source_factory.h"
#include "cdc/target_schema.h"
#include "job/sink.h"
#include "table/model_catalog.h"
#include "table/model_write.h"

namespace millrace::cdc {
namespace {

// The job's SELECT checked against a source-shaped table on a scratch connection.
Status PrepareTarget(const job::ChangeSourceRequest& request, const SourceTable& table,
                     ApplyTarget* target) {
  MR_ASSIGN_OR_RETURN(auto conn, request.db->Connect());
  MR_RETURN_IF_ERROR(job::UseDatabase(*conn, request.database));
  std::optional<table::TableDef> def;
  target->table = request.analysis.target_table;
  if (request.external != nullptr) {
    // A table of an external catalog: the changes go into its staging table, which the sink
    // copies from.
    MR_RETURN_IF_ERROR(conn->Execute(request.external->staging_ddl));
    def = request.external->model;
    target->table = request.external->staging_table;
  } else {
    MR_ASSIGN_OR_RETURN(def, table::LoadModel(*conn, request.target.schema, request.target.name));
  }
  if (!def || def->model != table::TableModel::kUnique) {
    return Status::InvalidArgument(
        "a cdc_stream job writes into a UNIQUE KEY table (changes are applied by key); " +
        request.analysis.target_table + " is a " +
        std::string(def ? table::ModelName(def->model) : "DUPLICATE") + " KEY table");
  }
  target->def = *def;
  target->columns = request.analysis.columns;
  if (target->columns.empty()) {
    for (const table::Column& c : def->columns) {
      // A sign the target keeps is the sink's to write (ChangeApply).
      if (!(def->delete_sign_kept && table::IsDeleteSign(c.name)))
        target->columns.push_back(c.name);
    }
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

}  // namespace

Result<std::shared_ptr<job::JobSource>> MakeChangeSource(const job::ChangeSourceRequest& request) {
  MR_ASSIGN_OR_RETURN(const SourceType type, ParseSourceType(request.analysis.args));
  if (type == SourceType::kMysql) return MakeMysqlChangeSource(request);
  return MakePgChangeSource(request);
}

Result<TableBinding> BindStreamTable(const job::ChangeSourceRequest& request, SourceTable table) {
  TableBinding binding;
  binding.table = std::move(table);
  MR_RETURN_IF_ERROR(PrepareTarget(request, binding.table, &binding.target));
  return binding;
}

Result<std::vector<TableBinding>> BindDatabaseTables(const job::ChangeSourceRequest& request,
                                                     std::string_view form,
                                                     const std::vector<std::string>& names,
                                                     const DescribeSourceTable& describe) {
  MR_ASSIGN_OR_RETURN(TargetDatabaseSpec target_spec,
                      ParseToDatabaseArgs(request.analysis.to_args));
  MR_ASSIGN_OR_RETURN(auto conn, request.db->Connect());
  const std::string& database = request.analysis.to_database;
  std::vector<TableBinding> bindings;
  for (const std::string& name : names) {
    TableBinding binding;
    MR_ASSIGN_OR_RETURN(binding.table, describe(name));
    MR_ASSIGN_OR_RETURN(std::optional<table::TableDef> def,
                        table::LoadModel(*conn, database, name));
    if (!def) {
      // Made by the job's first batch, after CREATE JOB's checks (nothing is made for a
      // statement that is refused).
      MR_ASSIGN_OR_RETURN(def, TargetDef(database, binding.table, target_spec));
      binding.create = true;
    } else if (def->model != table::TableModel::kUnique) {
      return Status::InvalidArgument(std::string(form) + " ... TO DATABASE " + database +
                                     ": table " + name + " exists and is a " +
                                     std::string(table::ModelName(def->model)) +
                                     " KEY table; changes are applied by key into UNIQUE KEY "
                                     "tables");
    }
    // Only at CREATE JOB: later the source may have columns the stream has not brought yet.
    if (request.creating) MR_RETURN_IF_ERROR(SameColumns(binding.table, *def));
    MR_RETURN_IF_ERROR(BindByName(binding.table, *def, &binding.target));
    bindings.push_back(std::move(binding));
  }
  return bindings;
}

Result<std::vector<std::string>> ChooseTables(std::vector<std::string> include,
                                              std::vector<std::string> all,
                                              const std::vector<std::string>& exclude,
                                              std::string_view form, std::string_view where) {
  std::vector<std::string> names = include.empty() ? std::move(all) : std::move(include);
  std::erase_if(names, [&](const std::string& name) {
    return std::find(exclude.begin(), exclude.end(), name) != exclude.end();
  });
  if (names.empty()) {
    return Status::InvalidArgument(std::string(form) + ": no table to follow in " +
                                   std::string(where));
  }
  return names;
}

Result<std::vector<TableBinding>> BindSourceTables(
    const job::ChangeSourceRequest& request, std::string_view form,
    const std::function<Result<std::vector<std::string>>()>& list, const std::string& stream_table,
    const DescribeSourceTable& describe) {
  if (!request.analysis.to_database.empty()) {
    MR_ASSIGN_OR_RETURN(std::vector<std::string> names, list());
    return BindDatabaseTables(request, form, names, describe);
  }
  MR_ASSIGN_OR_RETURN(SourceTable table, describe(stream_table));
  MR_ASSIGN_OR_RETURN(TableBinding binding, BindStreamTable(request, std::move(table)));
  std::vector<TableBinding> tables;
  tables.push_back(std::move(binding));
  return tables;
}

}  // namespace millrace::cdc
