#include "access/information_schema.h"

#include <map>
#include <set>

#include "common/strings.h"
#include "engine/statement_plan.h"
#include "sql/mysql_information_schema.h"

namespace millrace::access {
namespace {

using engine::QuoteIdentifier;
using engine::QuoteLiteral;

class GrantsFunction final : public engine::TableFunction {
 public:
  GrantsFunction(const AccessControl* access,
                 std::function<std::optional<std::string>(uint64_t)> connection_user)
      : access_(access), connection_user_(std::move(connection_user)) {}

  std::string name() const override { return "millrace_grants"; }
  std::vector<std::string> parameter_names() const override { return {}; }

  Result<std::vector<engine::ColumnDef>> Bind(const engine::TableFunctionArgs&) override {
    return std::vector<engine::ColumnDef>{{"database_name", engine::TypeId::kVarchar},
                                          {"table_name", engine::TypeId::kVarchar}};
  }

  Result<std::unique_ptr<engine::TableScan>> Scan(const engine::TableFunctionArgs& args) override {
    std::vector<GrantObject> objects;
    if (const std::optional<std::string> user = connection_user_(args.connection_id())) {
      for (const Grant& grant : access_->GrantsOf(*user)) {
        // An external catalog's grants name none of the embedded databases.
        if (!grant.privileges.empty() && grant.object.catalog.empty()) {
          objects.push_back(grant.object);
        }
      }
    }
    auto write = [](engine::OutputChunk& out, size_t r, const GrantObject& object) {
      out.SetString(0, r, object.database);
      out.SetString(1, r, object.table);
    };
    return std::unique_ptr<engine::TableScan>(
        std::make_unique<engine::VectorScan<GrantObject, decltype(write)>>(std::move(objects),
                                                                           write));
  }

 private:
  const AccessControl* access_;
  std::function<std::optional<std::string>(uint64_t)> connection_user_;
};

// The condition that keeps a row of view `i` for the user's grants `g`, from the columns the
// view has; empty: every row.
std::string RowFilter(const std::set<std::string>& columns,
                      const std::vector<std::string>& hidden) {
  std::string schema_column;
  std::string grant_matches;
  if (columns.contains("table_schema") && columns.contains("table_name")) {
    schema_column = "i.table_schema";
    grant_matches =
        "lower(g.database_name) = lower(i.table_schema) AND (g.table_name = '' OR "
        "lower(g.table_name) = lower(i.table_name))";
  } else if (columns.contains("schema_name")) {
    schema_column = "i.schema_name";
    grant_matches = "lower(g.database_name) = lower(i.schema_name)";
  } else if (columns.contains("constraint_schema")) {
    schema_column = "i.constraint_schema";
    grant_matches = "lower(g.database_name) = lower(i.constraint_schema) AND g.table_name = ''";
  } else {
    return "";
  }
  std::string hidden_list;
  for (const std::string& schema : hidden)
    hidden_list += (hidden_list.empty() ? "" : ", ") + QuoteLiteral(ToLower(schema));
  return "lower(" + schema_column + ") NOT IN (" + hidden_list +
         ") AND EXISTS (SELECT 1 FROM millrace_grants() AS g WHERE g.database_name = '' OR (" +
         grant_matches + "))";
}

}  // namespace

Status InstallFilteredInformationSchema(engine::Connection& conn,
                                        const std::vector<std::string>& hidden) {
  // The MySQL-shaped views where there are (they sort first), else DuckDB's.
  MR_ASSIGN_OR_RETURN(
      auto rows,
      engine::QueryTextRows(
          conn,
          "SELECT lower(table_name), column_name, data_type, database_name = 'system' AS "
          "duckdb FROM duckdb_columns() WHERE (database_name = 'system' AND schema_name = "
          "'information_schema') OR (database_name = current_database() AND schema_name "
          "= " +
              QuoteLiteral(sql::kMysqlInfoSchema) +
              ") ORDER BY lower(table_name), duckdb, column_index"));
  std::map<std::string, std::set<std::string>> views;
  std::map<std::string, std::string> stubs;    // view -> its stub's select list
  std::map<std::string, std::string> sources;  // view -> the view it filters
  for (const auto& row : rows) {
    const std::string source =
        row[3] == "true" ? "system.information_schema" : QuoteIdentifier(sql::kMysqlInfoSchema);
    if (sources.emplace(row[0], source).first->second != source) continue;
    views[row[0]].insert(ToLower(row[1]));
    std::string& stub = stubs[row[0]];
    stub += (stub.empty() ? "" : ", ") + std::string("CAST(NULL AS ") + row[2] + ") AS " +
            QuoteIdentifier(row[1]);
  }
  std::vector<std::string> all_hidden = hidden;
  all_hidden.emplace_back(kFilteredSchema);
  all_hidden.emplace_back(kStubSchema);
  std::string sql = "CREATE SCHEMA IF NOT EXISTS " + QuoteIdentifier(kFilteredSchema) +
                    ";\nCREATE SCHEMA IF NOT EXISTS " + QuoteIdentifier(kStubSchema) + ";\n";
  for (const auto& [view, columns] : views) {
    const std::string filter = RowFilter(columns, all_hidden);
    sql += "CREATE OR REPLACE VIEW " + QuoteIdentifier(kFilteredSchema) + "." +
           QuoteIdentifier(view) + " AS SELECT i.* FROM " + sources[view] + "." +
           QuoteIdentifier(view) + " AS i" + (filter.empty() ? "" : " WHERE " + filter) + ";\n";
    sql += "CREATE OR REPLACE VIEW " + QuoteIdentifier(kStubSchema) + "." + QuoteIdentifier(view) +
           " AS SELECT " + stubs[view] + " WHERE false;\n";
  }
  return conn.Execute(sql).WithContext("cannot create the filtered information_schema");
}

std::shared_ptr<engine::TableFunction> MakeGrantsFunction(
    const AccessControl* access,
    std::function<std::optional<std::string>(uint64_t)> connection_user) {
  return std::make_shared<GrantsFunction>(access, std::move(connection_user));
}

Result<std::optional<std::string>> RouteToFilteredInformationSchema(engine::Connection& conn,
                                                                    std::string_view sql) {
  return engine::RenameRelations(conn, sql, [](engine::WrittenRelation* relation) {
    const bool mysql = EqualsIgnoreCase(relation->schema, sql::kMysqlInfoSchema);
    if (!mysql && !EqualsIgnoreCase(relation->schema, "information_schema")) return false;
    if (!relation->catalog.empty() && !EqualsIgnoreCase(relation->catalog, "system")) {
      return false;
    }
    relation->catalog.clear();
    relation->schema = std::string(kFilteredSchema);
    return true;
  });
}

Result<std::optional<std::string>> StubFilteredViews(engine::Connection& conn,
                                                     std::string_view sql) {
  return engine::RenameRelations(conn, sql, [](engine::WrittenRelation* relation) {
    if (!EqualsIgnoreCase(relation->schema, kFilteredSchema)) return false;
    relation->schema = std::string(kStubSchema);
    return true;
  });
}

}  // namespace millrace::access
