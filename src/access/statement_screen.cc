#include "access/statement_screen.h"

#include <array>

#include "common/strings.h"
#include "sql/lexer.h"

namespace millrace::access {
namespace {

using sql::IsKeyword;
using sql::Token;
using sql::TokenKind;

bool IsPunct(std::string_view sql, const Token& token, std::string_view punct) {
  return token.kind == TokenKind::kPunct && token.Text(sql) == punct;
}

bool StartsQuery(std::string_view sql, const Token& token) {
  for (std::string_view keyword :
       {"SELECT", "WITH", "FROM", "VALUES", "TABLE", "PIVOT", "UNPIVOT"}) {
    if (IsKeyword(sql, token, keyword)) return true;
  }
  return false;
}

// The index of the ')' closing the '(' at `open` (tokens.size() when unclosed).
size_t Closing(std::string_view sql, const std::vector<Token>& tokens, size_t open) {
  int depth = 0;
  for (size_t i = open; i < tokens.size(); ++i) {
    if (IsPunct(sql, tokens[i], "(")) ++depth;
    if (IsPunct(sql, tokens[i], ")") && --depth == 0) return i;
  }
  return tokens.size();
}

// The first token at parenthesis depth 0, from `from`, that is one of `keywords`.
size_t FindTopLevel(std::string_view sql, const std::vector<Token>& tokens, size_t from,
                    std::initializer_list<std::string_view> keywords) {
  for (size_t i = from; i < tokens.size(); ++i) {
    if (IsPunct(sql, tokens[i], "(")) {
      i = Closing(sql, tokens, i);
      continue;
    }
    for (std::string_view keyword : keywords) {
      if (IsKeyword(sql, tokens[i], keyword)) return i;
    }
  }
  return tokens.size();
}

// The text of tokens [first, last) (empty when first >= last).
std::string Span(std::string_view sql, const std::vector<Token>& tokens, size_t first,
                 size_t last) {
  if (first >= last || first >= tokens.size()) return "";
  const size_t end = last < tokens.size() ? tokens[last].begin : sql.size();
  return std::string(sql.substr(tokens[first].begin, end - tokens[first].begin));
}

}  // namespace

std::string StatementStart(std::string_view sql) {
  const std::vector<Token> tokens = sql::SignificantTokens(sql);
  std::string out;
  size_t words = 0;
  for (const Token& token : tokens) {
    if (token.kind != TokenKind::kWord) break;
    const std::string word = ToUpper(token.Text(sql));
    if (word == "OR" || word == "REPLACE" || word == "TEMP" || word == "TEMPORARY" ||
        word == "PERSISTENT" || word == "UNIQUE" || word == "FORCE") {
      continue;
    }
    out += (out.empty() ? "" : " ") + word;
    // "CREATE TABLE", "DROP VIEW": the verb and what it acts on.
    if (++words == 2 || (word != "CREATE" && word != "DROP" && word != "ALTER")) break;
  }
  return out;
}

std::vector<std::string> CalledNames(std::string_view sql) {
  const std::vector<Token> tokens = sql::SignificantTokens(sql);
  std::vector<std::string> names;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    const Token& token = tokens[i];
    if (token.kind != TokenKind::kWord && token.kind != TokenKind::kQuotedIdent) continue;
    if (IsPunct(sql, tokens[i + 1], "(")) names.push_back(ToLower(sql::Unquote(sql, token)));
  }
  return names;
}

std::vector<std::string> QueryParts(std::string_view sql) {
  const std::vector<Token> tokens = sql::SignificantTokens(sql);
  std::vector<std::string> parts;
  if (tokens.empty()) return parts;
  // Every parenthesized subquery.
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (IsPunct(sql, tokens[i], "(") && StartsQuery(sql, tokens[i + 1])) {
      parts.push_back(Span(sql, tokens, i + 1, Closing(sql, tokens, i)));
    }
  }
  const Token& first = tokens[0];
  if (IsKeyword(sql, first, "INSERT")) {
    // INSERT ... INTO name [(columns)] [BY NAME | BY POSITION] <query> [ON CONFLICT ...]
    // [RETURNING ...]
    size_t i = FindTopLevel(sql, tokens, 1, {"INTO"});
    for (++i; i < tokens.size(); ++i) {
      if (StartsQuery(sql, tokens[i])) break;
      if (IsPunct(sql, tokens[i], "(")) {
        if (i + 1 < tokens.size() && StartsQuery(sql, tokens[i + 1])) break;
        i = Closing(sql, tokens, i);
      }
    }
    parts.push_back(Span(sql, tokens, i, FindTopLevel(sql, tokens, i, {"ON", "RETURNING"})));
  } else if (const std::optional<size_t> begin = CreateAsQueryBegin(sql); begin) {
    parts.emplace_back(sql.substr(*begin));
  } else if (IsKeyword(sql, first, "UPDATE") || IsKeyword(sql, first, "DELETE")) {
    // UPDATE's FROM list; DELETE's USING list (DELETE FROM t names the table written).
    const bool update = IsKeyword(sql, first, "UPDATE");
    const size_t list = FindTopLevel(sql, tokens, update ? 1 : 2, {update ? "FROM" : "USING"});
    if (list < tokens.size()) {
      const size_t end = FindTopLevel(sql, tokens, list + 1, {"WHERE", "RETURNING"});
      parts.push_back("SELECT * FROM " + Span(sql, tokens, list + 1, end));
    }
  }
  return parts;
}

std::optional<size_t> CreateAsQueryBegin(std::string_view sql) {
  const std::vector<Token> tokens = sql::SignificantTokens(sql);
  if (tokens.empty() || !IsKeyword(sql, tokens[0], "CREATE")) return std::nullopt;
  const size_t as = FindTopLevel(sql, tokens, 1, {"AS"});
  if (as + 1 >= tokens.size()) return std::nullopt;
  return tokens[as + 1].begin;
}

}  // namespace millrace::access
