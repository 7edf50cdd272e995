// Lexer: splits SQL text into tokens the router can reason about without parsing SQL.
//
// Contract
// - Tokenizes the union of the MySQL and DuckDB lexical rules that matter for routing:
//   'strings' ('' escapes; E'..' with backslash escapes), "quoted identifiers" ("" escapes),
//   `backtick identifiers` (`` escapes), $tag$dollar strings$tag$, numbers, words, @@system and
//   @user variables, punctuation, and the comments `-- ...`, `# ...` and `/* ... */` (nested,
//   as DuckDB nests them).
// - Every token records its byte range in the input, so callers rewrite SQL by replacing ranges
//   and copy everything else verbatim.
// - Never fails: an unterminated string, identifier or comment extends to the end of the input
//   and is flagged `unterminated`; DuckDB reports the error when the statement runs.
// - Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/strings.h"

namespace millrace::sql {

enum class TokenKind {
  kWord,           // keyword or bare identifier: SELECT, t, _x1
  kQuotedIdent,    // "name"
  kBacktickIdent,  // `name`
  kString,         // 'text', E'text', $$text$$
  kNumber,         // 42, 1.5e3, .5
  kVariable,       // @@version, @@session.autocommit, @user_var
  kPunct,          // ( ) , . ; = := :: <= and every other operator character run
  kComment,        // -- x, # x, /* x */
};

struct Token {
  TokenKind kind;
  size_t begin;  // byte offset of the first character
  size_t end;    // one past the last character
  bool unterminated = false;

  std::string_view Text(std::string_view sql) const { return sql.substr(begin, end - begin); }
};

// All tokens of `sql`, whitespace dropped, comments kept (kind kComment).
std::vector<Token> Tokenize(std::string_view sql);

// The tokens that carry meaning: Tokenize() without comments.
std::vector<Token> SignificantTokens(std::string_view sql);

// The value of a quoted token: the text between the quotes with doubled quotes (and, for E''
// strings, backslash escapes) resolved. Other tokens are returned as they are.
std::string Unquote(std::string_view sql, const Token& token);

// Resolves the backslash escapes of MySQL/Doris string literals: \n \t \r \b \f \0 \Z; \% and
// \_ stay escaped (for LIKE); any other escaped character stands for itself.
std::string ResolveBackslashes(std::string_view text);

// True when `token` is a kWord equal to `keyword` ignoring ASCII case.
bool IsKeyword(std::string_view sql, const Token& token, std::string_view keyword);

// The identifier a word or quoted identifier names (quotes removed); empty for other tokens.
// Words keep their case (DuckDB resolves names case-insensitively).
std::string IdentifierValue(std::string_view sql, const Token& token);
bool IsIdentifier(const Token& token);

// The common ASCII helpers (common/strings.h), also spelled sql::... by callers of this layer.
using ::millrace::EqualsIgnoreCase;
using ::millrace::ToLower;
using ::millrace::ToUpper;

// Splits a multi-statement text at top-level semicolons. Statements with nothing but
// whitespace and comments are dropped; each returned view excludes its terminating ';' and
// surrounding whitespace.
std::vector<std::string_view> SplitStatements(std::string_view sql);

// EXPLAIN [ANALYZE] <statement>: the leading keywords, spelled as they are run ("EXPLAIN " or
// "EXPLAIN ANALYZE "), and the offset of the statement explained (sql.size() when nothing
// follows); nullopt for any other statement.
struct Explained {
  std::string_view keywords;
  size_t statement_begin;
};
std::optional<Explained> SplitExplain(std::string_view sql);

// True when `sql` ends inside a comment, string or quoted name: DuckDB refuses such a text
// whole, so the server refuses it before splitting it.
bool HasUnterminatedToken(std::string_view sql);

}  // namespace millrace::sql
