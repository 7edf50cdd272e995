#include "sql/lexer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace millrace::sql {
namespace {

std::vector<std::string> Texts(std::string_view sql) {
  std::vector<std::string> out;
  for (const Token& t : Tokenize(sql))
    out.emplace_back(t.Text(sql));
  return out;
}

TEST(LexerTest, QuotesCommentsAndVariablesAreSingleTokens) {
  const std::string sql =
      "SELECT `a``b`, \"c\"\"d\", 'it''s', E'x\\'y', $$dollar ; text$$, @@session.autocommit, "
      "@v -- tail ; comment\n/* block ; */ # hash ; comment\n1.5e3";
  EXPECT_EQ(Texts(sql), (std::vector<std::string>{
                            "SELECT", "`a``b`", ",", "\"c\"\"d\"", ",", "'it''s'", ",", "E'x\\'y'",
                            ",", "$$dollar ; text$$", ",", "@@session.autocommit", ",", "@v",
                            "-- tail ; comment", "/* block ; */", "# hash ; comment", "1.5e3"}));
  const std::vector<Token> tokens = Tokenize(sql);
  EXPECT_EQ(tokens[1].kind, TokenKind::kBacktickIdent);
  EXPECT_EQ(tokens[3].kind, TokenKind::kQuotedIdent);
  EXPECT_EQ(tokens[5].kind, TokenKind::kString);
  EXPECT_EQ(tokens[11].kind, TokenKind::kVariable);
  EXPECT_EQ(tokens[14].kind, TokenKind::kComment);
  EXPECT_EQ(tokens[17].kind, TokenKind::kNumber);
  EXPECT_EQ(Unquote(sql, tokens[1]), "a`b");
  EXPECT_EQ(Unquote(sql, tokens[3]), "c\"d");
  EXPECT_EQ(Unquote(sql, tokens[5]), "it's");
  EXPECT_EQ(Unquote(sql, tokens[7]), "x'y");
  EXPECT_EQ(Unquote(sql, tokens[9]), "dollar ; text");
}

TEST(LexerTest, OperatorsAndParametersDoNotSwallowComments) {
  EXPECT_EQ(
      Texts("a<=b--x\nc::int $1 x:=1"),
      (std::vector<std::string>{"a", "<=", "b", "--x", "c", "::", "int", "$1", "x", ":=", "1"}));
}

TEST(LexerTest, UnterminatedTokensRunToTheEndAndAreFlagged) {
  for (const std::string sql : {"SELECT 'abc", "SELECT \"abc", "SELECT `abc", "SELECT /* abc"}) {
    const std::vector<Token> tokens = Tokenize(sql);
    ASSERT_EQ(tokens.size(), 2u) << sql;
    EXPECT_TRUE(tokens[1].unterminated) << sql;
    EXPECT_EQ(tokens[1].end, sql.size()) << sql;
  }
}

TEST(LexerTest, SplitsStatementsOnlyAtTopLevelSemicolons) {
  const std::string sql =
      "SELECT 'a;b'; -- c;\n SELECT \"x;\" /* ; */ ;;  ; # only a comment ;\nSELECT `;`  ";
  std::vector<std::string> parts;
  for (std::string_view s : SplitStatements(sql))
    parts.emplace_back(s);
  EXPECT_EQ(parts, (std::vector<std::string>{"SELECT 'a;b'", "SELECT \"x;\"", "SELECT `;`"}));
  EXPECT_TRUE(SplitStatements("  -- nothing\n /* here */ ;").empty());
}

TEST(LexerTest, KeywordsAndIdentifiersIgnoreCase) {
  const std::string sql = "sElEcT `Tbl`, \"Q\", x";
  const std::vector<Token> tokens = SignificantTokens(sql);
  EXPECT_TRUE(IsKeyword(sql, tokens[0], "SELECT"));
  EXPECT_FALSE(IsKeyword(sql, tokens[1], "Tbl"));  // quoted: an identifier, never a keyword
  EXPECT_EQ(IdentifierValue(sql, tokens[1]), "Tbl");
  EXPECT_EQ(IdentifierValue(sql, tokens[3]), "Q");
  EXPECT_EQ(IdentifierValue(sql, tokens[5]), "x");
  EXPECT_EQ(IdentifierValue(sql, tokens[2]), "");  // ','
}

}  // namespace
}  // namespace millrace::sql
