#include "cdc/pg_source_factory.h"

#include "cdc/cdc_params.h"
#include "cdc/pg_change_source.h"
#include "cdc/pg_tables.h"
#include "engine/statement_plan.h"
#include "job/sink.h"
#include "table/model_catalog.h"

namespace millrace::cdc {
namespace {

using engine::QuoteIdentifier;

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

  std::string create = "CREATE TEMP TABLE " + std::string(kSourceName) + " (";
  for (size_t i = 0; i < table.columns.size(); ++i) {
    create += (i ? ", " : "") + QuoteIdentifier(table.columns[i].name) + " " +
              table.columns[i].mapping.duckdb_type;
  }
  MR_RETURN_IF_ERROR(conn->Execute(create + ")"));
  auto unfiltered = engine::RowMapWithoutFilter(*conn, target->select_sql);
  if (!unfiltered.ok()) return unfiltered.status().WithContext("the job's SELECT");
  target->unfiltered_sql = unfiltered->value_or("");
  std::string columns;
  for (const std::string& c : target->columns)
    columns += (columns.empty() ? "" : ", ") + QuoteIdentifier(c);
  auto bound =
      conn->PrepareOne("INSERT INTO " + target->table + " (" + columns + ") " + target->select_sql);
  if (!bound.ok()) {
    return bound.status().WithContext("the job's SELECT over the columns of " + table.Display());
  }
  return Status::Ok();
}

}  // namespace

Result<std::shared_ptr<job::JobSource>> MakePgChangeSource(
    const job::ChangeSourceRequest& request) {
  PgChangeSourceConfig config;
  MR_ASSIGN_OR_RETURN(config.spec, ParseCdcStreamArgs(request.analysis.args));
  MR_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Connect(config.spec.connect));
  MR_RETURN_IF_ERROR(CheckReplication(*conn));
  MR_ASSIGN_OR_RETURN(config.table, DescribeTable(*conn, config.spec.schema, config.spec.table));
  MR_RETURN_IF_ERROR(PrepareTarget(request, config.table, &config.target));
  config.clock = request.clock;
  return std::shared_ptr<job::JobSource>(std::make_shared<PgChangeSource>(std::move(config)));
}

}  // namespace millrace::cdc
