#include "engine/query_result.h"

#include <gtest/gtest.h>

#include "engine/database.h"
#include "engine/engine_test_util.h"
#include "testing/temp_dir.h"

namespace millrace::engine {
namespace {

TEST(QueryResultTest, EveryCommonTypeRendersAsDuckDBPrintsIt) {
  auto db = OpenOrDie({});
  auto conn = ConnectOrDie(*db);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"true", "true"},
      {"CAST(-7 AS TINYINT)", "-7"},
      {"CAST(300 AS SMALLINT)", "300"},
      {"CAST(-2147483648 AS INTEGER)", "-2147483648"},
      {"CAST(9223372036854775807 AS BIGINT)", "9223372036854775807"},
      {"CAST(18446744073709551615 AS UBIGINT)", "18446744073709551615"},
      {"CAST('-170141183460469231731687303715884105727' AS HUGEINT)",
       "-170141183460469231731687303715884105727"},
      {"CAST(1.5 AS FLOAT)", "1.5"},
      {"CAST(0.1 AS DOUBLE)", "0.1"},
      {"CAST(1501 AS DOUBLE)", "1501.0"},
      {"CAST(-2 AS FLOAT)", "-2.0"},
      {"CAST(1e20 AS DOUBLE)", "1e+20"},
      {"CAST('-12.345' AS DECIMAL(5,3))", "-12.345"},
      {"CAST('0.05' AS DECIMAL(18,4))", "0.0500"},
      {"CAST('123456789012345678901234.5' AS DECIMAL(38,1))", "123456789012345678901234.5"},
      {"'héllo wörld'", "héllo wörld"},
      {"DATE '2026-12-02'", "2026-12-02"},
      {"DATE '1969-07-20'", "1969-07-20"},
      {"DATE '0044-03-15 (BC)'", "0044-03-15 (BC)"},
      {"TIME '13:04:05.25'", "13:04:05.25"},
      {"TIMESTAMP '2026-01-02 03:04:05'", "2026-01-02 03:04:05"},
      {"TIMESTAMP '2026-01-02 03:04:05.123456'", "2026-01-02 03:04:05.123456"},
      {"CAST(TIMESTAMP '1960-01-01 00:00:01.5' AS TIMESTAMP_MS)", "1960-01-01 00:00:01.5"},
      {"CAST(TIMESTAMP '2000-01-01 00:00:01' AS TIMESTAMP_S)", "2000-01-01 00:00:01"},
      {"TIMESTAMP_NS '2000-01-01 00:00:00.123456789'", "2000-01-01 00:00:00.123456789"},
      {"TIMESTAMP '0044-03-15 (BC) 12:00:00.5'", "0044-03-15 (BC) 12:00:00.5"},
      {"INTERVAL 3 DAY + INTERVAL 2 HOUR", "3 days 02:00:00"},
      {"INTERVAL 14 MONTH", "1 year 2 months"},
      {"'5f3c8e2a-1b4d-4c6e-9f7a-0123456789ab'::UUID", "5f3c8e2a-1b4d-4c6e-9f7a-0123456789ab"},
      {"[1, 2, NULL]", "[1, 2, NULL]"},
      {"['a', 'b']", "[a, b]"},
      {"['a,b', 'it''s', '']", "['a,b', 'it\\'s', '']"},
      {"{'x': 1, 'y': 'z'}", "{'x': 1, 'y': z}"},
      {"MAP {'k': 1}", "{k=1}"},
      {"NULL::INTEGER", "NULL"},
  };
  for (const auto& [expr, expected] : cases) {
    EXPECT_EQ(QueryValue(*conn, "SELECT " + expr), expected) << expr;
    // Our rendering agrees with DuckDB's own cast to VARCHAR.
    if (expected != "NULL") {
      EXPECT_EQ(QueryValue(*conn, "SELECT CAST(" + expr + " AS VARCHAR)"), expected) << expr;
    }
  }
}

TEST(QueryResultTest, ColumnNamesAndTypes) {
  auto db = OpenOrDie({});
  auto conn = ConnectOrDie(*db);
  auto result = conn->Query("SELECT 1::INTEGER AS a, 'x' AS b, 1.25::DECIMAL(10,2) AS c");
  ASSERT_TRUE(result.ok());
  ASSERT_EQ((*result)->column_count(), 3u);
  EXPECT_EQ((*result)->column_name(0), "a");
  EXPECT_EQ((*result)->column_type(0).id, TypeId::kInteger);
  EXPECT_EQ((*result)->column_type(1).id, TypeId::kVarchar);
  EXPECT_EQ(TypeName((*result)->column_type(2)), "DECIMAL(10,2)");
  EXPECT_TRUE((*result)->returns_rows());
  auto chunk = (*result)->Next();
  ASSERT_TRUE(chunk.ok() && *chunk);
  EXPECT_DOUBLE_EQ((*chunk)->GetDouble(2, 0), 1.25);
  auto end = (*result)->Next();
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(*end, nullptr);
}

TEST(QueryResultTest, EpochMicros) {
  auto db = OpenOrDie({});
  auto conn = ConnectOrDie(*db);
  auto result = conn->Query(
      "SELECT DATE '1970-01-02', TIMESTAMP '1970-01-01 00:00:01.5', "
      "CAST(TIMESTAMP '1970-01-01 00:00:02' AS TIMESTAMP_S)");
  ASSERT_TRUE(result.ok());
  auto chunk = (*result)->Next();
  ASSERT_TRUE(chunk.ok() && *chunk);
  EXPECT_EQ((*chunk)->GetEpochMicros(0, 0), 86'400'000'000);
  EXPECT_EQ((*chunk)->GetEpochMicros(1, 0), 1'500'000);
  EXPECT_EQ((*chunk)->GetEpochMicros(2, 0), 2'000'000);
}

// Ten million rows pass through chunk by chunk; memory after the whole result is what it was
// after the first million, so nothing accumulates (DuckDB's own buffers are warm by then).
TEST(QueryResultTest, TenMillionRowsStreamWithFlatMemory) {
  auto db = OpenOrDie({.threads = 2});
  auto conn = ConnectOrDie(*db);
  auto result = conn->Query(
      "SELECT range AS id, 'row-' || range AS label, range * 0.5 AS half FROM range(10000000)");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  constexpr int64_t kRows = 10'000'000;
  int64_t rows = 0;
  int64_t id_sum = 0;
  size_t label_bytes = 0;
  size_t rss_after_first_million = 0;
  size_t peak_rss = 0;
  while (true) {
    auto chunk = (*result)->Next();
    ASSERT_TRUE(chunk.ok()) << chunk.status().ToString();
    if (*chunk == nullptr) break;
    DataChunk& c = **chunk;
    for (size_t r = 0; r < c.size(); ++r) {
      id_sum += c.GetInt64(0, r);
      label_bytes += c.GetString(1, r).size();
    }
    rows += static_cast<int64_t>(c.size());
    if (rss_after_first_million == 0 && rows >= 1'000'000) {
      rss_after_first_million = testing::CurrentRssBytes();
    }
    peak_rss = std::max(peak_rss, testing::CurrentRssBytes());
  }
  EXPECT_EQ(rows, kRows);
  EXPECT_EQ(id_sum, kRows * (kRows - 1) / 2);
  EXPECT_GT(label_bytes, 10u * 1000 * 1000 * 5);
  // The labels alone are >50 MB and the whole result ~250 MB: a result built in memory
  // would grow by far more than this margin.
  EXPECT_LT(peak_rss, rss_after_first_million + 64u * 1024 * 1024)
      << "after 1M rows: " << rss_after_first_million << " peak: " << peak_rss;
}

TEST(QueryResultTest, AbandoningAResultEarlyIsSafe) {
  auto db = OpenOrDie({});
  auto conn = ConnectOrDie(*db);
  {
    auto result = conn->Query("SELECT range FROM range(100000000)");
    ASSERT_TRUE(result.ok());
    auto chunk = (*result)->Next();
    ASSERT_TRUE(chunk.ok() && *chunk);
  }
  EXPECT_EQ(QueryValue(*conn, "SELECT 42"), "42");
}

}  // namespace
}  // namespace millrace::engine
