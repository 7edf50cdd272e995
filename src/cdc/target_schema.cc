#include "cdc/target_schema.h"

#include <algorithm>

#include "common/strings.h"
#include "table/create_table.h"
#include "table/model_catalog.h"

namespace millrace::cdc {
namespace {

using engine::QuoteIdentifier;

// The Doris type of a source column (a key column's STRING as VARCHAR(65533)).
std::string DorisType(const SourceColumn& column, bool key) {
  if (key && column.mapping.doris_type == "string") return "varchar(65533)";
  return column.mapping.doris_type;
}

// The target column a source column becomes, as Doris's CREATE TABLE would make it.
Result<table::Column> TargetColumn(const SourceColumn& column) {
  MR_ASSIGN_OR_RETURN(table::CreateTable made,
                      table::ParseCreateTable("CREATE TABLE `t` (" + Backquoted(column.name) + " " +
                                              DorisType(column, false) + " NULL)"));
  return made.def.columns.front();
}

std::string Qualified(const table::TableDef& def) {
  return QuoteIdentifier(def.database) + "." + QuoteIdentifier(def.name);
}

}  // namespace

std::string TargetDdl(const SourceTable& source, const TargetDatabaseSpec& spec) {
  std::vector<size_t> order = source.key;
  for (size_t i = 0; i < source.columns.size(); ++i) {
    if (std::find(order.begin(), order.end(), i) == order.end()) order.push_back(i);
  }
  std::string columns;
  for (size_t n = 0; n < order.size(); ++n) {
    const SourceColumn& c = source.columns[order[n]];
    const bool key = n < source.key.size();
    columns += (n ? ", " : "") + Backquoted(c.name) + " " + DorisType(c, key) +
               (c.not_null || key ? " NOT NULL" : " NULL");
  }
  std::string key;
  for (size_t k : source.key)
    key += (key.empty() ? "" : ", ") + Backquoted(source.columns[k].name);
  std::string ddl = "CREATE TABLE " + Backquoted(source.name) + " (" + columns + ") UNIQUE KEY(" +
                    key + ") DISTRIBUTED BY HASH(" + key + ") BUCKETS 1";
  std::string properties;
  for (const auto& [name, value] : spec.create_properties) {
    properties += (properties.empty() ? "" : ", ") + engine::QuoteLiteral(name) + " = " +
                  engine::QuoteLiteral(value);
  }
  if (!properties.empty()) ddl += " PROPERTIES (" + properties + ")";
  return ddl;
}

Result<table::TableDef> TargetDef(const std::string& database, const SourceTable& source,
                                  const TargetDatabaseSpec& spec) {
  MR_ASSIGN_OR_RETURN(table::CreateTable create, table::ParseCreateTable(TargetDdl(source, spec)));
  create.def.database = database;
  return create.def;
}

Status EnsureTarget(engine::Connection& conn, const table::TableDef& def) {
  MR_ASSIGN_OR_RETURN(std::optional<table::TableDef> existing,
                      table::LoadModel(conn, def.database, def.name));
  if (existing) {
    if (existing->model == table::TableModel::kUnique) return Status::Ok();
    return Status::FailedPrecondition("table " + def.database + "." + def.name + " was made as a " +
                                      std::string(table::ModelName(existing->model)) +
                                      " KEY table before the job could make it");
  }
  // The table and its record in one transaction (the caller's): both or neither.
  MR_RETURN_IF_ERROR(conn.Execute(table::DuckDbCreateTable(def, false)));
  return conn.Execute(table::RecordModelSql(def));
}

Status BindByName(const SourceTable& source, const table::TableDef& def, ApplyTarget* target) {
  for (size_t k : source.key) {
    if (def.FindColumn(source.columns[k].name) == nullptr) {
      return Status::InvalidArgument("table " + def.database + "." + def.name + " has no column " +
                                     source.columns[k].name + " of " + source.Display() +
                                     "'s primary key");
    }
  }
  target->columns.clear();
  std::string select;
  for (const table::Column& c : def.columns) {
    if (source.Find(c.name) < 0) continue;
    target->columns.push_back(c.name);
    select += (select.empty() ? "" : ", ") + QuoteIdentifier(c.name);
  }
  target->def = def;
  target->table = Qualified(def);
  target->select_sql = "SELECT " + select + " FROM " + std::string(kSourceName);
  target->unfiltered_sql.clear();
  return Status::Ok();
}

Result<AlteredTarget> AlterTarget(engine::Connection& conn, const table::TableDef& target,
                                  const std::vector<const SourceTable*>& shapes) {
  MR_ASSIGN_OR_RETURN(std::optional<table::TableDef> loaded,
                      table::LoadModel(conn, target.database, target.name));
  if (!loaded || loaded->model != table::TableModel::kUnique) {
    return Status::FailedPrecondition("table " + target.database + "." + target.name +
                                      " is no longer the UNIQUE KEY table the job writes (it "
                                      "was changed outside the job)");
  }
  AlteredTarget out{std::move(*loaded), {}};
  table::TableDef& def = out.def;
  auto in_a_shape = [&](const std::string& name) {
    return std::any_of(shapes.begin(), shapes.end(),
                       [&](const SourceTable* shape) { return shape->Find(name) >= 0; });
  };
  const std::string table = Qualified(def);
  std::vector<std::string> ddl;
  std::vector<table::Column> kept;
  for (table::Column& c : def.columns) {
    if (in_a_shape(c.name) || def.IsKey(c.name)) {
      kept.push_back(std::move(c));
    } else {
      ddl.push_back("ALTER TABLE " + table + " DROP COLUMN " + QuoteIdentifier(c.name));
    }
  }
  def.columns = std::move(kept);
  for (const SourceTable* shape : shapes) {
    for (const SourceColumn& s : shape->columns) {
      if (def.FindColumn(s.name) != nullptr) continue;
      MR_ASSIGN_OR_RETURN(table::Column column, TargetColumn(s));
      ddl.push_back("ALTER TABLE " + table + " ADD COLUMN " + QuoteIdentifier(s.name) + " " +
                    column.duckdb_type);
      def.columns.push_back(std::move(column));
      out.added.push_back(s.name);
    }
  }
  if (ddl.empty()) return out;
  for (const std::string& statement : ddl)
    MR_RETURN_IF_ERROR(conn.Execute(statement));
  MR_RETURN_IF_ERROR(conn.Execute(table::RecordModelSql(def)));
  return out;
}

Status Backfill(engine::Connection& conn, const table::TableDef& def, const SourceTable& shape,
                const std::vector<std::string>& columns) {
  std::string set;
  for (const std::string& name : columns) {
    const int i = shape.Find(name);
    if (i < 0 || !shape.columns[i].missing_value) continue;
    const SourceColumn& s = shape.columns[i];
    MR_ASSIGN_OR_RETURN(std::string staged, change::StageText(s.mapping, *s.missing_value));
    set += (set.empty() ? "" : ", ") + QuoteIdentifier(name) + " = " +
           change::ValueSql(s.mapping, engine::QuoteLiteral(staged));
  }
  if (set.empty()) return Status::Ok();
  return conn.Execute("UPDATE " + Qualified(def) + " SET " + set);
}

}  // namespace millrace::cdc
