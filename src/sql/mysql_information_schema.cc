#include "sql/mysql_information_schema.h"

#include <algorithm>

#include "common/strings.h"
#include "engine/statement_plan.h"
#include "sql/mysql_types.h"

namespace millrace::sql {
namespace {

using engine::QuoteIdentifier;
using engine::QuoteLiteral;

constexpr std::string_view kTypesFunction = "millrace_mysql_types";
// The function's row for every type DuckDB names otherwise (LIST, STRUCT, ...).
constexpr std::string_view kOtherTypes = "";

struct TypeRow {
  std::string duckdb_type;
  MysqlType mysql;
};

class MysqlTypesFunction final : public engine::TableFunction {
 public:
  std::string name() const override { return std::string(kTypesFunction); }
  std::vector<std::string> parameter_names() const override { return {}; }

  Result<std::vector<engine::ColumnDef>> Bind(const engine::TableFunctionArgs&) override {
    using engine::TypeId;
    return std::vector<engine::ColumnDef>{{"duckdb_type", TypeId::kVarchar},
                                          {"data_type", TypeId::kVarchar},
                                          {"column_type", TypeId::kVarchar},
                                          {"character_maximum_length", TypeId::kBigInt},
                                          {"character_octet_length", TypeId::kBigInt},
                                          {"numeric_precision", TypeId::kBigInt},
                                          {"numeric_scale", TypeId::kBigInt},
                                          {"datetime_precision", TypeId::kBigInt},
                                          {"is_text", TypeId::kBoolean}};
  }

  Result<std::unique_ptr<engine::TableScan>> Scan(const engine::TableFunctionArgs&) override {
    std::vector<TypeRow> rows;
    for (const engine::ColumnType& type : NamedTypes())
      rows.push_back({engine::TypeName(type), MysqlTypeOf(type)});
    rows.push_back({std::string(kOtherTypes), MysqlTypeOf({engine::TypeId::kList})});
    auto write = [](engine::OutputChunk& out, size_t r, const TypeRow& row) {
      out.SetString(0, r, row.duckdb_type);
      out.SetString(1, r, row.mysql.data_type);
      out.SetString(2, r, row.mysql.column_type);
      size_t col = 3;
      for (const std::optional<int64_t>& value :
           {row.mysql.character_maximum_length, row.mysql.character_octet_length,
            row.mysql.numeric_precision, row.mysql.numeric_scale, row.mysql.datetime_precision}) {
        if (value) {
          out.SetInt64(col, r, *value);
        } else {
          out.SetNull(col, r);
        }
        ++col;
      }
      out.SetBool(col, r, row.mysql.text);
    };
    return std::unique_ptr<engine::TableScan>(
        std::make_unique<engine::VectorScan<TypeRow, decltype(write)>>(std::move(rows), write));
  }
};

// A view's column: its MySQL name and the expression of the inner query; text columns compare
// case-insensitively.
struct Column {
  std::string_view name;
  std::string expression;
  bool text = true;
};

Column Number(std::string_view name, std::string expression) {
  return Column{name, std::move(expression), false};
}

std::string ViewSql(const std::vector<Column>& columns, std::string_view from) {
  std::string inner;
  std::string outer;
  for (const Column& c : columns) {
    const std::string name = QuoteIdentifier(c.name);
    inner += (inner.empty() ? "" : ", ") + c.expression + " AS " + name;
    outer += (outer.empty() ? "" : ", ") +
             (c.text ? "CAST(" + name + " AS VARCHAR) COLLATE NOCASE AS " + name : name);
  }
  return "SELECT " + outer + " FROM (SELECT " + inner + " " + std::string(from) + ") AS v";
}

// The condition on a schema-name column that keeps the schemas SHOW DATABASES lists.
std::string Visible(std::string_view column, const std::vector<std::string>& hidden) {
  std::string list;
  for (const std::string& schema : hidden)
    list += (list.empty() ? "" : ", ") + QuoteLiteral(ToLower(schema));
  return std::string(column) + " IS NOT NULL AND lower(" + std::string(column) + ") NOT IN (" +
         list + ")";
}

// Whether column c.column_name of table c belongs to a constraint of the type.
std::string InConstraint(std::string_view constraint_type) {
  return "EXISTS (SELECT 1 FROM duckdb_constraints() k WHERE k.database_name = "
         "c.database_name AND k.schema_name = c.schema_name AND k.table_name = c.table_name "
         "AND k.constraint_type = " +
         QuoteLiteral(constraint_type) + " AND list_contains(k.constraint_column_names, " +
         "c.column_name))";
}

// A mapped type attribute for column c: its type's row, or the row of the types DuckDB names
// otherwise.
std::string TypeAttribute(std::string_view attribute) {
  return "CASE WHEN t.duckdb_type IS NULL THEN f." + std::string(attribute) + " ELSE t." +
         std::string(attribute) + " END";
}

std::string SchemataView(const std::vector<std::string>& hidden) {
  return ViewSql({{"CATALOG_NAME", "'def'"},
                  {"SCHEMA_NAME", "schema_name"},
                  {"DEFAULT_CHARACTER_SET_NAME", "'utf8mb4'"},
                  {"DEFAULT_COLLATION_NAME", "'utf8mb4_general_ci'"},
                  {"SQL_PATH", "NULL"},
                  {"DEFAULT_ENCRYPTION", "'NO'"}},
                 "FROM duckdb_schemas() WHERE database_name = current_database() AND " +
                     Visible("schema_name", hidden));
}

std::string TablesView(const std::vector<std::string>& hidden) {
  const std::string where = " WHERE database_name = current_database() AND NOT temporary AND " +
                            Visible("schema_name", hidden);
  auto columns = [](bool table) {
    auto pick = [table](std::string_view for_table, std::string_view for_view) {
      return std::string(table ? for_table : for_view);
    };
    return std::vector<Column>{{"TABLE_CATALOG", "'def'"},
                               {"TABLE_SCHEMA", "schema_name"},
                               {"TABLE_NAME", pick("table_name", "view_name")},
                               {"TABLE_TYPE", pick("'BASE TABLE'", "'VIEW'")},
                               {"ENGINE", pick("'DuckDB'", "NULL")},
                               Number("VERSION", pick("10", "NULL::BIGINT")),
                               {"ROW_FORMAT", pick("'Dynamic'", "NULL")},
                               Number("TABLE_ROWS", pick("estimated_size::BIGINT", "NULL::BIGINT")),
                               Number("AVG_ROW_LENGTH", pick("0", "NULL::BIGINT")),
                               Number("DATA_LENGTH", pick("0", "NULL::BIGINT")),
                               Number("MAX_DATA_LENGTH", pick("0", "NULL::BIGINT")),
                               Number("INDEX_LENGTH", pick("0", "NULL::BIGINT")),
                               Number("DATA_FREE", pick("0", "NULL::BIGINT")),
                               Number("AUTO_INCREMENT", "NULL::BIGINT"),
                               Number("CREATE_TIME", "NULL::TIMESTAMP"),
                               Number("UPDATE_TIME", "NULL::TIMESTAMP"),
                               Number("CHECK_TIME", "NULL::TIMESTAMP"),
                               {"TABLE_COLLATION", pick("'utf8mb4_general_ci'", "NULL")},
                               Number("CHECKSUM", "NULL::BIGINT"),
                               {"CREATE_OPTIONS", pick("''", "NULL")},
                               {"TABLE_COMMENT", pick("coalesce(comment, '')", "'VIEW'")}};
  };
  // Both halves have the same columns and collations, so the union keeps them.
  return ViewSql(columns(true), "FROM duckdb_tables()" + where) + " UNION ALL " +
         ViewSql(columns(false), "FROM duckdb_views()" + where + " AND NOT internal");
}

std::string ColumnsView(const std::vector<std::string>& hidden) {
  return ViewSql(
      {{"TABLE_CATALOG", "'def'"},
       {"TABLE_SCHEMA", "c.schema_name"},
       {"TABLE_NAME", "c.table_name"},
       {"COLUMN_NAME", "c.column_name"},
       Number("ORDINAL_POSITION", "c.column_index::BIGINT"),
       {"COLUMN_DEFAULT", "c.column_default"},
       {"IS_NULLABLE", "CASE WHEN c.is_nullable THEN 'YES' ELSE 'NO' END"},
       {"DATA_TYPE", TypeAttribute("data_type")},
       Number("CHARACTER_MAXIMUM_LENGTH", TypeAttribute("character_maximum_length")),
       Number("CHARACTER_OCTET_LENGTH", TypeAttribute("character_octet_length")),
       Number("NUMERIC_PRECISION", TypeAttribute("numeric_precision")),
       Number("NUMERIC_SCALE", TypeAttribute("numeric_scale")),
       Number("DATETIME_PRECISION", TypeAttribute("datetime_precision")),
       {"CHARACTER_SET_NAME", "CASE WHEN " + TypeAttribute("is_text") + " THEN 'utf8mb4' END"},
       {"COLLATION_NAME",
        "CASE WHEN " + TypeAttribute("is_text") + " THEN 'utf8mb4_general_ci' END"},
       {"COLUMN_TYPE", TypeAttribute("column_type")},
       {"COLUMN_KEY", "CASE WHEN " + InConstraint("PRIMARY KEY") + " THEN 'PRI' WHEN " +
                          InConstraint("UNIQUE") + " THEN 'UNI' ELSE '' END"},
       {"EXTRA", "''"},
       {"PRIVILEGES", "'select,insert,update,references'"},
       {"COLUMN_COMMENT", "coalesce(c.comment, '')"},
       {"GENERATION_EXPRESSION", "''"},
       Number("SRS_ID", "NULL::BIGINT")},
      "FROM duckdb_columns() c LEFT JOIN " + std::string(kTypesFunction) +
          "() t ON t.duckdb_type = c.data_type, (SELECT * FROM " + std::string(kTypesFunction) +
          "() WHERE duckdb_type = " + QuoteLiteral(kOtherTypes) +
          ") f WHERE c.database_name = current_database() AND NOT c.internal AND " +
          Visible("c.schema_name", hidden));
}

// One row per column of each PRIMARY KEY, UNIQUE (and, for key_column_usage, FOREIGN KEY)
// constraint: k.*, col (its column), seq (its position from 1).
std::string KeyColumns(std::string_view types, const std::vector<std::string>& hidden) {
  return "FROM (SELECT *, unnest(constraint_column_names) AS col, "
         "generate_subscripts(constraint_column_names, 1) AS seq FROM duckdb_constraints() "
         "WHERE database_name = current_database() AND constraint_type IN (" +
         std::string(types) + ") AND " + Visible("schema_name", hidden) + ") AS k";
}

std::string IndexName() {
  return "CASE WHEN k.constraint_type = 'PRIMARY KEY' THEN 'PRIMARY' ELSE k.constraint_name END";
}

std::string StatisticsView(const std::vector<std::string>& hidden) {
  return ViewSql({{"TABLE_CATALOG", "'def'"},
                  {"TABLE_SCHEMA", "k.schema_name"},
                  {"TABLE_NAME", "k.table_name"},
                  Number("NON_UNIQUE", "0"),
                  {"INDEX_SCHEMA", "k.schema_name"},
                  {"INDEX_NAME", IndexName()},
                  Number("SEQ_IN_INDEX", "k.seq::BIGINT"),
                  {"COLUMN_NAME", "k.col"},
                  {"COLLATION", "'A'"},
                  Number("CARDINALITY", "NULL::BIGINT"),
                  Number("SUB_PART", "NULL::BIGINT"),
                  {"PACKED", "NULL"},
                  {"NULLABLE", "''"},
                  {"INDEX_TYPE", "'BTREE'"},
                  {"COMMENT", "''"},
                  {"INDEX_COMMENT", "''"},
                  {"IS_VISIBLE", "'YES'"},
                  {"EXPRESSION", "NULL"}},
                 KeyColumns("'PRIMARY KEY', 'UNIQUE'", hidden));
}

std::string KeyColumnUsageView(const std::vector<std::string>& hidden) {
  const std::string foreign = "k.constraint_type = 'FOREIGN KEY'";
  return ViewSql(
      {{"CONSTRAINT_CATALOG", "'def'"},
       {"CONSTRAINT_SCHEMA", "k.schema_name"},
       {"CONSTRAINT_NAME", IndexName()},
       {"TABLE_CATALOG", "'def'"},
       {"TABLE_SCHEMA", "k.schema_name"},
       {"TABLE_NAME", "k.table_name"},
       {"COLUMN_NAME", "k.col"},
       Number("ORDINAL_POSITION", "k.seq::BIGINT"),
       Number("POSITION_IN_UNIQUE_CONSTRAINT", "CASE WHEN " + foreign + " THEN k.seq::BIGINT END"),
       {"REFERENCED_TABLE_SCHEMA", "CASE WHEN " + foreign + " THEN k.schema_name END"},
       {"REFERENCED_TABLE_NAME", "CASE WHEN " + foreign + " THEN k.referenced_table END"},
       {"REFERENCED_COLUMN_NAME",
        "CASE WHEN " + foreign + " THEN k.referenced_column_names[k.seq] END"}},
      KeyColumns("'PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY'", hidden));
}

std::string ViewsView(const std::vector<std::string>& hidden) {
  return ViewSql({{"TABLE_CATALOG", "'def'"},
                  {"TABLE_SCHEMA", "schema_name"},
                  {"TABLE_NAME", "view_name"},
                  {"VIEW_DEFINITION", "sql"},
                  {"CHECK_OPTION", "'NONE'"},
                  {"IS_UPDATABLE", "'NO'"},
                  {"DEFINER", "'root@%'"},
                  {"SECURITY_TYPE", "'DEFINER'"},
                  {"CHARACTER_SET_CLIENT", "'utf8mb4'"},
                  {"COLLATION_CONNECTION", "'utf8mb4_general_ci'"}},
                 "FROM duckdb_views() WHERE database_name = current_database() AND NOT internal "
                 "AND NOT temporary AND " +
                     Visible("schema_name", hidden));
}

// Millrace has no stored routines: MySQL's columns, no rows.
std::string RoutinesView(const std::vector<std::string>&) {
  std::vector<Column> columns;
  for (std::string_view name : {"SPECIFIC_NAME",
                                "ROUTINE_CATALOG",
                                "ROUTINE_SCHEMA",
                                "ROUTINE_NAME",
                                "ROUTINE_TYPE",
                                "DATA_TYPE",
                                "CHARACTER_SET_NAME",
                                "COLLATION_NAME",
                                "DTD_IDENTIFIER",
                                "ROUTINE_BODY",
                                "ROUTINE_DEFINITION",
                                "EXTERNAL_NAME",
                                "EXTERNAL_LANGUAGE",
                                "PARAMETER_STYLE",
                                "IS_DETERMINISTIC",
                                "SQL_DATA_ACCESS",
                                "SQL_PATH",
                                "SECURITY_TYPE",
                                "SQL_MODE",
                                "ROUTINE_COMMENT",
                                "DEFINER",
                                "CHARACTER_SET_CLIENT",
                                "COLLATION_CONNECTION",
                                "DATABASE_COLLATION"}) {
    columns.push_back({name, "NULL"});
  }
  for (std::string_view name : {"CHARACTER_MAXIMUM_LENGTH", "CHARACTER_OCTET_LENGTH",
                                "NUMERIC_PRECISION", "NUMERIC_SCALE", "DATETIME_PRECISION"})
    columns.push_back(Number(name, "NULL::BIGINT"));
  columns.push_back(Number("CREATED", "NULL::TIMESTAMP"));
  columns.push_back(Number("LAST_ALTERED", "NULL::TIMESTAMP"));
  return ViewSql(columns, "WHERE false");
}

std::string EnginesView(const std::vector<std::string>&) {
  return ViewSql({{"ENGINE", "'DuckDB'"},
                  {"SUPPORT", "'DEFAULT'"},
                  {"COMMENT", "'DuckDB''s columnar storage, embedded'"},
                  {"TRANSACTIONS", "'YES'"},
                  {"XA", "'NO'"},
                  {"SAVEPOINTS", "'NO'"}},
                 "");
}

// The views, each declared once: its name (as clients write it, lower-cased) and its query.
struct MysqlViewDef {
  std::string_view name;
  std::string (*select)(const std::vector<std::string>& hidden);
};
constexpr MysqlViewDef kViews[] = {{"schemata", SchemataView},
                                   {"tables", TablesView},
                                   {"columns", ColumnsView},
                                   {"statistics", StatisticsView},
                                   {"key_column_usage", KeyColumnUsageView},
                                   {"views", ViewsView},
                                   {"routines", RoutinesView},
                                   {"engines", EnginesView}};

}  // namespace

std::shared_ptr<engine::TableFunction> MakeMysqlTypesFunction() {
  return std::make_shared<MysqlTypesFunction>();
}

std::string MysqlInfoView(std::string_view name) {
  return QuoteIdentifier(kMysqlInfoSchema) + "." + QuoteIdentifier(name);
}

Status InstallMysqlInformationSchema(engine::Connection& conn,
                                     const std::vector<std::string>& hidden) {
  std::vector<std::string> all_hidden = hidden;
  all_hidden.emplace_back(kMysqlInfoSchema);
  std::string sql = "CREATE SCHEMA IF NOT EXISTS " + QuoteIdentifier(kMysqlInfoSchema) + ";\n";
  // MySQL functions the drivers' metadata queries call and DuckDB lacks, in the schema every
  // search path reaches.
  sql += "CREATE OR REPLACE MACRO main.locate(needle, haystack) AS instr(haystack, needle);\n";
  for (const MysqlViewDef& view : kViews) {
    sql += "CREATE OR REPLACE VIEW " + MysqlInfoView(view.name) + " AS " + view.select(all_hidden) +
           ";\n";
  }
  return conn.Execute(sql).WithContext("cannot create the MySQL information_schema");
}

Result<std::optional<std::string>> RouteToMysqlInformationSchema(engine::Connection& conn,
                                                                 std::string_view sql) {
  // Most statements name no metadata: they skip the parse.
  if (!ContainsIgnoreCase(sql, "information_schema")) {
    return std::optional<std::string>();
  }
  return engine::RenameRelations(conn, sql, [](engine::WrittenRelation* relation) {
    if (!relation->catalog.empty() || !EqualsIgnoreCase(relation->schema, "information_schema")) {
      return false;
    }
    const std::string name = ToLower(relation->name);
    if (std::none_of(std::begin(kViews), std::end(kViews),
                     [&](const MysqlViewDef& view) { return view.name == name; })) {
      return false;
    }
    relation->schema = std::string(kMysqlInfoSchema);
    relation->name = name;
    return true;
  });
}

}  // namespace millrace::sql
