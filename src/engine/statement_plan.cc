#include "engine/statement_plan.h"

#include <nlohmann/json.hpp>

#include "common/json.h"
#include "common/strings.h"

namespace millrace::engine {
namespace {

using nlohmann::json;

std::string StringField(const json& node, const char* key) {
  auto it = node.find(key);
  return it != node.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// "TABLE_ENTRY" -> "TABLE".
std::string EntryKind(const std::string& type) {
  constexpr std::string_view kSuffix = "_ENTRY";
  if (type.size() > kSuffix.size() && type.ends_with(kSuffix)) {
    return type.substr(0, type.size() - kSuffix.size());
  }
  return type;
}

// Collects what parse-tree nodes name (they appear in a SELECT's parse tree and inside plans:
// a view's query, a COPY's SELECT).
void CollectParsed(const json& node, ParsedFacts* out) {
  const std::string type = StringField(node, "type");
  const std::string cls = StringField(node, "class");
  if (type == "BASE_TABLE") {
    out->relations.push_back({StringField(node, "schema_name"), StringField(node, "table_name"),
                              StringField(node, "catalog_name")});
  } else if (type == "SHOW_REF" && (!node.contains("query") || node["query"].is_null())) {
    // SUMMARIZE t reads t; SHOW TABLES, DESCRIBE t and the like read the catalog: reported as
    // the table function "show_<type>".
    if (StringField(node, "show_type") == "SUMMARY") {
      out->relations.push_back({StringField(node, "schema_name"), StringField(node, "table_name")});
    } else {
      out->table_functions.push_back("show_" + ToLower(StringField(node, "show_type")));
    }
  } else if (type == "TABLE_FUNCTION") {
    auto it = node.find("function");
    if (it != node.end() && it->is_object()) {
      out->table_functions.push_back(ToLower(StringField(*it, "function_name")));
    }
  } else if ((cls == "FUNCTION" || cls == "WINDOW") && node.contains("function_name")) {
    out->functions.push_back(ToLower(StringField(node, "function_name")));
  }
  auto cte = node.find("cte_map");
  if (cte != node.end() && cte->is_object()) {
    for (const json& entry : cte->value("map", json::array())) {
      out->cte_names.push_back(ToLower(StringField(entry, "key")));
    }
  }
}

// The object written by a plan's root operator.
std::optional<PlanTarget> TargetOf(const std::string& root, const json& node) {
  auto info_of = [&](const char* key) -> const json* {
    auto it = node.find(key);
    return it != node.end() && it->is_object() ? &*it : nullptr;
  };
  if (root == "LOGICAL_INSERT" || root == "LOGICAL_UPDATE" || root == "LOGICAL_DELETE" ||
      root == "LOGICAL_MERGE_INTO") {
    const json* info = info_of("table_info");
    if (info == nullptr) return std::nullopt;
    // INSERT ... ON CONFLICT and MERGE INTO are both a LOGICAL_MERGE_INTO.
    return PlanTarget{root == "LOGICAL_MERGE_INTO" ? "MERGE" : root.substr(8),
                      "TABLE",
                      {StringField(*info, "schema"), StringField(*info, "table")}};
  }
  const json* info = info_of("info");
  if (info == nullptr) return std::nullopt;
  const std::string kind = EntryKind(StringField(*info, "type"));
  if (root == "LOGICAL_CREATE_TABLE") {
    return PlanTarget{
        "CREATE", "TABLE", {StringField(*info, "schema"), StringField(*info, "table")}};
  }
  if (root == "LOGICAL_CREATE_VIEW") {
    return PlanTarget{
        "CREATE", "VIEW", {StringField(*info, "schema"), StringField(*info, "view_name")}};
  }
  if (root == "LOGICAL_CREATE_SCHEMA") {
    return PlanTarget{"CREATE", "SCHEMA", {StringField(*info, "schema"), ""}};
  }
  if (root == "LOGICAL_CREATE_INDEX") {
    // An index is checked on its table.
    return PlanTarget{
        "CREATE", "INDEX", {StringField(*info, "schema"), StringField(*info, "table")}};
  }
  if (root == "LOGICAL_DROP" || root == "LOGICAL_ALTER") {
    const std::string operation = root == "LOGICAL_DROP" ? "DROP" : "ALTER";
    if (kind == "SCHEMA") return PlanTarget{operation, kind, {StringField(*info, "name"), ""}};
    // ALTER_INFO's type is "ALTER_TABLE", "ALTER_VIEW", ...
    const std::string alter_kind = kind.starts_with("ALTER_") ? kind.substr(6) : kind;
    return PlanTarget{
        operation, alter_kind, {StringField(*info, "schema"), StringField(*info, "name")}};
  }
  if (!kind.empty()) return PlanTarget{root.substr(8), kind, {StringField(*info, "schema"), ""}};
  return std::nullopt;
}

void CollectPlan(const json& node, PlanFacts* out) {
  if (node.is_array()) {
    for (const json& child : node)
      CollectPlan(child, out);
    return;
  }
  if (!node.is_object()) return;
  const std::string type = StringField(node, "type");
  const std::string expression_class = StringField(node, "expression_class");
  if (type == "LOGICAL_GET") {
    const std::string name = ToLower(StringField(node, "name"));
    auto data = node.find("function_data");
    if (name == "seq_scan" && data != node.end() && data->is_object()) {
      out->scans.push_back({StringField(*data, "schema"), StringField(*data, "table")});
    } else {
      out->table_functions.push_back(name);
    }
  } else if (expression_class.starts_with("BOUND_") && node.contains("name") &&
             node["name"].is_string()) {
    out->functions.push_back(ToLower(node["name"].get<std::string>()));
  }
  CollectParsed(node, &out->parsed);
  for (const auto& [key, child] : node.items()) {
    if (child.is_structured()) CollectPlan(child, out);
  }
}

void CollectParsedTree(const json& node, ParsedFacts* out) {
  if (node.is_array()) {
    for (const json& child : node)
      CollectParsedTree(child, out);
    return;
  }
  if (!node.is_object()) return;
  CollectParsed(node, out);
  for (const auto& [key, child] : node.items()) {
    if (child.is_structured()) CollectParsedTree(child, out);
  }
}

// The text `function`(CAST(? AS `type`)) returns for `argument`.
Result<std::string> CallTextFunction(Connection& conn, const char* function, const char* type,
                                     std::string_view argument) {
  MR_ASSIGN_OR_RETURN(
      std::unique_ptr<PreparedStatement> prepared,
      conn.Prepare(std::string("SELECT ") + function + "(CAST(? AS " + type + "))"));
  MR_RETURN_IF_ERROR(prepared->BindString(1, argument));
  MR_ASSIGN_OR_RETURN(std::unique_ptr<QueryResult> result, prepared->Execute());
  MR_ASSIGN_OR_RETURN(std::unique_ptr<DataChunk> chunk, result->Next());
  if (chunk == nullptr || chunk->size() == 0 || chunk->IsNull(0, 0)) {
    return Status::Internal(std::string(function) + " returned nothing");
  }
  return chunk->GetText(0, 0);
}

// Runs `function`(sql) and parses the JSON document it returns.
Result<json> Serialize(Connection& conn, const char* function, std::string_view sql) {
  MR_ASSIGN_OR_RETURN(std::string text, CallTextFunction(conn, function, "VARCHAR", sql));
  return ParseJson(text);
}

// Renames the BASE_TABLE nodes under `node`; true when one changed.
bool RenameIn(json& node, const std::function<bool(WrittenRelation*)>& rename) {
  bool changed = false;
  if (node.is_array()) {
    for (json& child : node)
      changed |= RenameIn(child, rename);
    return changed;
  }
  if (!node.is_object()) return false;
  if (StringField(node, "type") == "BASE_TABLE") {
    WrittenRelation relation{StringField(node, "catalog_name"), StringField(node, "schema_name"),
                             StringField(node, "table_name")};
    if (rename(&relation)) {
      node["catalog_name"] = relation.catalog;
      node["schema_name"] = relation.schema;
      node["table_name"] = relation.name;
      changed = true;
    }
  }
  for (auto& [key, child] : node.items()) {
    if (child.is_structured()) changed |= RenameIn(child, rename);
  }
  return changed;
}

}  // namespace

Result<std::optional<ParsedFacts>> ParseSelect(Connection& conn, std::string_view sql) {
  MR_ASSIGN_OR_RETURN(json doc, Serialize(conn, "json_serialize_sql", sql));
  if (doc.value("error", false)) return std::optional<ParsedFacts>();
  ParsedFacts facts;
  const json statements = doc.value("statements", json::array());
  facts.statements = statements.size();
  CollectParsedTree(statements, &facts);
  return std::optional<ParsedFacts>(std::move(facts));
}

Result<std::optional<std::string>> RenameRelations(
    Connection& conn, std::string_view sql, const std::function<bool(WrittenRelation*)>& rename) {
  MR_ASSIGN_OR_RETURN(json doc, Serialize(conn, "json_serialize_sql", sql));
  if (doc.value("error", false)) return std::optional<std::string>();
  if (!RenameIn(doc["statements"], rename)) return std::optional<std::string>();
  MR_ASSIGN_OR_RETURN(std::string renamed,
                      CallTextFunction(conn, "json_deserialize_sql", "JSON", RenderJson(doc)));
  return std::optional<std::string>(std::move(renamed));
}

Result<std::optional<std::string>> RowMapWithoutFilter(Connection& conn, std::string_view select) {
  MR_ASSIGN_OR_RETURN(json doc, Serialize(conn, "json_serialize_sql", select));
  if (doc.value("error", false)) {
    return Status::InvalidArgument(StringField(doc, "error_message"));
  }
  json& statements = doc["statements"];
  if (!statements.is_array() || statements.size() != 1) {
    return Status::InvalidArgument("expected one SELECT");
  }
  json& node = statements[0]["node"];
  auto refuse = [](std::string_view what) {
    return Status::InvalidArgument("the SELECT may project, rename, cast and filter, but not " +
                                   std::string(what));
  };
  if (StringField(node, "type") != "SELECT_NODE") return refuse("combine queries");
  if (!node.value("modifiers", json::array()).empty()) {
    return refuse("use DISTINCT, ORDER BY or LIMIT");
  }
  if (!node.value("group_expressions", json::array()).empty() ||
      !node.value("group_sets", json::array()).empty() || !node["having"].is_null()) {
    return refuse("group rows");
  }
  if (!node["qualify"].is_null() || !node["sample"].is_null())
    return refuse("use QUALIFY or a sample");
  const json& cte = node.value("cte_map", json::object());
  if (!cte.value("map", json::array()).empty()) return refuse("use WITH");
  if (StringField(node.value("from_table", json::object()), "type") != "BASE_TABLE") {
    return refuse("read more than its source");
  }
  const std::string list = node.value("select_list", json::array()).dump();
  for (const char* kind : {"\"WINDOW\"", "\"SUBQUERY\""}) {
    if (list.find(std::string("\"class\":") + kind) != std::string::npos) {
      return refuse("use window functions or subqueries");
    }
  }
  if (node["where_clause"].is_null()) return std::optional<std::string>();
  node["where_clause"] = nullptr;
  MR_ASSIGN_OR_RETURN(std::string unfiltered,
                      CallTextFunction(conn, "json_deserialize_sql", "JSON", RenderJson(doc)));
  return std::optional<std::string>(std::move(unfiltered));
}

Result<PlanFacts> PlanStatement(Connection& conn, std::string_view sql) {
  MR_ASSIGN_OR_RETURN(json doc, Serialize(conn, "json_serialize_plan", sql));
  if (doc.value("error", false)) {
    // The statement binds (the caller prepared it first), so what is left is DuckDB's
    // serializer refusing an operator or a function.
    return Status::NotSupported("DuckDB cannot describe this statement's plan: " +
                                StringField(doc, "error_message"));
  }
  const json plans = doc.value("plans", json::array());
  if (plans.size() != 1) {
    return Status::InvalidArgument("expected one SQL statement, found " +
                                   std::to_string(plans.size()));
  }
  PlanFacts facts;
  facts.root = StringField(plans[0], "type");
  facts.target = TargetOf(facts.root, plans[0]);
  CollectPlan(plans[0], &facts);
  return facts;
}

}  // namespace millrace::engine
