#include "source/glob.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace millrace::source {
namespace {

Glob CompileOrDie(std::string_view pattern) {
  auto glob = Glob::Compile(pattern);
  EXPECT_TRUE(glob.ok()) << pattern << ": " << glob.status().ToString();
  return std::move(glob).value();
}

bool Match(std::string_view pattern, std::string_view text) {
  return CompileOrDie(pattern).Matches(text);
}

TEST(GlobTest, StarStopsAtSlashAndMatchesEmpty) {
  EXPECT_TRUE(Match("ev/*.csv", "ev/a.csv"));
  EXPECT_TRUE(Match("ev/*.csv", "ev/.csv"));
  EXPECT_FALSE(Match("ev/*.csv", "ev/sub/a.csv"));
  EXPECT_FALSE(Match("ev/*.csv", "ev/a.csv.gz"));  // matched whole, not as a prefix
  EXPECT_TRUE(Match("ev/*/*.csv", "ev/sub/a.csv"));
  EXPECT_TRUE(Match("*", ""));
  EXPECT_FALSE(Match("*", "a/b"));
}

TEST(GlobTest, DoubleStarCrossesDirectories) {
  EXPECT_TRUE(Match("ev/**.csv", "ev/a/b/c.csv"));
  EXPECT_TRUE(Match("ev/**/*.csv", "ev/a/b/c.csv"));
  EXPECT_FALSE(Match("ev/**/*.csv", "ev/c.csv"));  // the '/' after ** is literal
  EXPECT_TRUE(Match("ev/***", "ev/x/y"));          // runs of stars are one **
}

TEST(GlobTest, QuestionMarkIsOneCharacterButNotSlash) {
  EXPECT_TRUE(Match("f?.csv", "f1.csv"));
  EXPECT_FALSE(Match("f?.csv", "f.csv"));
  EXPECT_FALSE(Match("f?.csv", "f12.csv"));
  EXPECT_FALSE(Match("a?b", "a/b"));
}

TEST(GlobTest, CharacterClasses) {
  EXPECT_TRUE(Match("f[abc].csv", "fb.csv"));
  EXPECT_FALSE(Match("f[abc].csv", "fd.csv"));
  EXPECT_TRUE(Match("f[a-c0-9].csv", "f7.csv"));
  EXPECT_FALSE(Match("f[a-c0-9].csv", "fz.csv"));
  EXPECT_TRUE(Match("f[!a].csv", "fb.csv"));
  EXPECT_FALSE(Match("f[!a].csv", "fa.csv"));
  EXPECT_TRUE(Match("f[^a].csv", "fb.csv"));
  EXPECT_FALSE(Match("f[^a].csv", "fa.csv"));
  EXPECT_TRUE(Match("f[]].csv", "f].csv"));  // ']' first is literal
  EXPECT_TRUE(Match("f[!]].csv", "fx.csv"));
  EXPECT_FALSE(Match("f[!]].csv", "f].csv"));
  EXPECT_TRUE(Match("f[a-].csv", "f-.csv"));  // '-' last is literal
  EXPECT_FALSE(Match("a[!x]b", "a/b"));       // classes never match '/'
  EXPECT_FALSE(Match("a[/]b", "a/b"));
}

TEST(GlobTest, BracesWithNestingAndEmptyAlternatives) {
  EXPECT_TRUE(Match("{a,b,c}.csv", "b.csv"));
  EXPECT_FALSE(Match("{a,b,c}.csv", "d.csv"));
  EXPECT_TRUE(Match("x/{2025,2026-{01,02}}/*.json", "x/2026-02/e.json"));
  EXPECT_TRUE(Match("x/{2025,2026-{01,02}}/*.json", "x/2025/e.json"));
  EXPECT_FALSE(Match("x/{2025,2026-{01,02}}/*.json", "x/2026-03/e.json"));
  EXPECT_TRUE(Match("f{,.gz}", "f"));
  EXPECT_TRUE(Match("f{,.gz}", "f.gz"));
  EXPECT_TRUE(Match("f{}", "f"));
  EXPECT_TRUE(Match("{*.csv,data/*.json}", "data/a.json"));
  EXPECT_TRUE(Match("a,b}", "a,b}"));  // ',' and '}' outside braces are literal
}

TEST(GlobTest, EscapesMakeMetacharactersLiteral) {
  EXPECT_TRUE(Match("a\\*b", "a*b"));
  EXPECT_FALSE(Match("a\\*b", "axb"));
  EXPECT_TRUE(Match("\\{a,b\\}", "{a,b}"));
  EXPECT_TRUE(Match("[\\]\\-]x", "-x"));
  EXPECT_TRUE(Match("[\\]\\-]x", "]x"));
  EXPECT_TRUE(Match("q\\?", "q?"));
  EXPECT_FALSE(Match("q\\?", "qx"));
}

TEST(GlobTest, MalformedPatternsAreErrorsNamingThePattern) {
  for (std::string_view bad : {"a[bc", "a{b,c", "a\\", "[z-a]", "{a,{b}"}) {
    auto glob = Glob::Compile(bad);
    ASSERT_FALSE(glob.ok()) << bad;
    EXPECT_EQ(glob.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(glob.status().message().find(std::string(bad)), std::string::npos);
  }
}

TEST(GlobTest, Utf8CharactersAreSingleCharacters) {
  EXPECT_TRUE(Match("caf?.csv", "café.csv"));  // é is two bytes, one '?'
  EXPECT_TRUE(Match("[é]", "é"));
  EXPECT_TRUE(Match("[α-ω]x", "λx"));
  EXPECT_FALSE(Match("[α-ω]x", "ax"));
  EXPECT_TRUE(Match("日*.csv", "日本.csv"));
  EXPECT_FALSE(Match("[!é]", "é"));
  // Invalid UTF-8 stands for itself: one '?' per stray byte, literals compare bytes.
  EXPECT_TRUE(Match("a?b",
                    "a\xff"
                    "b"));
  EXPECT_TRUE(Match("a\xff*",
                    "a\xff"
                    "zz"));
  EXPECT_FALSE(Match("a\xc3", "a\xc3\xa9"));  // a lead byte alone is not é's first half
}

TEST(GlobTest, LiteralPrefixStopsAtFirstMetacharacterAndResolvesEscapes) {
  EXPECT_EQ(CompileOrDie("ev/2026/*.csv").LiteralPrefix(), "ev/2026/");
  EXPECT_EQ(CompileOrDie("ev/20?6/x").LiteralPrefix(), "ev/20");
  EXPECT_EQ(CompileOrDie("ev/[ab]").LiteralPrefix(), "ev/");
  EXPECT_EQ(CompileOrDie("ev/{a,b}").LiteralPrefix(), "ev/");
  EXPECT_EQ(CompileOrDie("ev/a\\*b/*").LiteralPrefix(), "ev/a*b/");
  EXPECT_EQ(CompileOrDie("*").LiteralPrefix(), "");
  const Glob literal = CompileOrDie("ev/one.csv");
  EXPECT_EQ(literal.LiteralPrefix(), "ev/one.csv");
  EXPECT_FALSE(literal.HasWildcards());
  EXPECT_TRUE(CompileOrDie("ev/*").HasWildcards());
}

TEST(GlobTest, CouldMatchWithPrefixPrunesImpossibleDirectories) {
  const Glob glob = CompileOrDie("/in/{a,b}/*/x*.csv");
  EXPECT_TRUE(glob.CouldMatchWithPrefix("/in/"));
  EXPECT_TRUE(glob.CouldMatchWithPrefix("/in/a/"));
  EXPECT_TRUE(glob.CouldMatchWithPrefix("/in/b/day1/"));
  EXPECT_FALSE(glob.CouldMatchWithPrefix("/in/c/"));
  EXPECT_FALSE(glob.CouldMatchWithPrefix("/in/a/day1/sub/"));  // '*' cannot cross '/'
  EXPECT_TRUE(CompileOrDie("/in/**.csv").CouldMatchWithPrefix("/in/a/b/c/"));
}

TEST(GlobTest, ExclusiveLowerBoundIsBelowEveryMatch) {
  EXPECT_EQ(CompileOrDie("p/{m,n}*.csv").ExclusiveLowerBound(), "p/l");
  EXPECT_EQ(CompileOrDie("p/[x-z]?").ExclusiveLowerBound(), "p/w");
  EXPECT_EQ(CompileOrDie("p/*.csv").ExclusiveLowerBound(), "");  // '*' may start with anything
  EXPECT_EQ(CompileOrDie("p/[!a]").ExclusiveLowerBound(), "");
  EXPECT_EQ(CompileOrDie("p/{,x}").ExclusiveLowerBound(), "");  // "p/" itself matches
  // Checked against matches: every matching key is above the bound.
  const Glob glob = CompileOrDie("logs/{b,q}-[0-9]*");
  const std::string bound = glob.ExclusiveLowerBound();
  EXPECT_EQ(bound, "logs/a");
  for (std::string key : {"logs/b-1", "logs/q-9x", "logs/b-0"}) {
    ASSERT_TRUE(glob.Matches(key));
    EXPECT_GT(key, bound);
  }
}

TEST(GlobTest, PathologicalPatternsMatchInLinearTime) {
  // A backtracking matcher needs ~n^k steps here; the NFA stays at n * pattern length.
  std::string pattern;
  for (int i = 0; i < 30; ++i)
    pattern += "a*";
  pattern += "b";
  const std::string text(20'000, 'a');
  std::string braces;
  for (int i = 0; i < 12; ++i)
    braces += "{a,a*,";
  braces += "a";
  for (int i = 0; i < 12; ++i)
    braces += "}";
  braces += "b";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(Match(pattern, text));
  EXPECT_TRUE(Match(pattern, text + "b"));
  EXPECT_FALSE(Match(braces, text));
  EXPECT_FALSE(Match("**a**a**a**a**a**a**a**a**c", std::string(5000, 'a') + "/" + text));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  // Generous: linear work is a few milliseconds; exponential would never finish.
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST(GlobTest, DecodeCodePointNeverFailsAndKeepsBytesDistinct) {
  std::string_view text =
      "\xc3\xa9"
      "a\xe0\x80\x80\xf4\x90\x80\x80";
  EXPECT_EQ(DecodeCodePoint(&text), 0xE9u);
  EXPECT_EQ(DecodeCodePoint(&text), 'a');
  EXPECT_EQ(DecodeCodePoint(&text), 0x110000u + 0xE0);  // overlong: bytes stand alone
  EXPECT_EQ(DecodeCodePoint(&text), 0x110000u + 0x80);
  EXPECT_EQ(DecodeCodePoint(&text), 0x110000u + 0x80);
  EXPECT_EQ(DecodeCodePoint(&text), 0x110000u + 0xF4);  // past U+10FFFF
}

}  // namespace
}  // namespace millrace::source
