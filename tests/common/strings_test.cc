#include "common/strings.h"

#include <gtest/gtest.h>

namespace millrace {
namespace {

TEST(StringsTest, CaseFoldingTouchesOnlyAsciiLetters) {
  EXPECT_EQ(ToLower("Hello, WORLD 42_Z@["), "hello, world 42_z@[");
  EXPECT_EQ(ToUpper("Hello, world 42_a`{"), "HELLO, WORLD 42_A`{");
  EXPECT_EQ(ToLower('Q'), 'q');
  EXPECT_EQ(ToUpper('q'), 'Q');
  EXPECT_EQ(ToLower('-'), '-');
  // UTF-8 bytes (negative chars) pass through unchanged: no locale, no undefined behaviour.
  EXPECT_EQ(ToLower("\xC3\x89T\xC3\x89"), "\xC3\x89t\xC3\x89");
  EXPECT_EQ(ToUpper("\xC3\xA9t\xC3\xA9"), "\xC3\xA9T\xC3\xA9");
  EXPECT_EQ(ToLower(""), "");
  EXPECT_EQ(ToLower(std::string_view("A\0B", 3)), std::string("a\0b", 3));
}

TEST(StringsTest, EqualsIgnoreCase) {
  EXPECT_TRUE(EqualsIgnoreCase("Content-Type", "content-TYPE"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_FALSE(EqualsIgnoreCase("abc", "abcd"));
  EXPECT_FALSE(EqualsIgnoreCase("abc", "abd"));
  // '@' and '`' are 0x20 apart like 'A' and 'a', but they are not letters.
  EXPECT_FALSE(EqualsIgnoreCase("@", "`"));
  EXPECT_FALSE(EqualsIgnoreCase("[", "{"));
  EXPECT_FALSE(EqualsIgnoreCase("\xC3\x89", "\xC3\xA9"));  // É and é: not ASCII
}

TEST(StringsTest, ContainsIgnoreCase) {
  EXPECT_TRUE(ContainsIgnoreCase("SELECT * FROM INFORMATION_SCHEMA.tables", "information_schema"));
  EXPECT_TRUE(ContainsIgnoreCase("abc", ""));
  EXPECT_FALSE(ContainsIgnoreCase("informatio_schema", "information_schema"));
  EXPECT_FALSE(ContainsIgnoreCase("ab", "abc"));
}

TEST(StringsTest, StartsWithIgnoreCase) {
  EXPECT_TRUE(StartsWithIgnoreCase("SESSION.sql_mode", "session."));
  EXPECT_TRUE(StartsWithIgnoreCase("abc", ""));
  EXPECT_TRUE(StartsWithIgnoreCase("abc", "ABC"));
  EXPECT_FALSE(StartsWithIgnoreCase("ab", "abc"));
  EXPECT_FALSE(StartsWithIgnoreCase("global.x", "session."));
}

TEST(StringsTest, TrimRemovesAsciiWhitespaceAtBothEnds) {
  EXPECT_EQ(Trim("  \t a b \r\n"), "a b");
  EXPECT_EQ(Trim("\v\fx\f\v"), "x");
  EXPECT_EQ(Trim("   "), "");
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim("none"), "none");
  EXPECT_EQ(Trim("\xC2\xA0x\xC2\xA0"), "\xC2\xA0x\xC2\xA0");  // U+00A0 is not ASCII space
  const std::string text = " kept ";
  const std::string_view trimmed = Trim(text);
  EXPECT_EQ(trimmed.data(), text.data() + 1);  // a view into the argument, no copy
  EXPECT_TRUE(IsAsciiSpace(' '));
  EXPECT_FALSE(IsAsciiSpace('\0'));
  EXPECT_FALSE(IsAsciiSpace('_'));
}

TEST(StringsTest, AppendZeroPaddedPadsToTheWidthAndKeepsLongerNumbers) {
  std::string out = "x";
  AppendZeroPadded(7, 4, &out);
  AppendZeroPadded(12345, 4, &out);
  AppendZeroPadded(0, 2, &out);
  AppendZeroPadded(0, 0, &out);
  AppendZeroPadded(18446744073709551615ULL, 1, &out);
  EXPECT_EQ(out,
            "x000712345000"
            "18446744073709551615");
}

}  // namespace
}  // namespace millrace
