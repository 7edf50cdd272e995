// Offsets: named parts, canonical text, escapes that round-trip.
#include "job/offset.h"

#include <gtest/gtest.h>

namespace millrace::job {
namespace {

TEST(OffsetTest, TheEmptyOffsetIsEmptyText) {
  EXPECT_EQ(Offset().ToJson(), "");
  EXPECT_EQ(Offset::FileName("").ToJson(), "");
  auto parsed = Offset::Parse("");
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->empty());
}

TEST(OffsetTest, AFileOffsetIsDorisFileName) {
  EXPECT_EQ(Offset::FileName("ev/2026/a.csv").ToJson(), R"({"fileName":"ev/2026/a.csv"})");
  EXPECT_EQ(Offset::FileName("k").Text(kFileNamePart), "k");
  EXPECT_EQ(Offset::FileName("k").Text("lsn"), "");
}

TEST(OffsetTest, SeveralPartsAreCanonicalWhateverTheOrderTheyWereSetIn) {
  const Offset a = Offset().With("lsn", "0/16B6C50").With("snapshot", {{"done", {"t1"}}});
  const Offset b = Offset().With("snapshot", {{"done", {"t1"}}}).With("lsn", "0/16B6C50");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.ToJson(), b.ToJson());
  EXPECT_EQ(a.ToJson(), R"({"lsn":"0/16B6C50","snapshot":{"done":["t1"]}})");
}

TEST(OffsetTest, EscapesRoundTrip) {
  for (const std::string& key : {std::string("a\"b\\c\nd\té"), std::string("日本/\x01\x1f"),
                                 std::string("{\"fileName\":\"x\"}"), std::string("\\u00e9")}) {
    const Offset offset = Offset::FileName(key).With("inflight", {key, "b"});
    auto parsed = Offset::Parse(offset.ToJson());
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(*parsed, offset) << offset.ToJson();
    EXPECT_EQ(parsed->Text(kFileNamePart), key);
    EXPECT_EQ(parsed->ToJson(), offset.ToJson());
  }
  auto escaped = Offset::Parse(R"({"fileName": "a\"b\\c\nd\u00e9"})");
  ASSERT_TRUE(escaped.ok());
  EXPECT_EQ(escaped->Text(kFileNamePart), "a\"b\\c\nd\xc3\xa9");
}

TEST(OffsetTest, TextThatIsNotAJsonObjectIsAnError) {
  for (const char* bad : {"key", "[1]", "{\"fileName\":", "\"x\""}) {
    auto parsed = Offset::Parse(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find(std::string("offset '") + bad + "'"),
              std::string::npos)
        << parsed.status().message();
  }
}

}  // namespace
}  // namespace millrace::job
