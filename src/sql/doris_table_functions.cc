#include "sql/doris_table_functions.h"

#include "engine/database.h"
#include "sql/lexer.h"

namespace millrace::sql {
namespace {

bool IsQuotedString(std::string_view sql, const Token& token) {
  if (token.kind == TokenKind::kQuotedIdent) return true;
  return token.kind == TokenKind::kString && token.Text(sql).front() == '\'';
}

std::string QuotedValue(std::string_view sql, const Token& token) {
  return ResolveBackslashes(Unquote(sql, token));
}

class CallParser {
 public:
  CallParser(std::string_view sql, const std::vector<Token>& tokens, std::string name)
      : sql_(sql), tokens_(tokens), name_(std::move(name)) {}

  // `i` indexes the token after '('. On success, `*i` indexes the closing ')'.
  Result<DorisArgs> Parse(size_t* i) {
    DorisArgs args;
    while (true) {
      if (*i >= tokens_.size()) return Error(sql_.size(), "unterminated argument list");
      const Token& key = tokens_[*i];
      if (!IsQuotedString(sql_, key) || key.unterminated) {
        return Error(key.begin, "expected a quoted parameter name");
      }
      std::string name = ToLower(Unquote(sql_, key));
      if (++*i >= tokens_.size() || tokens_[*i].Text(sql_) != "=") {
        return Error(*i < tokens_.size() ? tokens_[*i].begin : sql_.size(),
                     "expected '=' after \"" + name + "\"");
      }
      MR_ASSIGN_OR_RETURN(std::string value, Value(i, name));
      if (!args.emplace(name, std::move(value)).second) {
        return Error(key.begin, "parameter \"" + name + "\" given twice");
      }
      if (++*i >= tokens_.size()) return Error(sql_.size(), "unterminated argument list");
      const std::string_view separator = tokens_[*i].Text(sql_);
      if (separator == ")") return args;
      if (separator != ",") return Error(tokens_[*i].begin, "expected ',' or ')'");
      ++*i;
    }
  }

 private:
  // `*i` indexes the '='; on success it indexes the value's last token.
  Result<std::string> Value(size_t* i, const std::string& name) {
    if (++*i >= tokens_.size()) return Error(sql_.size(), "missing value of \"" + name + "\"");
    const Token& token = tokens_[*i];
    if (IsQuotedString(sql_, token) && !token.unterminated) return QuotedValue(sql_, token);
    std::string sign;
    const Token* number = &token;
    if ((token.Text(sql_) == "-" || token.Text(sql_) == "+") && *i + 1 < tokens_.size()) {
      sign = std::string(token.Text(sql_));
      number = &tokens_[++*i];
    }
    if (number->kind != TokenKind::kNumber) {
      return Error(token.begin,
                   "expected a quoted string or a number as the value of \"" + name + "\"");
    }
    return (sign == "-" ? sign : "") + std::string(number->Text(sql_));
  }

  Status Error(size_t offset, const std::string& what) const {
    return Status::InvalidArgument(name_ + "(): " + what + " at offset " + std::to_string(offset));
  }

  std::string_view sql_;
  const std::vector<Token>& tokens_;
  std::string name_;
};

}  // namespace

Result<Expansion> NamedParameterExpander::Expand(const DorisArgs& args) {
  std::string sql = duckdb_name_ + "(";
  bool first = true;
  for (const auto& [key, value] : args) {
    if (!first) sql += ", ";
    first = false;
    sql += engine::QuoteIdentifier(key) + " := " + engine::QuoteLiteral(value);
  }
  sql += ")";
  return Expansion{std::move(sql), nullptr};
}

Result<std::vector<DorisCall>> FindDorisCalls(
    std::string_view sql, const std::function<bool(std::string_view)>& is_function) {
  const std::vector<Token> tokens = SignificantTokens(sql);
  std::vector<DorisCall> calls;
  for (size_t i = 0; i + 2 < tokens.size(); ++i) {
    const Token& name = tokens[i];
    if (name.kind != TokenKind::kWord || tokens[i + 1].Text(sql) != "(") continue;
    if (i > 0 && tokens[i - 1].Text(sql) == ".") continue;
    if (!IsQuotedString(sql, tokens[i + 2])) continue;
    std::string lower = ToLower(name.Text(sql));
    if (!is_function(lower)) continue;
    size_t j = i + 2;
    MR_ASSIGN_OR_RETURN(DorisArgs args, CallParser(sql, tokens, lower).Parse(&j));
    calls.push_back(DorisCall{std::move(lower), name.begin, tokens[j].end, std::move(args)});
    i = j;
  }
  return calls;
}

void TableFunctionRegistry::Register(std::string_view name,
                                     std::shared_ptr<TableFunctionExpander> expander) {
  MutexLock lock(&mu_);
  expanders_[ToLower(name)] = std::move(expander);
}

std::shared_ptr<TableFunctionExpander> TableFunctionRegistry::Find(std::string_view name) const {
  MutexLock lock(&mu_);
  auto it = expanders_.find(ToLower(name));
  return it == expanders_.end() ? nullptr : it->second;
}

Result<std::string> StandInFor(engine::Connection& conn, std::string_view relation_sql) {
  MR_ASSIGN_OR_RETURN(auto described,
                      engine::QueryTextRows(
                          conn, "DESCRIBE SELECT * FROM " + std::string(relation_sql) + " AS _r"));
  std::string columns;
  for (const auto& row : described) {
    if (row.size() < 2) return Status::Internal("unexpected DESCRIBE output");
    if (!columns.empty()) columns += ", ";
    columns += "CAST(NULL AS " + row[1] + ") AS " + engine::QuoteIdentifier(row[0]);
  }
  if (columns.empty()) return Status::Internal("DESCRIBE returned no column");
  return "(SELECT " + columns + " LIMIT 0)";
}

Result<TableFunctionRegistry::Rewritten> TableFunctionRegistry::Expand(
    std::string_view sql, const BeforeCall& before_call) const {
  MR_ASSIGN_OR_RETURN(
      std::vector<DorisCall> calls,
      FindDorisCalls(sql, [this](std::string_view name) { return Find(name) != nullptr; }));
  Rewritten out;
  size_t copied = 0;
  for (DorisCall& call : calls) {
    std::shared_ptr<TableFunctionExpander> expander = Find(call.name);
    if (expander == nullptr) {
      return Status::NotFound("table function " + call.name + "() is no longer registered");
    }
    if (before_call) MR_RETURN_IF_ERROR(before_call(call.name));
    // The expander's message already names the function and the offending parameter.
    MR_ASSIGN_OR_RETURN(Expansion expansion, expander->Expand(call.args));
    const std::string_view between = sql.substr(copied, call.begin - copied);
    out.sql.append(between);
    out.sql.append(expansion.sql);
    out.check_sql.append(between);
    out.check_sql.append(expansion.stand_in.empty() ? expansion.sql : expansion.stand_in);
    copied = call.end;
    if (expansion.resources != nullptr) out.resources.push_back(std::move(expansion.resources));
  }
  out.sql.append(sql.substr(copied));
  out.check_sql.append(sql.substr(copied));
  return out;
}

}  // namespace millrace::sql
