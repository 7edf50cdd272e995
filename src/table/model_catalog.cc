#include "table/model_catalog.h"

#include <array>
#include <nlohmann/json.hpp>

#include "common/json.h"
#include "common/strings.h"
#include "engine/duckdb_status.h"

namespace millrace::table {
namespace {

using nlohmann::json;

Result<TableModel> ModelOf(std::string_view name) {
  if (std::optional<TableModel> model = ModelNamed(name)) return *model;
  return Status::DataLoss("unknown table model " + std::string(name) +
                          " in __millrace.table_models");
}

Result<Aggregation> AggregationOf(std::string_view name) {
  if (std::optional<Aggregation> aggregation = AggregationNamed(name)) return *aggregation;
  return Status::DataLoss("unknown aggregation " + std::string(name) +
                          " in __millrace.table_models");
}

}  // namespace

std::string TableDefToJson(const TableDef& def) {
  json columns = json::array();
  for (const Column& c : def.columns) {
    json column = {{"name", c.name},
                   {"doris_type", c.doris_type},
                   {"duckdb_type", c.duckdb_type},
                   {"nullable", c.nullable},
                   {"comment", c.comment},
                   {"aggregation", AggregationName(c.aggregation)}};
    if (c.default_doris) column["default_doris"] = *c.default_doris;
    if (c.default_sql) column["default_sql"] = *c.default_sql;
    columns.push_back(std::move(column));
  }
  json properties = json::array();
  for (const auto& [key, value] : def.properties)
    properties.push_back({key, value});
  return RenderJson({{"database", def.database},
                     {"name", def.name},
                     {"model", ModelName(def.model)},
                     {"keys", def.keys},
                     {"columns", std::move(columns)},
                     {"comment", def.comment},
                     {"indexes", def.indexes},
                     {"partition", def.partition},
                     {"distribution", def.distribution},
                     {"rollup", def.rollup},
                     {"properties", std::move(properties)}});
}

Result<TableDef> TableDefFromJson(std::string_view text) {
  MR_ASSIGN_OR_RETURN(json doc, ParseJson(text));
  try {
    TableDef def;
    def.database = doc.at("database").get<std::string>();
    def.name = doc.at("name").get<std::string>();
    MR_ASSIGN_OR_RETURN(def.model, ModelOf(doc.at("model").get<std::string>()));
    def.keys = doc.at("keys").get<std::vector<std::string>>();
    for (const json& c : doc.at("columns")) {
      Column column;
      column.name = c.at("name").get<std::string>();
      column.doris_type = c.at("doris_type").get<std::string>();
      column.duckdb_type = c.at("duckdb_type").get<std::string>();
      column.nullable = c.at("nullable").get<bool>();
      column.comment = c.at("comment").get<std::string>();
      MR_ASSIGN_OR_RETURN(column.aggregation,
                          AggregationOf(c.at("aggregation").get<std::string>()));
      if (c.contains("default_doris")) column.default_doris = c["default_doris"].get<std::string>();
      if (c.contains("default_sql")) column.default_sql = c["default_sql"].get<std::string>();
      def.columns.push_back(std::move(column));
    }
    def.comment = doc.at("comment").get<std::string>();
    def.indexes = doc.at("indexes").get<std::vector<std::string>>();
    def.partition = doc.at("partition").get<std::string>();
    def.distribution = doc.at("distribution").get<std::string>();
    def.rollup = doc.at("rollup").get<std::string>();
    for (const json& p : doc.at("properties"))
      def.properties.emplace_back(p.at(0).get<std::string>(), p.at(1).get<std::string>());
    return def;
  } catch (const json::exception& e) {
    return Status::DataLoss(std::string("a table definition in __millrace.table_models is "
                                        "malformed: ") +
                            e.what());
  }
}

std::string RecordModelSql(const TableDef& def) {
  // Names compare case-insensitively, as DuckDB's catalog does: an earlier record of the table
  // under another case goes too.
  return ForgetModelSql(def.database, def.name) + "; INSERT INTO __millrace.table_models VALUES (" +
         engine::QuoteLiteral(def.database) + ", " + engine::QuoteLiteral(def.name) + ", " +
         engine::QuoteLiteral(TableDefToJson(def)) + ")";
}

std::string ForgetModelSql(std::string_view database, std::string_view table) {
  return "DELETE FROM __millrace.table_models WHERE lower(database_name) = lower(" +
         engine::QuoteLiteral(database) + ") AND lower(table_name) = lower(" +
         engine::QuoteLiteral(table) + ")";
}

Result<std::optional<TableDef>> LoadModel(engine::Connection& conn, std::string_view database,
                                          std::string_view table) {
  const std::string where_table = "lower(schema_name) = lower(" + engine::QuoteLiteral(database) +
                                  ") AND lower(table_name) = lower(" + engine::QuoteLiteral(table) +
                                  ")";
  auto records = engine::QueryTextRows(conn,
                                       "SELECT definition FROM __millrace.table_models WHERE "
                                       "lower(database_name) = lower(" +
                                           engine::QuoteLiteral(database) +
                                           ") AND lower(table_name) = lower(" +
                                           engine::QuoteLiteral(table) + ")");
  if (!records.ok()) {
    // A database without the job catalog (an engine of its own, in tests) has no Doris tables.
    const ErrorDetail detail = records.status().detail();
    if (detail.domain == ErrorDomain::kDuckDb &&
        detail.reason == static_cast<int32_t>(engine::DuckDbReason::kTableMissing)) {
      return std::optional<TableDef>();
    }
    return records.status();
  }
  if (records->empty()) return std::optional<TableDef>();
  MR_ASSIGN_OR_RETURN(TableDef def, TableDefFromJson((*records)[0][0]));
  // Still the table it was recorded for?
  MR_ASSIGN_OR_RETURN(auto columns,
                      engine::QueryTextRows(conn,
                                            "SELECT column_name FROM duckdb_columns() WHERE "
                                            "database_name = current_database() AND " +
                                                where_table + " ORDER BY column_index"));
  if (columns.size() != def.columns.size()) return std::optional<TableDef>();
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i][0] != def.columns[i].name) return std::optional<TableDef>();
  }
  if (def.model != TableModel::kDuplicate) {
    MR_ASSIGN_OR_RETURN(
        auto keys,
        engine::QueryTextRows(conn,
                              "SELECT unnest(constraint_column_names) FROM duckdb_constraints() "
                              "WHERE database_name = current_database() AND constraint_type = "
                              "'PRIMARY KEY' AND " +
                                  where_table));
    if (keys.size() != def.keys.size()) return std::optional<TableDef>();
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!EqualsIgnoreCase(keys[i][0], def.keys[i])) return std::optional<TableDef>();
    }
  }
  return std::optional<TableDef>(std::move(def));
}

}  // namespace millrace::table
