#include "table/doris_types.h"

#include <array>

#include "engine/database.h"
#include "sql/mysql_errors.h"

namespace millrace::table {
namespace {

struct Simple {
  std::string_view name;   // as written, any case
  std::string_view doris;  // as Doris prints it
  std::string_view duckdb;
};

constexpr std::array<Simple, 17> kSimple = {{
    {"TINYINT", "tinyint", "TINYINT"},
    {"SMALLINT", "smallint", "SMALLINT"},
    {"INT", "int", "INTEGER"},
    {"INTEGER", "int", "INTEGER"},
    {"BIGINT", "bigint", "BIGINT"},
    {"LARGEINT", "largeint", "HUGEINT"},
    {"FLOAT", "float", "FLOAT"},
    {"DOUBLE", "double", "DOUBLE"},
    {"DATE", "date", "DATE"},
    {"DATEV2", "date", "DATE"},
    {"BOOLEAN", "boolean", "BOOLEAN"},
    {"BOOL", "boolean", "BOOLEAN"},
    {"STRING", "text", "VARCHAR"},
    {"TEXT", "text", "VARCHAR"},
    {"JSON", "json", "JSON"},
    {"JSONB", "json", "JSON"},
    {"VARIANT", "variant", "JSON"},
}};

constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kUnmapped = {{
    {"BITMAP", "DuckDB has no bitmap type; keep the ids in an ARRAY<BIGINT> column"},
    {"HLL", "DuckDB has no HyperLogLog state type; store the values and use approx_count_distinct"},
    {"QUANTILE_STATE",
     "DuckDB has no quantile state type; store the values and use "
     "approx_quantile"},
    {"AGG_STATE", "DuckDB has no aggregate state type"},
    {"IPV4", "DuckDB has no IP address type here; use VARCHAR"},
    {"IPV6", "DuckDB has no IP address type here; use VARCHAR"},
}};

// Reads types at a cursor. '>>' closing two nested types is one token to the lexer: the
// second '>' is remembered in pending_close_.
class TypeParser {
 public:
  explicit TypeParser(sql::Cursor& c) : c_(c) {}

  Result<MappedType> Parse() {
    MR_ASSIGN_OR_RETURN(MappedType type, Type());
    if (pending_close_ > 0) return c_.Expected("a column type, not '>'");
    return type;
  }

 private:
  Result<MappedType> Type() {
    const sql::Token* token = c_.Peek();
    if (token == nullptr || token->kind != sql::TokenKind::kWord) return c_.Expected("a type");
    const std::string name = ToUpper(token->Text(c_.sql()));
    c_.Skip();
    for (const Simple& simple : kSimple) {
      if (name == simple.name)
        return MappedType{std::string(simple.doris), std::string(simple.duckdb)};
    }
    for (const auto& [unmapped, why] : kUnmapped) {
      if (name == unmapped) return sql::NotSupportedError(name + " columns", why);
    }
    if (name == "CHAR" || name == "VARCHAR") {
      std::string doris = ToLower(name);
      if (c_.AcceptPunct("(")) {
        MR_ASSIGN_OR_RETURN(int64_t length, c_.Integer("a length"));
        MR_RETURN_IF_ERROR(c_.ExpectPunct(")"));
        doris += "(" + std::to_string(length) + ")";
      }
      return MappedType{doris, "VARCHAR"};
    }
    if (name == "DECIMAL" || name == "DECIMALV2" || name == "DECIMALV3") {
      int64_t precision = 9;
      int64_t scale = 0;
      if (c_.AcceptPunct("(")) {
        MR_ASSIGN_OR_RETURN(precision, c_.Integer("a precision"));
        if (c_.AcceptPunct(",")) {
          MR_ASSIGN_OR_RETURN(scale, c_.Integer("a scale"));
        }
        MR_RETURN_IF_ERROR(c_.ExpectPunct(")"));
      }
      if (precision < 1 || precision > 38) {
        return sql::NotSupportedError(
            "DECIMAL(" + std::to_string(precision) + ")",
            "DuckDB's DECIMAL holds 1 to 38 digits; use DOUBLE or a narrower DECIMAL");
      }
      if (scale > precision) {
        return sql::TableDefinitionError("DECIMAL(" + std::to_string(precision) + "," +
                                         std::to_string(scale) +
                                         "): the scale is larger than the precision");
      }
      const std::string args = "(" + std::to_string(precision) + "," + std::to_string(scale) + ")";
      return MappedType{"decimal" + args, "DECIMAL" + args};
    }
    if (name == "DATETIME" || name == "DATETIMEV2") {
      std::string doris = "datetime";
      if (c_.AcceptPunct("(")) {
        MR_ASSIGN_OR_RETURN(int64_t precision, c_.Integer("a precision"));
        MR_RETURN_IF_ERROR(c_.ExpectPunct(")"));
        if (precision > 6) {
          return sql::TableDefinitionError("DATETIME(" + std::to_string(precision) +
                                           "): the precision is at most 6 (microseconds)");
        }
        if (precision > 0) doris += "(" + std::to_string(precision) + ")";
      }
      return MappedType{doris, "TIMESTAMP"};
    }
    if (name == "ARRAY") {
      MR_RETURN_IF_ERROR(Open());
      MR_ASSIGN_OR_RETURN(MappedType element, Type());
      MR_RETURN_IF_ERROR(Close());
      return MappedType{"array<" + element.doris + ">", element.duckdb + "[]"};
    }
    if (name == "MAP") {
      MR_RETURN_IF_ERROR(Open());
      MR_ASSIGN_OR_RETURN(MappedType key, Type());
      MR_RETURN_IF_ERROR(c_.ExpectPunct(","));
      MR_ASSIGN_OR_RETURN(MappedType value, Type());
      MR_RETURN_IF_ERROR(Close());
      return MappedType{"map<" + key.doris + "," + value.doris + ">",
                        "MAP(" + key.duckdb + ", " + value.duckdb + ")"};
    }
    if (name == "STRUCT") {
      MR_RETURN_IF_ERROR(Open());
      std::string doris = "struct<";
      std::string duckdb = "STRUCT(";
      for (bool first = true;; first = false) {
        MR_ASSIGN_OR_RETURN(std::string field, c_.Identifier("a field name"));
        MR_RETURN_IF_ERROR(c_.ExpectPunct(":"));
        MR_ASSIGN_OR_RETURN(MappedType type, Type());
        std::string comment;
        if (c_.Accept("COMMENT")) {
          MR_ASSIGN_OR_RETURN(comment, c_.String("a comment"));
        }
        doris += std::string(first ? "" : ",") + field + ":" + type.doris;
        if (!comment.empty()) doris += " COMMENT " + engine::QuoteLiteral(comment);
        duckdb +=
            std::string(first ? "" : ", ") + engine::QuoteIdentifier(field) + " " + type.duckdb;
        if (pending_close_ > 0 || !c_.AcceptPunct(",")) break;
      }
      MR_RETURN_IF_ERROR(Close());
      return MappedType{doris + ">", duckdb + ")"};
    }
    return sql::SyntaxError("unknown column type " + name);
  }

  Status Open() { return c_.ExpectPunct("<"); }

  Status Close() {
    if (pending_close_ > 0) {
      --pending_close_;
      return Status::Ok();
    }
    const sql::Token* token = c_.Peek();
    if (token != nullptr && token->kind == sql::TokenKind::kPunct) {
      const std::string_view text = token->Text(c_.sql());
      if (!text.empty() && text.find_first_not_of('>') == std::string_view::npos) {
        c_.Skip();
        pending_close_ = static_cast<int>(text.size()) - 1;
        return Status::Ok();
      }
    }
    return c_.Expected("'>'");
  }

  sql::Cursor& c_;
  int pending_close_ = 0;
};

}  // namespace

std::string DorisTypeOf(std::string_view duckdb_type) {
  if (duckdb_type.ends_with("[]")) {
    return "array<" + DorisTypeOf(duckdb_type.substr(0, duckdb_type.size() - 2)) + ">";
  }
  if (duckdb_type.starts_with("DECIMAL")) return ToLower(duckdb_type);
  if (duckdb_type == "VARCHAR") return "text";
  if (duckdb_type == "INTEGER") return "int";
  if (duckdb_type == "HUGEINT") return "largeint";
  if (duckdb_type == "TIMESTAMP") return "datetime(6)";
  return ToLower(duckdb_type);
}

Result<MappedType> ParseDorisType(sql::Cursor& cursor) {
  return TypeParser(cursor).Parse();
}

}  // namespace millrace::table
