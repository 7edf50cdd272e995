#include "sql/lexer.h"

#include <cctype>

namespace millrace::sql {
namespace {

bool IsWordStart(unsigned char c) {
  return std::isalpha(c) || c == '_' || c >= 0x80;
}
bool IsWordChar(unsigned char c) {
  return std::isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}
bool IsDigit(unsigned char c) {
  return std::isdigit(c) != 0;
}

// Characters that combine into one operator token (<=, :=, ::, ->>, ...).
bool IsOperatorChar(char c) {
  switch (c) {
    case '<':
    case '>':
    case '=':
    case '!':
    case ':':
    case '|':
    case '&':
    case '+':
    case '-':
    case '*':
    case '/':
    case '%':
    case '^':
    case '~':
      return true;
    default:
      return false;
  }
}

class Scanner {
 public:
  explicit Scanner(std::string_view sql) : sql_(sql) {}

  std::vector<Token> Run() {
    std::vector<Token> tokens;
    while (true) {
      SkipSpace();
      if (pos_ >= sql_.size()) break;
      tokens.push_back(Next());
    }
    return tokens;
  }

 private:
  char At(size_t i) const { return i < sql_.size() ? sql_[i] : '\0'; }

  void SkipSpace() {
    while (pos_ < sql_.size() && std::isspace(static_cast<unsigned char>(sql_[pos_])))
      ++pos_;
  }

  Token Make(TokenKind kind, size_t begin, bool unterminated = false) {
    return Token{kind, begin, pos_, unterminated};
  }

  // Reads up to the closing `quote`; a doubled quote is an escaped quote. With `backslash`,
  // a backslash escapes the next character.
  Token Quoted(TokenKind kind, size_t begin, char quote, bool backslash) {
    while (pos_ < sql_.size()) {
      const char c = sql_[pos_];
      if (backslash && c == '\\') {
        pos_ += 2;
        continue;
      }
      ++pos_;
      if (c == quote) {
        if (At(pos_) == quote) {
          ++pos_;
          continue;
        }
        return Make(kind, begin);
      }
    }
    pos_ = sql_.size();
    return Make(kind, begin, true);
  }

  // $tag$ ... $tag$ (tag may be empty). Returns false when `$` does not open one.
  bool DollarString(size_t begin, Token* out) {
    size_t p = pos_ + 1;
    while (p < sql_.size() && IsWordChar(static_cast<unsigned char>(sql_[p])) && sql_[p] != '$') {
      ++p;
    }
    if (At(p) != '$') return false;
    const std::string_view delimiter = sql_.substr(pos_, p + 1 - pos_);
    if (delimiter.size() > 2 && IsDigit(static_cast<unsigned char>(delimiter[1]))) return false;
    const size_t close = sql_.find(delimiter, p + 1);
    if (close == std::string_view::npos) {
      pos_ = sql_.size();
      *out = Make(TokenKind::kString, begin, true);
    } else {
      pos_ = close + delimiter.size();
      *out = Make(TokenKind::kString, begin);
    }
    return true;
  }

  Token Number(size_t begin) {
    while (IsDigit(static_cast<unsigned char>(At(pos_))) || At(pos_) == '_')
      ++pos_;
    if (At(pos_) == '.' && IsDigit(static_cast<unsigned char>(At(pos_ + 1)))) {
      ++pos_;
      while (IsDigit(static_cast<unsigned char>(At(pos_))))
        ++pos_;
    } else if (At(pos_) == '.' && !IsWordStart(static_cast<unsigned char>(At(pos_ + 1)))) {
      ++pos_;  // "1." is a number
    }
    if ((At(pos_) == 'e' || At(pos_) == 'E') &&
        (IsDigit(static_cast<unsigned char>(At(pos_ + 1))) ||
         ((At(pos_ + 1) == '+' || At(pos_ + 1) == '-') &&
          IsDigit(static_cast<unsigned char>(At(pos_ + 2)))))) {
      pos_ += 2;
      while (IsDigit(static_cast<unsigned char>(At(pos_))))
        ++pos_;
    }
    return Make(TokenKind::kNumber, begin);
  }

  Token Next() {
    const size_t begin = pos_;
    const char c = sql_[pos_];
    const char next = At(pos_ + 1);
    if (c == '-' && next == '-') return LineComment(begin);
    if (c == '#') return LineComment(begin);
    if (c == '/' && next == '*') return BlockComment(begin);
    if ((c == 'e' || c == 'E') && next == '\'') {
      pos_ += 2;
      return Quoted(TokenKind::kString, begin, '\'', true);
    }
    if (c == '\'') {
      ++pos_;
      return Quoted(TokenKind::kString, begin, '\'', false);
    }
    if (c == '"') {
      ++pos_;
      return Quoted(TokenKind::kQuotedIdent, begin, '"', false);
    }
    if (c == '`') {
      ++pos_;
      return Quoted(TokenKind::kBacktickIdent, begin, '`', false);
    }
    if (c == '$') {
      Token dollar{};
      if (DollarString(begin, &dollar)) return dollar;
      ++pos_;  // $1 parameter or a lone $
      while (IsDigit(static_cast<unsigned char>(At(pos_))))
        ++pos_;
      return Make(TokenKind::kPunct, begin);
    }
    if (c == '@') {
      ++pos_;
      if (At(pos_) == '@') ++pos_;
      // @@session.x: the scope and the name form one token.
      while (IsWordChar(static_cast<unsigned char>(At(pos_))) ||
             (At(pos_) == '.' && IsWordStart(static_cast<unsigned char>(At(pos_ + 1))))) {
        ++pos_;
      }
      return Make(pos_ - begin > 1 ? TokenKind::kVariable : TokenKind::kPunct, begin);
    }
    if (IsDigit(static_cast<unsigned char>(c)) ||
        (c == '.' && IsDigit(static_cast<unsigned char>(next)))) {
      return Number(begin);
    }
    if (IsWordStart(static_cast<unsigned char>(c))) {
      while (IsWordChar(static_cast<unsigned char>(At(pos_))))
        ++pos_;
      return Make(TokenKind::kWord, begin);
    }
    if (IsOperatorChar(c)) {
      // Stop before a comment opener so "a--b" keeps its comment.
      while (IsOperatorChar(At(pos_)) && !(At(pos_) == '-' && At(pos_ + 1) == '-') &&
             !(At(pos_) == '/' && At(pos_ + 1) == '*')) {
        ++pos_;
      }
      if (pos_ == begin) ++pos_;
      return Make(TokenKind::kPunct, begin);
    }
    ++pos_;
    return Make(TokenKind::kPunct, begin);
  }

  // /* ... */, nested as DuckDB's (PostgreSQL's) scanner nests them: "/* /* */ x */" is one
  // comment. A lexer that closed it at the first "*/" would read code where DuckDB reads a
  // comment, and the statement checked would not be the statement run.
  Token BlockComment(size_t begin) {
    pos_ += 2;
    int depth = 1;
    while (pos_ < sql_.size()) {
      if (sql_[pos_] == '/' && At(pos_ + 1) == '*') {
        ++depth;
        pos_ += 2;
      } else if (sql_[pos_] == '*' && At(pos_ + 1) == '/') {
        pos_ += 2;
        if (--depth == 0) return Make(TokenKind::kComment, begin);
      } else {
        ++pos_;
      }
    }
    pos_ = sql_.size();
    return Make(TokenKind::kComment, begin, true);
  }

  Token LineComment(size_t begin) {
    const size_t eol = sql_.find('\n', pos_);
    pos_ = eol == std::string_view::npos ? sql_.size() : eol;
    return Make(TokenKind::kComment, begin);
  }

  std::string_view sql_;
  size_t pos_ = 0;
};

// The character(s) `\c` stands for in a MySQL/Doris string literal.
void AppendBackslashEscape(char c, std::string* out) {
  switch (c) {
    case 'n':
      out->push_back('\n');
      break;
    case 't':
      out->push_back('\t');
      break;
    case 'r':
      out->push_back('\r');
      break;
    case 'b':
      out->push_back('\b');
      break;
    case 'f':
      out->push_back('\f');
      break;
    case '0':
      out->push_back('\0');
      break;
    case 'Z':
      out->push_back('\x1a');
      break;
    case '%':
    case '_':  // kept escaped, for LIKE patterns
      out->push_back('\\');
      out->push_back(c);
      break;
    default:
      out->push_back(c);
      break;
  }
}

}  // namespace

std::vector<Token> Tokenize(std::string_view sql) {
  return Scanner(sql).Run();
}

std::vector<Token> SignificantTokens(std::string_view sql) {
  std::vector<Token> tokens = Tokenize(sql);
  std::erase_if(tokens, [](const Token& t) { return t.kind == TokenKind::kComment; });
  return tokens;
}

std::string Unquote(std::string_view sql, const Token& token) {
  std::string_view text = token.Text(sql);
  if (token.kind == TokenKind::kString && !text.empty() && text.front() == '$') {
    const size_t open = text.find('$', 1);
    const size_t tag = open + 1;
    if (token.unterminated) return std::string(text.substr(tag));
    return std::string(text.substr(tag, text.size() - 2 * tag));
  }
  if (token.kind != TokenKind::kString && token.kind != TokenKind::kQuotedIdent &&
      token.kind != TokenKind::kBacktickIdent) {
    return std::string(text);
  }
  bool backslash = false;
  if (text.size() >= 2 && (text[0] == 'e' || text[0] == 'E') && text[1] == '\'') {
    backslash = true;
    text.remove_prefix(1);
  }
  const char quote = text.front();
  text.remove_prefix(1);
  if (!token.unterminated && !text.empty()) text.remove_suffix(1);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (backslash && c == '\\' && i + 1 < text.size()) {
      AppendBackslashEscape(text[++i], &out);
    } else if (c == quote && i + 1 < text.size() && text[i + 1] == quote) {
      out.push_back(quote);
      ++i;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string ResolveBackslashes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      AppendBackslashEscape(text[++i], &out);
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

bool IsKeyword(std::string_view sql, const Token& token, std::string_view keyword) {
  return token.kind == TokenKind::kWord && EqualsIgnoreCase(token.Text(sql), keyword);
}

bool IsIdentifier(const Token& token) {
  return token.kind == TokenKind::kWord || token.kind == TokenKind::kQuotedIdent ||
         token.kind == TokenKind::kBacktickIdent;
}

std::string IdentifierValue(std::string_view sql, const Token& token) {
  if (token.kind == TokenKind::kWord) return std::string(token.Text(sql));
  if (token.kind == TokenKind::kQuotedIdent || token.kind == TokenKind::kBacktickIdent) {
    return Unquote(sql, token);
  }
  return "";
}

std::vector<std::string_view> SplitStatements(std::string_view sql) {
  std::vector<std::string_view> statements;
  size_t begin = std::string_view::npos;  // first significant token of the current statement
  size_t end = 0;                         // end of its last significant token
  for (const Token& token : Tokenize(sql)) {
    if (token.kind == TokenKind::kComment) continue;
    if (token.kind == TokenKind::kPunct && token.Text(sql) == ";") {
      if (begin != std::string_view::npos) statements.push_back(sql.substr(begin, end - begin));
      begin = std::string_view::npos;
      continue;
    }
    if (begin == std::string_view::npos) begin = token.begin;
    end = token.end;
  }
  if (begin != std::string_view::npos) statements.push_back(sql.substr(begin, end - begin));
  return statements;
}

std::optional<Explained> SplitExplain(std::string_view sql) {
  const std::vector<Token> tokens = SignificantTokens(sql);
  if (tokens.empty() || !IsKeyword(sql, tokens[0], "EXPLAIN")) return std::nullopt;
  const bool analyze = tokens.size() > 1 && IsKeyword(sql, tokens[1], "ANALYZE");
  const size_t next = analyze ? 2 : 1;
  return Explained{analyze ? "EXPLAIN ANALYZE " : "EXPLAIN ",
                   next < tokens.size() ? tokens[next].begin : sql.size()};
}

bool HasUnterminatedToken(std::string_view sql) {
  const std::vector<Token> tokens = Tokenize(sql);
  return !tokens.empty() && tokens.back().unterminated;
}

}  // namespace millrace::sql
