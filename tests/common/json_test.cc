#include "common/json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace millrace {
namespace {

TEST(JsonTest, QuoteEscapesWhatJsonRequiresAndKeepsUtf8) {
  EXPECT_EQ(JsonQuote("a\"b\\c\nd\r\te\b\f\x01\x1f"),
            "\"a\\\"b\\\\c\\nd\\r\\te\\b\\f\\u0001\\u001f\"");
  EXPECT_EQ(JsonQuote("é 日本 /\x7f"), "\"é 日本 /\x7f\"");
  EXPECT_EQ(JsonQuote(std::string("nul\0", 4)), "\"nul\\u0000\"");
}

TEST(JsonTest, QuotedTextParsesBackToItself) {
  for (const std::string& text :
       {std::string(), std::string("a\"b\\c\nd\u00e9"), std::string("\x01\x02\x1f\x7f"),
        std::string("日本/データ"), std::string("literal \\u00e9"), std::string("n\0l", 3)}) {
    auto parsed = ParseJson(JsonQuote(text));
    ASSERT_TRUE(parsed.ok()) << JsonQuote(text) << ": " << parsed.status().ToString();
    ASSERT_TRUE(parsed->is_string()) << JsonQuote(text);
    EXPECT_EQ(parsed->get<std::string>(), text);
  }
}

TEST(JsonTest, InvalidUtf8RendersAsReplacementCharacters) {
  // Keys can be any bytes; rendering must not throw, and its output must stay valid JSON.
  EXPECT_EQ(JsonQuote("a\xff\xc3(b"), "\"a\xef\xbf\xbd\xef\xbf\xbd(b\"");
  nlohmann::json object = nlohmann::json::object();
  object["k\xfe"] = "v\x80";
  const std::string text = RenderJson(object);
  EXPECT_EQ(text, "{\"k\xef\xbf\xbd\":\"v\xef\xbf\xbd\"}");
  EXPECT_TRUE(ParseJson(text).ok());
}

TEST(JsonTest, ParseErrorsAreInvalidArgumentWithThePosition) {
  auto bad = ParseJson("{\"a\": tru}");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "not valid JSON: parse error at line 1, column 10: syntax error while parsing value "
            "- invalid literal; last read: '\"a\": tru}'");
  auto utf8 = ParseJson("\"a\xff\"");
  ASSERT_FALSE(utf8.ok());
  EXPECT_EQ(utf8.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(utf8.status().message().find("ill-formed UTF-8 byte"), std::string::npos)
      << utf8.status().message();
  EXPECT_EQ(ParseJson("").status().message(),
            "not valid JSON: parse error at line 1, column 1: syntax error while parsing value - "
            "unexpected end of input; expected '[', '{', or a literal");
}

}  // namespace
}  // namespace millrace
