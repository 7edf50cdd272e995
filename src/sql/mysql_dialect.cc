#include "sql/mysql_dialect.h"

#include <algorithm>
#include <array>
#include <set>

#include "engine/database.h"
#include "sql/lexer.h"

namespace millrace::sql {
namespace {

// Keywords that end a select-list item.
constexpr std::array<std::string_view, 12> kItemTerminators = {
    "FROM",  "LIMIT", "WHERE",  "ORDER",     "GROUP",  "HAVING",
    "UNION", "INTO",  "EXCEPT", "INTERSECT", "WINDOW", "QUALIFY"};

// Clauses after which a depth's select list is over.
bool EndsSelectList(std::string_view sql, const Token& token) {
  return std::any_of(kItemTerminators.begin(), kItemTerminators.end(),
                     [&](std::string_view kw) { return IsKeyword(sql, token, kw); });
}

std::string Literal(const std::optional<std::string>& value, bool numeric) {
  if (!value) return "CAST(NULL AS VARCHAR)";
  if (numeric) return *value;
  return engine::QuoteLiteral(*value);
}

// Rewrites the MySQL-only lexical forms of one statement into DuckDB SQL.
class Translator {
 public:
  Translator(std::string_view sql, const DialectContext& context)
      : sql_(sql), context_(context), tokens_(Tokenize(sql)) {}

  Result<std::string> Run() {
    std::vector<bool> in_select_list = {false};  // per parenthesis depth
    std::vector<bool> in_cast = {false};         // per parenthesis depth: CAST( ... )
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const Token& token = tokens_[i];
      const std::string_view text = token.Text(sql_);
      switch (token.kind) {
        case TokenKind::kComment:
          if (text.front() == '#') Replace(token.begin, token.end, " ");
          continue;
        case TokenKind::kBacktickIdent:
          Replace(token.begin, token.end, engine::QuoteIdentifier(Unquote(sql_, token)));
          continue;
        case TokenKind::kVariable:
          if (text.starts_with("@@")) {
            MR_ASSIGN_OR_RETURN(SystemVariable variable, Variable(text.substr(2)));
            Substitute(i, i, Literal(variable.value, variable.numeric), in_select_list.back());
          }
          continue;
        case TokenKind::kString:
          // MySQL names a literal column after its value ('abc' -> abc), DuckDB after its
          // source text ('abc').
          if (text.front() == '\'' && !token.unterminated && in_select_list.back() &&
              IsWholeItem(i, i)) {
            const std::string value = Unquote(sql_, token);
            if (!value.empty())
              Replace(token.begin, token.end,
                      std::string(text) + " AS " + engine::QuoteIdentifier(value));
          }
          continue;
        case TokenKind::kPunct:
          if (convert_commas_.erase(i) > 0) {
            Replace(token.begin, token.end, " AS ");
            i = MySqlIntegerCast(i);
            continue;
          }
          if (text == "(") {
            in_select_list.push_back(false);
            const size_t before = PrevSignificant(i);
            in_cast.push_back(before < tokens_.size() &&
                              (IsKeyword(sql_, tokens_[before], "CAST") ||
                               IsKeyword(sql_, tokens_[before], "TRY_CAST")));
          }
          if (text == ")" && in_select_list.size() > 1) {
            in_select_list.pop_back();
            in_cast.pop_back();
          }
          continue;
        case TokenKind::kWord: {
          // A charset introducer (_utf8mb4'x', _binary'x', as drivers that interpolate
          // parameters write them): a text one goes, a binary one makes the string a BLOB.
          if (text.size() > 1 && text.front() == '_' && i + 1 < tokens_.size() &&
              tokens_[i + 1].kind == TokenKind::kString && !tokens_[i + 1].unterminated &&
              IsCharsetIntroducer(text)) {
            const Token& literal = tokens_[i + 1];
            const std::string_view quoted = literal.Text(sql_);
            Replace(token.begin, literal.end,
                    EqualsIgnoreCase(text, "_binary") ? "CAST(" + std::string(quoted) + " AS BLOB)"
                                                      : std::string(quoted));
            ++i;
            continue;
          }
          if (IsKeyword(sql_, token, "SELECT")) in_select_list.back() = true;
          if (EndsSelectList(sql_, token)) in_select_list.back() = false;
          if ((IsKeyword(sql_, token, "TRUE") || IsKeyword(sql_, token, "FALSE")) &&
              in_select_list.back() && IsWholeItem(i, i)) {
            Replace(token.begin, token.end,
                    std::string(text) + " AS " + engine::QuoteIdentifier(text));
            continue;
          }
          if (IsKeyword(sql_, token, "LIMIT")) {
            i = MySqlLimit(i);
            continue;
          }
          if (IsKeyword(sql_, token, "AS") && in_cast.back()) {
            i = MySqlIntegerCast(i);
            continue;
          }
          if (IsKeyword(sql_, token, "CONVERT")) MySqlConvert(i);
          size_t close = 0;
          std::optional<std::string> literal = SessionFunction(i, &close);
          if (literal) {
            Substitute(i, close, *literal, in_select_list.back());
            i = close;
          }
          continue;
        }
        default:
          continue;
      }
    }
    out_.append(sql_.substr(copied_));
    return std::move(out_);
  }

 private:
  Result<SystemVariable> Variable(std::string_view name) {
    for (std::string_view scope : {"session.", "global.", "local."}) {
      if (name.size() > scope.size() && StartsWithIgnoreCase(name, scope)) {
        name.remove_prefix(scope.size());
        break;
      }
    }
    return context_.variables.Get(name);
  }

  // MySQL's CAST(x AS SIGNED [INTEGER]) and AS UNSIGNED [INTEGER] become BIGINT and UBIGINT.
  // Returns the index of the last token consumed.
  size_t MySqlIntegerCast(size_t as) {
    const size_t type = NextSignificant(as);
    if (type >= tokens_.size()) return as;
    const bool is_signed = IsKeyword(sql_, tokens_[type], "SIGNED");
    if (!is_signed && !IsKeyword(sql_, tokens_[type], "UNSIGNED")) return as;
    size_t last = type;
    const size_t next = NextSignificant(type);
    if (next < tokens_.size() &&
        (IsKeyword(sql_, tokens_[next], "INTEGER") || IsKeyword(sql_, tokens_[next], "INT"))) {
      last = next;
    }
    Replace(tokens_[type].begin, tokens_[last].end, is_signed ? "BIGINT" : "UBIGINT");
    return last;
  }

  // MySQL's CONVERT(x, type) becomes CAST(x AS type): the word is replaced now, the comma
  // when the loop reaches it (convert_commas_). CONVERT(x USING charset) stays.
  void MySqlConvert(size_t convert) {
    const size_t open = NextSignificant(convert);
    if (open >= tokens_.size() || tokens_[open].Text(sql_) != "(") return;
    // x.convert(...) is someone's function, not MySQL's CONVERT.
    const size_t before = PrevSignificant(convert);
    if (before < tokens_.size() && tokens_[before].Text(sql_) == ".") return;
    int depth = 0;  // of parentheses, and of DuckDB's [list] and {struct} literals
    for (size_t j = open; j < tokens_.size(); ++j) {
      if (tokens_[j].kind != TokenKind::kPunct) continue;
      const std::string_view text = tokens_[j].Text(sql_);
      if (text == "(" || text == "[" || text == "{") ++depth;
      if ((text == ")" || text == "]" || text == "}") && --depth == 0) return;
      if (text == "," && depth == 1) {
        Replace(tokens_[convert].begin, tokens_[convert].end, "CAST");
        convert_commas_.insert(j);
        return;
      }
    }
  }

  // MySQL's `LIMIT offset, count` becomes `LIMIT count OFFSET offset`. Returns the index of
  // the last token consumed.
  size_t MySqlLimit(size_t limit) {
    const size_t offset = NextSignificant(limit);
    const size_t comma = NextSignificant(offset);
    const size_t count = NextSignificant(comma);
    if (count >= tokens_.size() || tokens_[offset].kind != TokenKind::kNumber ||
        tokens_[comma].Text(sql_) != "," || tokens_[count].kind != TokenKind::kNumber) {
      return limit;
    }
    Replace(tokens_[offset].begin, tokens_[count].end,
            std::string(tokens_[count].Text(sql_)) + " OFFSET " +
                std::string(tokens_[offset].Text(sql_)));
    return count;
  }

  // DATABASE() and friends: the literal replacing tokens [i, *close].
  std::optional<std::string> SessionFunction(size_t i, size_t* close) {
    const size_t open = NextSignificant(i);
    const size_t end = NextSignificant(open);
    if (end >= tokens_.size() || tokens_[open].Text(sql_) != "(" ||
        tokens_[end].Text(sql_) != ")") {
      return std::nullopt;
    }
    const size_t prev = PrevSignificant(i);
    if (prev < tokens_.size() && tokens_[prev].Text(sql_) == ".") return std::nullopt;
    const std::string name = ToUpper(tokens_[i].Text(sql_));
    const SessionInfo& info = context_.info;
    std::optional<std::string> literal;
    if (name == "DATABASE" || name == "SCHEMA") {
      literal = Literal(context_.database, false);
    } else if (name == "USER" || name == "SESSION_USER" || name == "SYSTEM_USER") {
      literal = engine::QuoteLiteral(info.user + "@" + info.host);
    } else if (name == "CURRENT_USER") {
      literal = engine::QuoteLiteral(info.user + "@%");
    } else if (name == "CONNECTION_ID") {
      literal = std::to_string(info.connection_id);
    } else if (name == "VERSION") {
      literal = engine::QuoteLiteral(context_.server_version);
    } else if (name == "LAST_INSERT_ID") {
      literal = "0";
    }
    if (literal) *close = end;
    return literal;
  }

  // Replaces tokens [first, last] by `literal`, named after the original text when the
  // tokens form a whole select-list item (as MySQL names such columns).
  // MySQL's charset introducers that drivers write before string literals.
  static bool IsCharsetIntroducer(std::string_view word) {
    for (std::string_view name :
         {"_binary", "_utf8mb4", "_utf8mb3", "_utf8", "_latin1", "_ascii"}) {
      if (EqualsIgnoreCase(word, name)) return true;
    }
    return false;
  }

  void Substitute(size_t first, size_t last, const std::string& literal, bool in_select_list) {
    const size_t begin = tokens_[first].begin;
    const size_t end = tokens_[last].end;
    std::string replacement = literal;
    if (in_select_list && IsWholeItem(first, last)) {
      replacement += " AS " + engine::QuoteIdentifier(sql_.substr(begin, end - begin));
    }
    Replace(begin, end, replacement);
  }

  bool IsWholeItem(size_t first, size_t last) const {
    const size_t prev = PrevSignificant(first);
    if (prev >= tokens_.size()) return false;
    const Token& p = tokens_[prev];
    if (!(IsKeyword(sql_, p, "SELECT") || IsKeyword(sql_, p, "DISTINCT") ||
          IsKeyword(sql_, p, "ALL") || p.Text(sql_) == ",")) {
      return false;
    }
    const size_t next = NextSignificant(last);
    if (next >= tokens_.size()) return true;
    const Token& n = tokens_[next];
    const std::string_view t = n.Text(sql_);
    return t == "," || t == ";" || t == ")" || EndsSelectList(sql_, n);
  }

  size_t NextSignificant(size_t i) const {
    do {
      ++i;
    } while (i < tokens_.size() && tokens_[i].kind == TokenKind::kComment);
    return i;
  }
  // tokens_.size() when there is none.
  size_t PrevSignificant(size_t i) const {
    while (i > 0) {
      --i;
      if (tokens_[i].kind != TokenKind::kComment) return i;
    }
    return tokens_.size();
  }

  void Replace(size_t begin, size_t end, std::string_view text) {
    out_.append(sql_.substr(copied_, begin - copied_));
    out_.append(text);
    copied_ = end;
  }

  std::string_view sql_;
  const DialectContext& context_;
  std::vector<Token> tokens_;
  std::string out_;
  size_t copied_ = 0;
  std::set<size_t> convert_commas_;  // the commas of the CONVERT(x, type) being read
};

}  // namespace

Result<std::string> TranslateForDuckDb(std::string_view statement, const DialectContext& context) {
  return Translator(statement, context).Run();
}

}  // namespace millrace::sql
