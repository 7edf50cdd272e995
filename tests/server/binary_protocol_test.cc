// COM_STMT_EXECUTE's parameters decoded, and what a malformed one is told.
#include "server/binary_protocol.h"

#include <gtest/gtest.h>

#include <cstring>

namespace millrace::server {
namespace {

using sql::ParamValue;

// An execute body: id 7, no cursor, one iteration, then `rest`.
std::string Execute(std::string_view rest) {
  WireWriter w;
  w.Int4(7).Int1(0).Int4(1).Raw(rest);
  return w.Take();
}

TEST(BinaryProtocolTest, ParametersOfEveryKindAreDecoded) {
  WireWriter w;
  w.Int1(0b0000'0100);  // NULL bitmap: the third of 9 parameters is NULL
  w.Int1(0);
  w.Int1(1);  // types follow
  w.Int2(1 | 0x8000).Int2(8).Int2(6).Int2(5).Int2(253).Int2(12).Int2(11).Int2(252).Int2(2);
  w.Int1(200);                        // TINY UNSIGNED
  w.Int8(static_cast<uint64_t>(-5));  // LONGLONG
  double d = -0.25;                   // the NULL has no value
  uint64_t bits = 0;
  std::memcpy(&bits, &d, 8);
  w.Int8(bits);                                                               // DOUBLE
  w.LenEncString("text");                                                     // VAR_STRING
  w.Int1(11).Int2(2024).Int1(2).Int1(29).Int1(23).Int1(59).Int1(58).Int4(7);  // DATETIME
  w.Int1(8).Int1(1).Int4(2).Int1(3).Int1(4).Int1(5);                          // TIME -2d 3:04:05
  w.LenEncString(std::string("\xff\x00", 2));                                 // BLOB: bytes
  w.Int2(static_cast<uint16_t>(-2));                                          // SHORT
  std::vector<uint16_t> types;
  auto request =
      ParseExecute(Execute(w.data()), 9, &types, std::vector<std::optional<std::string>>(9));
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  const auto& p = request->params;
  ASSERT_EQ(p.size(), 9u);
  EXPECT_EQ(request->statement_id, 7u);
  EXPECT_EQ(p[0].kind, ParamValue::Kind::kUInt);
  EXPECT_EQ(p[0].u, 200u);
  EXPECT_EQ(p[1].kind, ParamValue::Kind::kInt);
  EXPECT_EQ(p[1].i, -5);
  EXPECT_EQ(p[2].kind, ParamValue::Kind::kNull);
  EXPECT_EQ(p[3].d, -0.25);
  EXPECT_EQ(p[4].text, "text");
  EXPECT_EQ(p[5].text, "2024-02-29 23:59:58.000007");
  EXPECT_EQ(p[6].text, "-51:04:05");
  EXPECT_EQ(p[7].kind, ParamValue::Kind::kBytes);
  EXPECT_EQ(p[8].i, -2);
  // The next execution may leave the types out: the bound ones are kept.
  WireWriter again;
  again.Int1(0).Int1(0).Int1(0);  // no NULLs (the NULL type has no value), no types
  again.Int1(1).Int8(2).Int8(bits).LenEncString("t2").Int1(0).Int1(0).LenEncString("b").Int2(3);
  auto second =
      ParseExecute(Execute(again.data()), 9, &types, std::vector<std::optional<std::string>>(9));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->params[0].u, 1u);
  EXPECT_EQ(second->params[5].text, "0000-00-00");
  EXPECT_EQ(second->params[6].text, "00:00:00");
  EXPECT_EQ(second->params[8].i, 3);
}

TEST(BinaryProtocolTest, MalformedExecutesAreRefusedNamingWhatIsWrong) {
  std::vector<uint16_t> types;
  const std::vector<std::optional<std::string>> none(2);
  auto message = [&](std::string_view body) {
    auto request = ParseExecute(body, 2, &types, none);
    EXPECT_FALSE(request.ok());
    return request.ok() ? std::string() : request.status().message();
  };
  EXPECT_NE(message("\x07\x00").find("header"), std::string::npos);
  EXPECT_NE(message(Execute("")).find("NULL bitmap"), std::string::npos);
  // Types never bound.
  EXPECT_NE(message(Execute(std::string("\x00\x00", 2))).find("no parameter types"),
            std::string::npos);
  // A type MySQL does not define.
  WireWriter unknown;
  unknown.Int1(0).Int1(1).Int2(100).Int2(3).Int1(1).Int4(5);
  EXPECT_NE(message(Execute(unknown.data())).find("does not define"), std::string::npos);
  // A value cut short.
  WireWriter cut;
  cut.Int1(0).Int1(1).Int2(3).Int2(253).Int1(1).Int1(0);
  EXPECT_NE(message(Execute(cut.data())).find("ends inside parameter"), std::string::npos);
  WireWriter long_string;
  long_string.Int1(0).Int1(1).Int2(3).Int2(253).Int4(1).LenEncInt(1000).Raw("short");
  EXPECT_NE(message(Execute(long_string.data())).find("parameter 2"), std::string::npos);
}

TEST(BinaryProtocolTest, LongDataTakesThePlaceOfAValue) {
  std::vector<uint16_t> types;
  std::vector<std::optional<std::string>> long_data(2);
  long_data[0] = "sent in pieces";
  WireWriter w;
  w.Int1(0).Int1(1).Int2(252).Int2(3).Int4(42);
  auto request = ParseExecute(Execute(w.data()), 2, &types, long_data);
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  EXPECT_EQ(request->params[0].text, "sent in pieces");
  EXPECT_EQ(request->params[1].i, 42);
}

}  // namespace
}  // namespace millrace::server
