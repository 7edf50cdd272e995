#include "load/json_numbers.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "testing/temp_dir.h"

namespace millrace::load {
namespace {

std::string Quoted(const std::string& json) {
  testing::TempDir dir;
  {
    std::ofstream out(dir.Join("in.json"), std::ios::binary);
    out << json;
  }
  Status status = QuoteJsonNumbers(dir.Join("in.json"), dir.Join("out.json"));
  EXPECT_TRUE(status.ok()) << status.ToString();
  std::ifstream in(dir.Join("out.json"), std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(JsonNumbersTest, NumbersBecomeStringsOfTheirDigits) {
  EXPECT_EQ(Quoted("{\"a\":12345678901234567890.123,\"b\":-1e-7, \"c\": [1,2.50]}\n"),
            "{\"a\":\"12345678901234567890.123\",\"b\":\"-1e-7\", \"c\": [\"1\",\"2.50\"]}\n");
  EXPECT_EQ(Quoted("7"), "\"7\"");
  EXPECT_EQ(Quoted("[0]\n[-3]"), "[\"0\"]\n[\"-3\"]");
}

TEST(JsonNumbersTest, EverythingElseIsCopiedUnchanged) {
  // Digits inside strings (escaped quotes included), keys, literals and line ends.
  const std::string untouched =
      "{\"k1\": \"12\", \"s\": \"a\\\"3\\\\\", \"t\": true, \"n\": null, \"f\": false}\r\n";
  EXPECT_EQ(Quoted(untouched), untouched);
}

TEST(JsonNumbersTest, ANumberAcrossTwoBlocksIsQuotedOnce) {
  // The reader works in 64 KiB blocks: put a number and a string over the boundary.
  std::string json =
      "{\"pad\": \"" + std::string((1 << 16) - 20, 'x') + "\", \"n\": 123456789.5, \"s\": \"9\"}";
  std::string expected = json;
  expected.replace(expected.find("123456789.5"), 11, "\"123456789.5\"");
  EXPECT_EQ(Quoted(json), expected);
  std::string escaped = "[\"" + std::string((1 << 16) - 3, 'y') + "\\\"1\", 2]";
  EXPECT_EQ(Quoted(escaped), "[\"" + std::string((1 << 16) - 3, 'y') + "\\\"1\", \"2\"]");
}

TEST(JsonNumbersTest, AMissingFileIsAnIoError) {
  testing::TempDir dir;
  EXPECT_EQ(QuoteJsonNumbers(dir.Join("none.json"), dir.Join("out.json")).code(),
            StatusCode::kIoError);
}

}  // namespace
}  // namespace millrace::load
