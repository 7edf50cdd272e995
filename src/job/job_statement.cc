#include "job/job_statement.h"

#include <functional>

#include "common/strings.h"
#include "load/file_params.h"
#include "sql/lexer.h"

namespace millrace::job {
namespace {

using sql::Token;
using sql::TokenKind;

// A cursor over the significant tokens of one statement.
class Parser {
 public:
  Parser(std::string_view sql, std::string_view what)
      : sql_(sql), tokens_(sql::SignificantTokens(sql)), what_(what) {}

  bool AtEnd() const { return pos_ >= tokens_.size() || IsPunct(";"); }
  const Token* Peek() const { return pos_ < tokens_.size() ? &tokens_[pos_] : nullptr; }
  size_t Offset() const { return pos_ < tokens_.size() ? tokens_[pos_].begin : sql_.size(); }

  bool IsKeyword(std::string_view keyword) const {
    return Peek() != nullptr && sql::IsKeyword(sql_, *Peek(), keyword);
  }
  bool IsPunct(std::string_view punct) const {
    return Peek() != nullptr && Peek()->kind == TokenKind::kPunct && Peek()->Text(sql_) == punct;
  }
  bool AcceptKeyword(std::string_view keyword) {
    if (!IsKeyword(keyword)) return false;
    ++pos_;
    return true;
  }
  bool AcceptPunct(std::string_view punct) {
    if (!IsPunct(punct)) return false;
    ++pos_;
    return true;
  }

  Status Error(std::string_view expected) const {
    std::string found = Peek() == nullptr ? "the end of the statement"
                                          : "'" + std::string(Peek()->Text(sql_)) + "'";
    return Status::InvalidArgument(std::string(what_) + ": expected " + std::string(expected) +
                                   " at offset " + std::to_string(Offset()) + ", found " + found);
  }

  Status ExpectKeyword(std::string_view keyword) {
    return AcceptKeyword(keyword) ? Status::Ok() : Error(keyword);
  }
  Status ExpectPunct(std::string_view punct) {
    return AcceptPunct(punct) ? Status::Ok() : Error("'" + std::string(punct) + "'");
  }

  Result<std::string> Identifier(std::string_view what) {
    if (Peek() == nullptr || !sql::IsIdentifier(*Peek())) return Error(what);
    return sql::IdentifierValue(sql_, tokens_[pos_++]);
  }

  // A quoted string, or (when allow_number) a bare number.
  Result<std::string> Literal(std::string_view what, bool allow_number) {
    const Token* t = Peek();
    if (t == nullptr) return Error(what);
    if (t->kind == TokenKind::kString || t->kind == TokenKind::kQuotedIdent) {
      ++pos_;
      return sql::Unquote(sql_, *t);
    }
    if (allow_number && t->kind == TokenKind::kNumber) {
      ++pos_;
      return std::string(t->Text(sql_));
    }
    return Error(what);
  }

  // PROPERTIES ( "k" = "v" [, ...] )
  Status Properties(PropertyMap* out) {
    MR_RETURN_IF_ERROR(ExpectPunct("("));
    while (!AcceptPunct(")")) {
      if (!out->empty()) MR_RETURN_IF_ERROR(ExpectPunct(","));
      MR_ASSIGN_OR_RETURN(std::string key, Literal("a quoted property name", false));
      MR_RETURN_IF_ERROR(ExpectPunct("="));
      MR_ASSIGN_OR_RETURN(std::string value, Literal("a quoted value or a number", true));
      if (!out->emplace(key, value).second) {
        return Status::InvalidArgument(std::string(what_) + ": property \"" + key +
                                       "\" is given twice");
      }
    }
    return Status::Ok();
  }

  // WHERE jobname = 'name'
  Result<std::string> WhereJobName() {
    MR_RETURN_IF_ERROR(ExpectKeyword("WHERE"));
    MR_RETURN_IF_ERROR(ExpectKeyword("jobname"));
    MR_RETURN_IF_ERROR(ExpectPunct("="));
    return Literal("a quoted job name", false);
  }

  // The rest of the statement from the current token, without a trailing ';'.
  std::string Rest() const {
    std::string_view rest = sql_.substr(Offset());
    while (!rest.empty() &&
           (rest.back() == ';' || std::isspace(static_cast<unsigned char>(rest.back())))) {
      rest.remove_suffix(1);
    }
    return std::string(rest);
  }

  Status ExpectEnd() { return AtEnd() ? Status::Ok() : Error("the end of the statement"); }

 private:
  std::string_view sql_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  std::string_view what_;
};

Result<JobStatement> ParseCreate(std::string_view text) {
  Parser p(text, "CREATE JOB");
  MR_RETURN_IF_ERROR(p.ExpectKeyword("CREATE"));
  MR_RETURN_IF_ERROR(p.ExpectKeyword("JOB"));
  CreateJobStatement stmt;
  MR_ASSIGN_OR_RETURN(stmt.name, p.Identifier("a job name"));
  bool have_properties = false;
  if (p.AcceptKeyword("PROPERTIES")) {
    MR_RETURN_IF_ERROR(p.Properties(&stmt.properties));
    have_properties = true;
  }
  if (!p.AcceptKeyword("ON")) return p.Error("ON STREAMING");
  MR_RETURN_IF_ERROR(p.ExpectKeyword("STREAMING"));
  if (!have_properties && p.AcceptKeyword("PROPERTIES")) {
    MR_RETURN_IF_ERROR(p.Properties(&stmt.properties));
  }
  if (p.AcceptKeyword("COMMENT")) {
    MR_ASSIGN_OR_RETURN(stmt.comment, p.Literal("a quoted comment", false));
  }
  if (!p.IsKeyword("FROM")) {
    MR_RETURN_IF_ERROR(p.ExpectKeyword("DO"));
    if (!p.IsKeyword("INSERT")) return p.Error("INSERT INTO ... SELECT");
  }
  stmt.insert_sql = p.Rest();
  return JobStatement(std::move(stmt));
}

Result<JobStatement> ParseControl(std::string_view text, JobControl action, std::string_view verb) {
  const std::string what = std::string(verb) + " JOB";
  Parser p(text, what);
  MR_RETURN_IF_ERROR(p.ExpectKeyword(verb));
  MR_RETURN_IF_ERROR(p.ExpectKeyword("JOB"));
  ControlJobStatement stmt{action, "", false};
  if (action == JobControl::kDrop && p.AcceptKeyword("IF")) {
    MR_RETURN_IF_ERROR(p.ExpectKeyword("EXISTS"));
    stmt.if_exists = true;
  }
  MR_ASSIGN_OR_RETURN(stmt.name, p.WhereJobName());
  MR_RETURN_IF_ERROR(p.ExpectEnd());
  return JobStatement(std::move(stmt));
}

Result<JobStatement> ParseAlter(std::string_view text) {
  Parser p(text, "ALTER JOB");
  MR_RETURN_IF_ERROR(p.ExpectKeyword("ALTER"));
  MR_RETURN_IF_ERROR(p.ExpectKeyword("JOB"));
  AlterJobStatement stmt;
  MR_ASSIGN_OR_RETURN(stmt.name, p.Identifier("a job name"));
  if (p.AcceptKeyword("RETRY")) {
    if (p.AcceptKeyword("ALL")) {
      stmt.retry_all = true;
    } else {
      MR_RETURN_IF_ERROR(p.ExpectKeyword("FILE"));
      do {
        MR_ASSIGN_OR_RETURN(std::string key, p.Literal("a quoted file name", false));
        stmt.retry_files.push_back(std::move(key));
      } while (p.AcceptPunct(","));
    }
    MR_RETURN_IF_ERROR(p.ExpectEnd());
    return JobStatement(std::move(stmt));
  }
  if (p.AcceptKeyword("PROPERTIES")) MR_RETURN_IF_ERROR(p.Properties(&stmt.properties));
  p.AcceptKeyword("DO");
  if (p.IsKeyword("INSERT") || p.IsKeyword("FROM")) {
    stmt.insert_sql = p.Rest();
  } else {
    MR_RETURN_IF_ERROR(p.ExpectEnd());
  }
  if (stmt.properties.empty() && stmt.insert_sql.empty()) {
    return Status::InvalidArgument("ALTER JOB " + stmt.name +
                                   ": nothing to change (give PROPERTIES or an INSERT)");
  }
  return JobStatement(std::move(stmt));
}

}  // namespace

bool IsJobStatement(std::string_view text) {
  const auto tokens = sql::SignificantTokens(text);
  if (tokens.size() < 2 || !sql::IsKeyword(text, tokens[1], "JOB")) return false;
  for (std::string_view verb : {"CREATE", "PAUSE", "RESUME", "DROP", "ALTER"}) {
    if (sql::IsKeyword(text, tokens[0], verb)) return true;
  }
  return false;
}

Result<JobStatement> ParseJobStatement(std::string_view text) {
  const auto tokens = sql::SignificantTokens(text);
  if (tokens.empty()) return Status::InvalidArgument("empty job statement");
  if (sql::IsKeyword(text, tokens[0], "CREATE")) return ParseCreate(text);
  if (sql::IsKeyword(text, tokens[0], "ALTER")) return ParseAlter(text);
  if (sql::IsKeyword(text, tokens[0], "PAUSE"))
    return ParseControl(text, JobControl::kPause, "PAUSE");
  if (sql::IsKeyword(text, tokens[0], "RESUME")) {
    return ParseControl(text, JobControl::kResume, "RESUME");
  }
  if (sql::IsKeyword(text, tokens[0], "DROP")) return ParseControl(text, JobControl::kDrop, "DROP");
  return Status::InvalidArgument("not a job statement");
}

namespace {

// FROM <source> ( "k" = "v", ... ) TO DATABASE <db> ( "k" = "v", ... )
Result<InsertAnalysis> AnalyzeDatabaseForm(std::string_view text) {
  Parser p(text, "the job's FROM ... TO DATABASE");
  MR_RETURN_IF_ERROR(p.ExpectKeyword("FROM"));
  MR_ASSIGN_OR_RETURN(std::string source, p.Identifier("a source (POSTGRES)"));
  InsertAnalysis analysis;
  analysis.source = load::SourceKind::kCdcStream;
  analysis.call_begin = p.Offset();
  PropertyMap source_args;
  MR_RETURN_IF_ERROR(p.Properties(&source_args));
  analysis.call_end = p.Offset();
  for (auto& [key, value] : source_args)
    analysis.args[ToLower(key)] = value;
  if (!analysis.args.emplace("type", ToLower(source)).second) {
    return Status::InvalidArgument("FROM " + source +
                                   ": the source's type is its name; \"type\" is not a property "
                                   "here");
  }
  MR_RETURN_IF_ERROR(p.ExpectKeyword("TO"));
  MR_RETURN_IF_ERROR(p.ExpectKeyword("DATABASE"));
  MR_ASSIGN_OR_RETURN(analysis.to_database, p.Identifier("a database name"));
  analysis.target_table = analysis.to_database;
  if (p.IsPunct("(")) {
    PropertyMap target_args;
    MR_RETURN_IF_ERROR(p.Properties(&target_args));
    for (auto& [key, value] : target_args)
      analysis.to_args[ToLower(key)] = value;
  }
  MR_RETURN_IF_ERROR(p.ExpectEnd());
  return analysis;
}

}  // namespace

Result<InsertAnalysis> AnalyzeInsert(std::string_view text) {
  if (const auto tokens = sql::SignificantTokens(text);
      !tokens.empty() && sql::IsKeyword(text, tokens[0], "FROM")) {
    return AnalyzeDatabaseForm(text);
  }
  Parser p(text, "the job's INSERT");
  MR_RETURN_IF_ERROR(p.ExpectKeyword("INSERT"));
  MR_RETURN_IF_ERROR(p.ExpectKeyword("INTO"));
  InsertAnalysis analysis;
  const size_t table_begin = p.Offset();
  analysis.target_begin = table_begin;
  MR_ASSIGN_OR_RETURN(std::string part, p.Identifier("a table name"));
  analysis.target_parts.push_back(std::move(part));
  while (p.AcceptPunct(".")) {
    MR_ASSIGN_OR_RETURN(part, p.Identifier("a table name"));
    analysis.target_parts.push_back(std::move(part));
  }
  analysis.target_table = std::string(text.substr(table_begin, p.Offset() - table_begin));
  while (!analysis.target_table.empty() &&
         std::isspace(static_cast<unsigned char>(analysis.target_table.back()))) {
    analysis.target_table.pop_back();
  }
  if (p.AcceptPunct("(")) {
    do {
      MR_ASSIGN_OR_RETURN(std::string column, p.Identifier("a column name"));
      analysis.columns.push_back(std::move(column));
    } while (p.AcceptPunct(","));
    MR_RETURN_IF_ERROR(p.ExpectPunct(")"));
  }
  if (!p.IsKeyword("SELECT")) return p.Error("SELECT");
  analysis.select_begin = p.Offset();

  MR_ASSIGN_OR_RETURN(auto calls, sql::FindDorisCalls(text, [](std::string_view name) {
                        return name == "s3" || name == "local" || name == "cdc_stream";
                      }));
  if (calls.size() != 1) {
    return Status::InvalidArgument(
        "a streaming job reads exactly one S3(...), local(...) or cdc_stream(...) table "
        "function; found " +
        std::to_string(calls.size()));
  }
  sql::DorisCall& call = calls.front();
  analysis.source = call.name == "s3"      ? load::SourceKind::kS3
                    : call.name == "local" ? load::SourceKind::kLocal
                                           : load::SourceKind::kCdcStream;
  analysis.args = std::move(call.args);
  analysis.call_begin = call.begin;
  analysis.call_end = call.end;
  return analysis;
}

namespace {

// `insert_sql` with the value of each credential of its source call replaced by
// `with(property)`. The values are found as the tokens after `"key" =` in the call (S3(...),
// cdc_stream(...) or FROM ... (...)), never by searching for the text of a secret, which could
// also stand in another value (an access key equal to its secret, a secret inside a path).
std::string ReplaceSecrets(std::string_view insert_sql, const InsertAnalysis& analysis,
                           const ParamTables& change_stream_params,
                           const std::function<std::string(std::string_view key)>& with) {
  const ParamTables file_params = {&load::FileFunctionParams()};
  const ParamTables& tables =
      analysis.source == load::SourceKind::kCdcStream ? change_stream_params : file_params;
  auto secret = [&](std::string_view key) {
    return std::any_of(tables.begin(), tables.end(), [&](const std::vector<ParamSpec>* table) {
      return IsSecretParam(*table, key);
    });
  };
  const std::vector<sql::Token> tokens = sql::SignificantTokens(insert_sql);
  struct Replacement {
    size_t begin;
    size_t end;
    std::string text;
  };
  std::vector<Replacement> replacements;
  for (size_t i = 0; i + 2 < tokens.size(); ++i) {
    const sql::Token& key = tokens[i];
    if (key.begin < analysis.call_begin || key.end > analysis.call_end) continue;
    if (key.kind != sql::TokenKind::kString && key.kind != sql::TokenKind::kQuotedIdent) continue;
    if (tokens[i + 1].Text(insert_sql) != "=") continue;
    const std::string name = sql::Unquote(insert_sql, key);
    if (!secret(name)) continue;
    // The value: one token (a quoted string, a number), or a sign and a number.
    size_t last = i + 2;
    const std::string_view first = tokens[last].Text(insert_sql);
    if ((first == "-" || first == "+") && last + 1 < tokens.size()) ++last;
    const sql::Token& value = tokens[i + 2];
    const char quote =
        value.kind == sql::TokenKind::kString || value.kind == sql::TokenKind::kQuotedIdent
            ? insert_sql[value.begin]
            : '"';
    replacements.push_back({value.begin, tokens[last].end,
                            std::string(1, quote) + with(ToLower(name)) + std::string(1, quote)});
    i = last;
  }
  std::string out(insert_sql);
  for (auto it = replacements.rbegin(); it != replacements.rend(); ++it)
    out.replace(it->begin, it->end - it->begin, it->text);
  return out;
}

}  // namespace

std::string MaskSecrets(std::string_view insert_sql, const InsertAnalysis& analysis,
                        const ParamTables& change_stream_params) {
  return ReplaceSecrets(insert_sql, analysis, change_stream_params,
                        [](std::string_view) { return "***"; });
}

std::string PlaceholderSecrets(std::string_view insert_sql, const InsertAnalysis& analysis,
                               const ParamTables& change_stream_params) {
  return ReplaceSecrets(insert_sql, analysis, change_stream_params,
                        [](std::string_view key) { return "${" + std::string(key) + "}"; });
}

}  // namespace millrace::job
