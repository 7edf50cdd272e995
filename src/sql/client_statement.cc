#include "sql/client_statement.h"

#include <cstdio>

#include "common/strings.h"
#include "sql/lexer.h"
#include "sql/mysql_errors.h"
#include "sql/session.h"
#include "sql/statement_guard.h"

namespace millrace::sql {
namespace {

// Calls `placeholder(offset)` for each `?` of `statement` outside strings, identifiers and
// comments (the lexer keeps operator runs such as "=?" together, so each '?' in one counts).
template <typename F>
void ForEachPlaceholder(std::string_view statement, const F& placeholder) {
  for (const Token& token : SignificantTokens(statement)) {
    if (token.kind != TokenKind::kPunct) continue;
    for (size_t i = token.begin; i < token.end; ++i) {
      if (statement[i] == '?') placeholder(i);
    }
  }
}

Status CountMismatch(size_t parameters, size_t values) {
  return Status::InvalidArgument("the statement has " + std::to_string(parameters) +
                                 " parameters, " + std::to_string(values) + " values were given");
}

}  // namespace

std::string ParamValue::Literal() const {
  switch (kind) {
    case Kind::kNull:
      return "NULL";
    case Kind::kInt:
      return std::to_string(i);
    case Kind::kUInt:
      return std::to_string(u);
    case Kind::kDouble: {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.17g", d);
      return buf;
    }
    case Kind::kText: {
      // Quotes doubled; a backslash is itself (statements reach DuckDB with their literals as
      // written, and DuckDB reads no backslash escapes).
      std::string out = "'";
      for (char c : text) {
        if (c == '\'') out += c;
        out += c;
      }
      return out + "'";
    }
    case Kind::kBytes:
      return "unhex('" + HexEncode(text) + "')";
  }
  return "NULL";
}

size_t CountPlaceholders(std::string_view statement) {
  size_t count = 0;
  ForEachPlaceholder(statement, [&](size_t) { ++count; });
  return count;
}

Result<std::string> BindLiterals(std::string_view statement,
                                 const std::vector<std::string>& literals) {
  std::string out;
  size_t from = 0;
  size_t next = 0;
  ForEachPlaceholder(statement, [&](size_t at) {
    out.append(statement.substr(from, at - from));
    if (next < literals.size()) out += literals[next];
    ++next;
    from = at + 1;
  });
  if (next != literals.size()) return CountMismatch(next, literals.size());
  out.append(statement.substr(from));
  return out;
}

Result<std::unique_ptr<ClientStatement>> Session::Prepare(std::string_view statement) {
  const std::vector<Token> tokens = SignificantTokens(statement);
  if (tokens.empty()) return EmptyQueryError();
  auto prepared = std::make_unique<ClientStatement>();
  prepared->text_ = std::string(statement);
  prepared->parameter_count_ = CountPlaceholders(statement);
  // Millrace's own statements run as text at each execution.
  if (router_->FindHandler(statement, tokens) != nullptr) return prepared;
  bool calls = false;
  MR_ASSIGN_OR_RETURN(TableFunctionRegistry::Rewritten rewritten, Rewrite(statement, &calls));
  // A table function's expansion is made per execution (its files are read then).
  if (calls) return prepared;
  MR_ASSIGN_OR_RETURN(prepared->prepared_, conn_->PrepareOne(rewritten.sql));
  prepared->check_sql_ = std::move(rewritten.check_sql);
  prepared->parameter_count_ = prepared->prepared_->parameter_count();
  prepared->columns_ = prepared->prepared_->columns();
  return prepared;
}

Result<StatementResult> Session::ExecutePrepared(ClientStatement& statement,
                                                 const std::vector<ParamValue>& params) {
  if (params.size() != statement.parameter_count()) {
    return CountMismatch(statement.parameter_count(), params.size());
  }
  if (statement.prepared_ == nullptr) {
    std::vector<std::string> literals;
    for (const ParamValue& p : params)
      literals.push_back(p.Literal());
    MR_ASSIGN_OR_RETURN(std::string text, BindLiterals(statement.text_, literals));
    return Execute(text);
  }
  SetActivity(statement.text_, BoundOf(SignificantTokens(statement.text_), statement.text_));
  auto run = [&]() -> Result<StatementResult> {
    if (const std::shared_ptr<StatementGuard> guard = router_->guard(); guard != nullptr) {
      MR_RETURN_IF_ERROR(guard->CheckStatement(*this, statement.check_sql_));
    }
    engine::PreparedStatement& prepared = *statement.prepared_;
    if (prepared.kind() != engine::StatementKind::kTransaction) {
      MR_RETURN_IF_ERROR(BeginImplicitTransaction());
    }
    MR_RETURN_IF_ERROR(prepared.ClearBindings());
    for (size_t n = 0; n < params.size(); ++n) {
      const ParamValue& p = params[n];
      const size_t index = n + 1;
      switch (p.kind) {
        case ParamValue::Kind::kNull:
          MR_RETURN_IF_ERROR(prepared.BindNull(index));
          break;
        case ParamValue::Kind::kInt:
          MR_RETURN_IF_ERROR(prepared.BindInt64(index, p.i));
          break;
        case ParamValue::Kind::kUInt:
          MR_RETURN_IF_ERROR(prepared.BindUInt64(index, p.u));
          break;
        case ParamValue::Kind::kDouble:
          MR_RETURN_IF_ERROR(prepared.BindDouble(index, p.d));
          break;
        case ParamValue::Kind::kText:
          MR_RETURN_IF_ERROR(prepared.BindString(index, p.text));
          break;
        case ParamValue::Kind::kBytes:
          MR_RETURN_IF_ERROR(prepared.BindBlob(index, p.text));
          break;
      }
    }
    MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::QueryResult> rows, prepared.Execute());
    return StatementResult::Of(std::move(rows));
  };
  Result<StatementResult> result = run();
  if (statement.prepared_->kind() == engine::StatementKind::kTransaction) {
    NoteTransactionState(statement.text_, SignificantTokens(statement.text_));
  }
  return Finish(statement.text_, std::move(result), /*keep_diagnostics=*/false);
}

}  // namespace millrace::sql
