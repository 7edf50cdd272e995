#include "table/create_table.h"

#include <algorithm>
#include <array>

#include "engine/database.h"
#include "sql/lexer.h"
#include "sql/mysql_errors.h"
#include "sql/statement_support.h"
#include "table/doris_types.h"

namespace millrace::table {
namespace {

using sql::Cursor;
using sql::Token;
using sql::TokenKind;

constexpr std::array<std::string_view, 4> kStateAggregations = {"HLL_UNION", "BITMAP_UNION",
                                                                "QUANTILE_UNION", "GENERIC"};

// Doris prints names in backquotes, defaults and properties in double quotes; Doris and
// Millrace both read the doubled quote back.
std::string Backquote(std::string_view name) {
  return Quoted(name, '`');
}

std::string DoubleQuote(std::string_view text) {
  return Quoted(text, '"');
}

bool IsString(const Token* token) {
  return token != nullptr && !token->unterminated &&
         (token->kind == TokenKind::kString || token->kind == TokenKind::kQuotedIdent);
}

class Parser {
 public:
  explicit Parser(std::string_view sql)
      : sql_(sql), tokens_(sql::SignificantTokens(sql)), c_(sql, tokens_, 0) {}

  Result<CreateTable> Run() {
    CreateTable out;
    MR_RETURN_IF_ERROR(c_.Expect("CREATE"));
    if (c_.Accept("EXTERNAL")) {
      return sql::NotSupportedError("external tables",
                                    "read other systems with S3(), local() or a job");
    }
    MR_RETURN_IF_ERROR(c_.Expect("TABLE"));
    if (c_.Accept("IF")) {
      MR_RETURN_IF_ERROR(c_.Expect("NOT"));
      MR_RETURN_IF_ERROR(c_.Expect("EXISTS"));
      out.if_not_exists = true;
    }
    MR_RETURN_IF_ERROR(QualifiedName(&out.def.database, &out.def.name));
    if (c_.Accept("LIKE")) {
      std::pair<std::string, std::string> like;
      MR_RETURN_IF_ERROR(QualifiedName(&like.first, &like.second));
      MR_RETURN_IF_ERROR(c_.ExpectEnd());
      out.like = std::move(like);
      return out;
    }
    bool keys_given = false;
    if (c_.AcceptPunct("(")) MR_RETURN_IF_ERROR(Elements(&out.def));
    while (!c_.Done()) {
      const size_t start = c_.index();
      if (c_.Accept("ENGINE")) {
        c_.AcceptPunct("=");
        MR_ASSIGN_OR_RETURN(std::string engine, c_.Identifier("an engine"));
        if (!EqualsIgnoreCase(engine, "OLAP")) {
          return sql::NotSupportedError("ENGINE=" + engine, "tables here are Doris OLAP tables");
        }
      } else if (Model(&out.def.model)) {
        if (keys_given) return sql::SyntaxError("a table has one key clause");
        keys_given = true;
        MR_RETURN_IF_ERROR(c_.Expect("KEY"));
        MR_ASSIGN_OR_RETURN(out.def.keys, NameList());
      } else if (c_.Accept("COMMENT")) {
        MR_ASSIGN_OR_RETURN(out.def.comment, Text("a comment"));
      } else if (c_.Accept("AUTO") || c_.Accept("PARTITION")) {
        if (IsKeyword(tokens_[start], "AUTO")) MR_RETURN_IF_ERROR(c_.Expect("PARTITION"));
        MR_RETURN_IF_ERROR(c_.Expect("BY"));
        MR_ASSIGN_OR_RETURN(std::string kind, c_.Identifier("RANGE or LIST"));
        MR_RETURN_IF_ERROR(SkipGroup());
        if (!c_.Done() && c_.Peek()->Text(sql_) == "(") MR_RETURN_IF_ERROR(SkipGroup());
        out.def.partition = std::string(c_.TextSince(start));
      } else if (c_.Accept("DISTRIBUTED")) {
        MR_RETURN_IF_ERROR(c_.Expect("BY"));
        if (c_.Accept("HASH")) {
          MR_RETURN_IF_ERROR(SkipGroup());
        } else {
          MR_RETURN_IF_ERROR(c_.Expect("RANDOM"));
        }
        if (c_.Accept("BUCKETS") && !c_.Accept("AUTO")) {
          MR_RETURN_IF_ERROR(c_.Integer("a bucket count").status());
        }
        out.def.distribution = std::string(c_.TextSince(start));
      } else if (c_.Accept("ROLLUP")) {
        MR_RETURN_IF_ERROR(SkipGroup());
        out.def.rollup = std::string(c_.TextSince(start));
      } else if (c_.Accept("PROPERTIES")) {
        MR_ASSIGN_OR_RETURN(out.def.properties, sql::ParseProperties(c_));
      } else if (c_.AcceptPunct(";")) {
        MR_RETURN_IF_ERROR(c_.ExpectEnd());
      } else if (c_.Accept("AS")) {
        if (c_.Done()) return c_.Expected("a query");
        out.query = std::string(c_.Rest());
        break;
      } else {
        return c_.Expected(
            "ENGINE, a key, COMMENT, PARTITION BY, DISTRIBUTED BY, PROPERTIES or AS");
      }
    }
    if (out.def.columns.empty() && !out.query) return c_.Expected("'(' and the columns");
    if (!out.query) MR_RETURN_IF_ERROR(CheckKeys(&out.def, keys_given));
    return out;
  }

 private:
  bool IsKeyword(const Token& token, std::string_view keyword) const {
    return sql::IsKeyword(sql_, token, keyword);
  }

  Status QualifiedName(std::string* database, std::string* name) {
    MR_ASSIGN_OR_RETURN(*name, c_.Identifier("a table name"));
    if (c_.AcceptPunct(".")) {
      *database = std::move(*name);
      MR_ASSIGN_OR_RETURN(*name, c_.Identifier("a table name"));
    }
    return Status::Ok();
  }

  bool Model(TableModel* model) {
    const Token* token = c_.Peek();
    if (token == nullptr || token->kind != TokenKind::kWord) return false;
    std::optional<TableModel> named = ModelNamed(token->Text(sql_));
    if (!named) return false;
    c_.Skip();
    *model = *named;
    return true;
  }

  Result<std::string> Text(std::string_view what) { return c_.Quoted(what); }

  Result<std::vector<std::string>> NameList() {
    MR_RETURN_IF_ERROR(c_.ExpectPunct("("));
    std::vector<std::string> names;
    do {
      MR_ASSIGN_OR_RETURN(std::string name, c_.Identifier("a column name"));
      names.push_back(std::move(name));
    } while (c_.AcceptPunct(","));
    MR_RETURN_IF_ERROR(c_.ExpectPunct(")"));
    return names;
  }

  // Skips a parenthesized group, nested groups included. Doris writes a half-open range of
  // partition values as [(from), (to)): '[' opens a group that ')' may close.
  Status SkipGroup() {
    MR_RETURN_IF_ERROR(c_.ExpectPunct("("));
    for (int depth = 1; depth > 0; c_.Skip()) {
      if (c_.Done()) return c_.Expected("')'");
      const std::string_view text = c_.Peek()->Text(sql_);
      if (c_.Peek()->kind != TokenKind::kPunct) continue;
      if (text == "(" || text == "[") ++depth;
      if (text == ")" || text == "]") --depth;
    }
    return Status::Ok();
  }

  // The column and index definitions after '(' up to and including ')'.
  Status Elements(TableDef* def) {
    while (true) {
      if (c_.Accept("INDEX")) {
        const size_t start = c_.index() - 1;
        MR_RETURN_IF_ERROR(c_.Identifier("an index name").status());
        MR_RETURN_IF_ERROR(SkipGroup());
        while (!c_.Done() && c_.Peek()->Text(sql_) != "," && c_.Peek()->Text(sql_) != ")")
          c_.Skip();
        def->indexes.emplace_back(c_.TextSince(start));
      } else {
        MR_ASSIGN_OR_RETURN(Column column, ColumnDefinition(*def));
        def->columns.push_back(std::move(column));
      }
      if (c_.AcceptPunct(")")) return Status::Ok();
      MR_RETURN_IF_ERROR(c_.ExpectPunct(","));
      // Doris takes a trailing comma before the closing parenthesis.
      if (c_.AcceptPunct(")")) return Status::Ok();
    }
  }

  Result<Column> ColumnDefinition(const TableDef& def) {
    Column column;
    MR_ASSIGN_OR_RETURN(column.name, c_.Identifier("a column name"));
    if (def.FindColumn(column.name) != nullptr) {
      return sql::TableDefinitionError("duplicate column " + column.name);
    }
    MR_ASSIGN_OR_RETURN(MappedType type, ParseDorisType(c_));
    column.doris_type = std::move(type.doris);
    column.duckdb_type = std::move(type.duckdb);
    while (!c_.Done()) {
      const Token& token = *c_.Peek();
      if (token.kind == TokenKind::kPunct) break;
      if (c_.Accept("KEY")) continue;
      if (Aggregate(&column.aggregation)) continue;
      for (std::string_view state : kStateAggregations) {
        if (IsKeyword(token, state)) {
          return sql::NotSupportedError(std::string(state) + " columns",
                                        "their types have no DuckDB equivalent");
        }
      }
      if (c_.Accept("NULL")) {
        column.nullable = true;
      } else if (c_.Accept("NOT")) {
        MR_RETURN_IF_ERROR(c_.Expect("NULL"));
        column.nullable = false;
      } else if (c_.Accept("DEFAULT")) {
        MR_RETURN_IF_ERROR(Default(&column));
      } else if (c_.Accept("COMMENT")) {
        MR_ASSIGN_OR_RETURN(column.comment, Text("a comment"));
      } else if (IsKeyword(token, "AUTO_INCREMENT")) {
        return sql::NotSupportedError("AUTO_INCREMENT", "give the column its values in the load");
      } else if (IsKeyword(token, "ON")) {
        return sql::NotSupportedError("ON UPDATE", "set the column in the load or the UPDATE");
      } else {
        return c_.Expected("NULL, NOT NULL, DEFAULT, COMMENT, ',' or ')'");
      }
    }
    return column;
  }

  bool Aggregate(Aggregation* aggregation) {
    const Token* token = c_.Peek();
    if (token == nullptr || token->kind != TokenKind::kWord) return false;
    std::optional<Aggregation> named = AggregationNamed(token->Text(sql_));
    if (!named || *named == Aggregation::kNone) return false;
    c_.Skip();
    *aggregation = *named;
    return true;
  }

  Status Default(Column* column) {
    const Token* token = c_.Peek();
    if (token == nullptr) return c_.Expected("a default value");
    if (IsString(token)) {
      const std::string value = sql::Unquote(sql_, *token);
      c_.Skip();
      column->default_doris = DoubleQuote(value);
      column->default_sql = engine::QuoteLiteral(value);
      return Status::Ok();
    }
    std::string sign;
    if (token->kind == TokenKind::kPunct && token->Text(sql_) == "-") {
      sign = "-";
      c_.Skip();
      token = c_.Peek();
    }
    if (token != nullptr && token->kind == TokenKind::kNumber) {
      const std::string number = sign + std::string(token->Text(sql_));
      c_.Skip();
      column->default_doris = DoubleQuote(number);
      column->default_sql = number;
      return Status::Ok();
    }
    if (!sign.empty() || token == nullptr || token->kind != TokenKind::kWord) {
      return c_.Expected("a default value");
    }
    const std::string word = ToUpper(token->Text(sql_));
    c_.Skip();
    if (word == "NULL") {
      column->default_doris = "NULL";
      column->default_sql = "NULL";
    } else if (word == "CURRENT_TIMESTAMP" || word == "NOW") {
      // CURRENT_TIMESTAMP(3), NOW(): the precision is the column's.
      if (c_.AcceptPunct("(")) {
        if (!c_.AcceptPunct(")")) {
          MR_RETURN_IF_ERROR(c_.Integer("a precision").status());
          MR_RETURN_IF_ERROR(c_.ExpectPunct(")"));
        }
      }
      column->default_doris = "CURRENT_TIMESTAMP";
      column->default_sql = "CAST(current_localtimestamp() AS TIMESTAMP)";
    } else if (word == "CURRENT_DATE") {
      column->default_doris = "CURRENT_DATE";
      column->default_sql = "current_date";
    } else if (word == "PI") {
      column->default_doris = "PI";
      column->default_sql = "pi()";
    } else if (word == "E") {
      column->default_doris = "E";
      column->default_sql = "exp(1)";
    } else {
      return sql::NotSupportedError("DEFAULT " + word, "no such default in Millrace");
    }
    return Status::Ok();
  }

  // Checks the key clause against the columns; without one, Doris's default sort key.
  Status CheckKeys(TableDef* def, bool keys_given) {
    if (!keys_given) {
      for (const Column& column : def->columns) {
        if (def->keys.size() == 3) break;
        def->keys.push_back(column.name);
        if (column.duckdb_type == "VARCHAR") break;
      }
    }
    for (size_t i = 0; i < def->keys.size(); ++i) {
      const Column* column = def->FindColumn(def->keys[i]);
      if (column == nullptr) {
        return sql::TableDefinitionError("key column " + def->keys[i] + " is not a column of " +
                                         def->name);
      }
      if (i >= def->columns.size() || !EqualsIgnoreCase(def->columns[i].name, def->keys[i])) {
        return sql::TableDefinitionError(
            "key columns must be the first columns, in order: " + def->keys[i] + " is not column " +
            std::to_string(i + 1) + " of " + def->name);
      }
      def->keys[i] = column->name;
    }
    for (const Column& column : def->columns) {
      const bool key = def->IsKey(column.name);
      const bool aggregated = column.aggregation != Aggregation::kNone;
      if (def->model == TableModel::kAggregate) {
        if (key && aggregated) {
          return sql::TableDefinitionError("key column " + column.name +
                                           " cannot have an aggregation function");
        }
        if (!key && !aggregated) {
          return sql::TableDefinitionError(
              "value column " + column.name +
              " of an AGGREGATE KEY table needs its function (SUM, MAX, MIN, REPLACE or "
              "REPLACE_IF_NOT_NULL)");
        }
      } else if (aggregated) {
        return sql::TableDefinitionError("column " + column.name +
                                         " has an aggregation function (" +
                                         std::string(AggregationName(column.aggregation)) +
                                         "), which only AGGREGATE KEY "
                                         "tables take");
      }
      if (key &&
          (column.duckdb_type == "JSON" || column.duckdb_type.ends_with("]") ||
           column.duckdb_type.starts_with("MAP") || column.duckdb_type.starts_with("STRUCT") ||
           column.duckdb_type == "FLOAT" || column.duckdb_type == "DOUBLE")) {
        return sql::TableDefinitionError("key column " + column.name + " cannot be of type " +
                                         column.doris_type);
      }
    }
    return Status::Ok();
  }

  std::string_view sql_;
  std::vector<Token> tokens_;
  Cursor c_;
};

// Words of Doris's CREATE TABLE that DuckDB's does not take.
constexpr std::array<std::string_view, 23> kDorisWords = {
    "ENGINE",     "DUPLICATE", "AGGREGATE",      "DISTRIBUTED", "PROPERTIES",
    "ROLLUP",     "BUCKETS",   "STRING",         "LARGEINT",    "DATETIME",
    "DATETIMEV2", "DATEV2",    "DECIMALV3",      "JSONB",       "VARIANT",
    "BITMAP",     "HLL",       "QUANTILE_STATE", "AGG_STATE",   "REPLACE_IF_NOT_NULL",
    "IPV4",       "IPV6",      "EXTERNAL"};

}  // namespace

Result<CreateTable> ParseCreateTable(std::string_view sql) {
  return Parser(sql).Run();
}

bool IsDorisCreateTable(std::string_view sql) {
  const std::vector<Token> tokens = sql::SignificantTokens(sql);
  // CREATE TABLE [IF NOT EXISTS] [db.]t LIKE ...: DuckDB has no LIKE.
  size_t at = 2;
  if (at + 2 < tokens.size() && sql::IsKeyword(sql, tokens[at], "IF")) at += 3;
  if (at < tokens.size() && sql::IsIdentifier(tokens[at])) ++at;
  if (at + 1 < tokens.size() && tokens[at].Text(sql) == ".") at += 2;
  if (at < tokens.size() && sql::IsKeyword(sql, tokens[at], "LIKE")) return true;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& token = tokens[i];
    if (token.kind == TokenKind::kBacktickIdent) return true;
    if (token.kind != TokenKind::kWord) continue;
    for (std::string_view word : kDorisWords) {
      if (sql::IsKeyword(sql, token, word)) return true;
    }
    // UNIQUE KEY (...) (DuckDB writes UNIQUE (...)), ARRAY<...>, MAP<...>, STRUCT<...>.
    const bool next_is = i + 1 < tokens.size();
    if (next_is && sql::IsKeyword(sql, token, "UNIQUE") &&
        sql::IsKeyword(sql, tokens[i + 1], "KEY")) {
      return true;
    }
    if (next_is && tokens[i + 1].Text(sql) == "<" &&
        (sql::IsKeyword(sql, token, "ARRAY") || sql::IsKeyword(sql, token, "MAP") ||
         sql::IsKeyword(sql, token, "STRUCT"))) {
      return true;
    }
  }
  return false;
}

std::string DuckDbCreateTable(const TableDef& def, bool if_not_exists) {
  std::string sql = std::string("CREATE TABLE ") + (if_not_exists ? "IF NOT EXISTS " : "");
  if (!def.database.empty()) sql += engine::QuoteIdentifier(def.database) + ".";
  sql += engine::QuoteIdentifier(def.name) + " (";
  for (size_t i = 0; i < def.columns.size(); ++i) {
    const Column& column = def.columns[i];
    sql += (i > 0 ? ", " : "") + engine::QuoteIdentifier(column.name) + " " + column.duckdb_type;
    if (!column.nullable) sql += " NOT NULL";
    if (column.default_sql) sql += " DEFAULT " + *column.default_sql;
  }
  if (def.model != TableModel::kDuplicate) {
    sql += ", PRIMARY KEY (";
    for (size_t i = 0; i < def.keys.size(); ++i)
      sql += (i > 0 ? ", " : "") + engine::QuoteIdentifier(def.keys[i]);
    sql += ")";
  }
  return sql + ")";
}

std::string ShowCreateTable(const TableDef& def) {
  std::string out = "CREATE TABLE " + Backquote(def.name) + " (\n";
  std::vector<std::string> items;
  for (const Column& column : def.columns) {
    std::string item = "  " + Backquote(column.name) + " " + column.doris_type;
    if (column.aggregation != Aggregation::kNone) {
      item += " " + std::string(AggregationName(column.aggregation));
    }
    item += column.nullable ? " NULL" : " NOT NULL";
    if (column.default_doris) item += " DEFAULT " + *column.default_doris;
    if (!column.comment.empty()) item += " COMMENT " + engine::QuoteLiteral(column.comment);
    items.push_back(std::move(item));
  }
  for (const std::string& index : def.indexes)
    items.push_back("  " + index);
  for (size_t i = 0; i < items.size(); ++i)
    out += items[i] + (i + 1 < items.size() ? ",\n" : "\n");
  out += ") ENGINE=OLAP\n" + std::string(ModelName(def.model)) + " KEY(";
  for (size_t i = 0; i < def.keys.size(); ++i)
    out += (i > 0 ? ", " : "") + Backquote(def.keys[i]);
  out += ")";
  if (!def.comment.empty()) out += "\nCOMMENT " + engine::QuoteLiteral(def.comment);
  for (const std::string* clause : {&def.partition, &def.distribution, &def.rollup}) {
    if (!clause->empty()) out += "\n" + *clause;
  }
  if (!def.properties.empty()) {
    out += "\nPROPERTIES (";
    for (size_t i = 0; i < def.properties.size(); ++i) {
      out += std::string(i > 0 ? ",\n" : "\n") + DoubleQuote(def.properties[i].first) + " = " +
             DoubleQuote(def.properties[i].second);
    }
    out += "\n)";
  }
  return out + ";";
}

}  // namespace millrace::table
