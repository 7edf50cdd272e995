// The values of change streams: staging text (PostgreSQL array literals as JSON) and the
// DuckDB expression each value form converts with.
#include "change/change_value.h"

#include <gtest/gtest.h>

namespace millrace::change {
namespace {

TEST(ArrayTest, PostgresArrayLiteralsBecomeJson) {
  EXPECT_EQ(*ArrayToJson("{}"), "[]");
  EXPECT_EQ(*ArrayToJson("{1,NULL,3}"), "[\"1\",null,\"3\"]");
  EXPECT_EQ(*ArrayToJson("{\"x y\",\"q\\\"uote\",\"NULL\",\"{}\"}"),
            "[\"x y\",\"q\\\"uote\",\"NULL\",\"{}\"]");
  EXPECT_EQ(*ArrayToJson("[0:1]={a,b}"), "[\"a\",\"b\"]");
  EXPECT_EQ(ArrayToJson("{{1,2},{3,4}}").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ArrayToJson("{\"open").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ArrayToJson("1,2").status().code(), StatusCode::kInvalidArgument);
}

TEST(ValueSqlTest, EachFormConvertsFromItsText) {
  EXPECT_EQ(ValueSql({"INTEGER", "int"}, "v"), "CAST(v AS INTEGER)");
  EXPECT_EQ(ValueSql({"VARCHAR", "string"}, "v"), "v");
  EXPECT_EQ(ValueSql({"BLOB", "string", ValueForm::kBytea}, "v"), "unhex(substr(v, 3))");
  EXPECT_EQ(ValueSql({"INTEGER[]", "array<int>", ValueForm::kArray}, "v"),
            "CAST(CAST(v AS JSON) AS INTEGER[])");
  EXPECT_EQ(*StageText({"INTEGER", "int"}, "{1}"), "{1}");  // only arrays are restaged
}

}  // namespace
}  // namespace millrace::change
