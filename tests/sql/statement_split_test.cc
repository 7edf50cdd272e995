// The server splits a client's text with Millrace's lexer (SplitStatements) and runs each piece
// as exactly one DuckDB statement. This differential test generates texts that mix nested and
// unterminated comments, quotes, dollar quotes, semicolons, EXPLAIN [ANALYZE] and Millrace's
// own statements, and holds the split against DuckDB's own (duckdb_extract_statements, each
// statement prepared for its kind): where DuckDB accepts the text, the pieces are DuckDB's
// statements, in order, of the same kinds, and each piece alone is exactly one statement;
// where DuckDB refuses it, the server refuses it too before running anything.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "engine/database.h"
#include "sql/lexer.h"

namespace millrace::sql {
namespace {

using engine::StatementKind;

// Where a noise marker stands in a template.
constexpr std::string_view kGap = "{_}";
// Where a string literal stands in a template.
constexpr std::string_view kText = "{s}";

class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  // One text to send, and the same text as DuckDB can read it (each Millrace statement
  // replaced by a SELECT of DuckDB's), with the Millrace statements' own texts in order.
  struct Text {
    std::string sent;
    std::string duckdb;
    std::vector<std::string> millrace;
    size_t statements = 0;
  };

  Text Next() {
    Text text;
    const int count = Pick(1, 5);
    for (int i = 0; i < count; ++i) {
      if (i > 0 || Chance(20)) Append(&text, Noise());
      if (Chance(15)) {
        const std::string statement = Fill(Pick(kMillrace));
        text.millrace.push_back(statement);
        text.sent += statement;
        text.duckdb += "SELECT 'millrace'";
      } else {
        Append(&text, Fill(Pick(kDuckDb)));
      }
      ++text.statements;
      if (Chance(30)) Append(&text, " " + Noise());
      if (i + 1 < count || Chance(50)) Append(&text, ";");
      if (Chance(10)) Append(&text, ";");  // an empty statement
    }
    if (Chance(15)) Append(&text, " " + Pick(kUnterminated));
    return text;
  }

 private:
  static constexpr std::string_view kDuckDb[] = {
      "SELECT{_}1",
      "SELECT {s} AS \"a;b\"",
      "SELECT{_}a,{_}b FROM{_}t WHERE b <> {s}",
      "SELECT 3{_}-{_}2,{_}{s}",
      "SELECT count(*) FROM t WHERE b IN ({s},{_}{s})",
      "INSERT INTO t VALUES (1,{_}{s})",
      "UPDATE t SET b = {s} WHERE{_}a = 1",
      "DELETE FROM t WHERE b = {s}",
      "CREATE TABLE IF NOT EXISTS u (x INT,{_}y VARCHAR DEFAULT {s})",
      "EXPLAIN{_}SELECT {s}",
      "EXPLAIN ANALYZE{_}SELECT a FROM t WHERE b = {s}",
      "EXPLAIN{_}DELETE FROM t WHERE b = {s}",
      "WITH w AS (SELECT {s} AS v) SELECT{_}v FROM w",
      "SELECT (SELECT {s}){_}",
  };
  static constexpr std::string_view kMillrace[] = {
      "PAUSE JOB WHERE jobname = {s}",
      "GRANT SELECT_PRIV ON d.* TO 'u;x'",
      "CREATE JOB j ON STREAMING DO INSERT INTO t SELECT * FROM S3(\"uri\" = \"s3://b/;*.csv\","
      "{_}\"format\" = \"csv\")",
  };
  static constexpr std::string_view kStrings[] = {
      "'plain'",      "'a;b'",        "'it''s; done'", "E'x\\';y'",
      "$$ ; ' \" $$", "$q$ */ ; $q$", "'/* ; */'",     "'-- ;'",
      "''",           "'$$;'",        "$a$ $b$ ; $a$", "'*/ ; /*'",
  };
  static constexpr std::string_view kNoises[] = {
      "/* c */",           "/* ; ' \" $$ */",
      "/* a /* ; */ b */", "/* /* /* ; */ */ */",
      "-- ; ' \n",         "/**/",
      "/* -- ; */",        "/* /* ' */ ; */",
      "/* ' */",           "--\n",
      "/* * / ; */",       "\n\t",
  };
  static constexpr std::string_view kUnterminated[] = {
      "/* open", "/* /* */ still open", "'open", "$$ open", "\"open", "$t$ open $t",
  };

  static void Append(Text* text, const std::string& part) {
    text->sent += part;
    text->duckdb += part;
  }

  int Pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }
  bool Chance(int percent) { return Pick(1, 100) <= percent; }
  template <size_t N>
  std::string Pick(const std::string_view (&options)[N]) {
    return std::string(options[Pick(0, static_cast<int>(N) - 1)]);
  }

  std::string Noise() { return Pick(kNoises); }

  // The template with each gap filled by spaces or noise and each string by a literal.
  std::string Fill(std::string_view pattern) {
    std::string out;
    for (size_t i = 0; i < pattern.size();) {
      if (pattern.substr(i, kGap.size()) == kGap) {
        out += Chance(60) ? " " : " " + Noise() + " ";
        i += kGap.size();
      } else if (pattern.substr(i, kText.size()) == kText) {
        out += Pick(kStrings);
        i += kText.size();
      } else {
        out += pattern[i++];
      }
    }
    return out;
  }

  std::mt19937 rng_;
};

class StatementSplitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = engine::Database::Open(engine::DatabaseOptions{});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    auto conn = db_->Connect();
    ASSERT_TRUE(conn.ok()) << conn.status().ToString();
    conn_ = std::move(conn).value();
    ASSERT_TRUE(conn_->Execute("CREATE TABLE t (a INT, b VARCHAR)").ok());
  }

  std::unique_ptr<engine::Database> db_;
  std::unique_ptr<engine::Connection> conn_;
};

TEST_F(StatementSplitTest, PiecesAreDuckDbsStatements) {
  Generator generator(20261206);
  size_t statements = 0;
  size_t refused = 0;
  size_t texts = 0;
  for (; statements < 10000; ++texts) {
    const Generator::Text text = generator.Next();
    statements += text.statements;
    const Result<std::vector<StatementKind>> duckdb = conn_->StatementKinds(text.duckdb);
    if (HasUnterminatedToken(text.sent)) {
      // Refused whole, before any piece runs: DuckDB refuses it too.
      EXPECT_FALSE(duckdb.ok()) << text.sent;
      ++refused;
      continue;
    }
    ASSERT_TRUE(duckdb.ok()) << duckdb.status().ToString() << "\n" << text.duckdb;
    const std::vector<std::string_view> pieces = SplitStatements(text.sent);
    ASSERT_EQ(pieces.size(), duckdb->size()) << text.sent;
    size_t millrace = 0;
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (millrace < text.millrace.size() && pieces[i] == text.millrace[millrace]) {
        ++millrace;
        continue;
      }
      // Alone, the piece is exactly the statement DuckDB read at this place.
      const Result<std::vector<StatementKind>> alone = conn_->StatementKinds(pieces[i]);
      ASSERT_TRUE(alone.ok()) << alone.status().ToString() << "\n" << pieces[i];
      ASSERT_EQ(alone->size(), 1u) << pieces[i];
      EXPECT_EQ(engine::StatementKindName((*alone)[0]), engine::StatementKindName((*duckdb)[i]))
          << "piece " << i << " of\n"
          << text.sent;
    }
    EXPECT_EQ(millrace, text.millrace.size()) << "Millrace's statements split apart:\n"
                                              << text.sent;
  }
  EXPECT_GE(statements, 10000u);
  EXPECT_GT(refused, texts / 20) << "the generator makes unterminated texts";
}

TEST_F(StatementSplitTest, NestedCommentsAreOneCommentAsInDuckDb) {
  // Read as a comment closed at its first "*/", this text would hide a DELETE after a
  // harmless SELECT; DuckDB reads one SELECT and a comment, and so does the lexer.
  const std::string sql = "SELECT 1 /* /* */ ; DELETE FROM t; -- */";
  const std::vector<std::string_view> pieces = SplitStatements(sql);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0], "SELECT 1");
  auto kinds = conn_->StatementKinds(sql);
  ASSERT_TRUE(kinds.ok()) << kinds.status().ToString();
  ASSERT_EQ(kinds->size(), 1u);
  EXPECT_EQ((*kinds)[0], StatementKind::kSelect);
  EXPECT_TRUE(HasUnterminatedToken("SELECT 1 /* /* */"));
  EXPECT_FALSE(HasUnterminatedToken("SELECT 1 /* /* */ */"));
}

}  // namespace
}  // namespace millrace::sql
