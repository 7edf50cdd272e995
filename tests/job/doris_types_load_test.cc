// Every Doris column type, loaded by a streaming job into a Doris table from CSV, Parquet and
// JSON files, arrives in its mapped DuckDB type with its value (table/doris_types.h).
#include <gtest/gtest.h>

#include "job/job_test_util.h"

namespace millrace::job {
namespace {

struct TypeCase {
  const char* name;      // the test's name
  const char* doris;     // the column type as a Doris script writes it
  const char* duckdb;    // typeof() of the loaded value
  const char* value;     // a DuckDB literal of the source file's value
  const char* expected;  // the loaded value as text
};

const TypeCase kCases[] = {
    {"TinyInt", "TINYINT", "TINYINT", "CAST(-7 AS TINYINT)", "-7"},
    {"SmallInt", "SMALLINT", "SMALLINT", "CAST(300 AS SMALLINT)", "300"},
    {"Int", "INT", "INTEGER", "70000", "70000"},
    {"BigInt", "BIGINT", "BIGINT", "9000000000", "9000000000"},
    // Past 64 bits JSON numbers are guessed as BIGINT by DuckDB's reader, which then fails.
    // Parquet has no 128-bit integer: a producer writes DECIMAL(38, 0) (DuckDB writes a HUGEINT
    // as a lossy DOUBLE). In JSON it is a number past 64 bits.
    {"LargeInt", "LARGEINT", "HUGEINT", "CAST('12345678901234567890' AS DECIMAL(38, 0))",
     "12345678901234567890"},
    {"Float", "FLOAT", "FLOAT", "CAST(1.5 AS FLOAT)", "1.5"},
    {"Double", "DOUBLE", "DOUBLE", "CAST(2.25 AS DOUBLE)", "2.25"},
    {"Decimal", "DECIMAL(10, 2)", "DECIMAL(10,2)", "CAST(12.34 AS DECIMAL(10,2))", "12.34"},
    {"DecimalV3", "DECIMALV3(38, 9)", "DECIMAL(38,9)", "CAST(1.5 AS DECIMAL(38,9))", "1.500000000"},
    {"Date", "DATE", "DATE", "DATE '2024-02-29'", "2024-02-29"},
    {"DateV2", "DATEV2", "DATE", "DATE '2024-03-01'", "2024-03-01"},
    {"Datetime", "DATETIME", "TIMESTAMP", "TIMESTAMP '2024-01-02 03:04:05'", "2024-01-02 03:04:05"},
    {"DatetimeV2", "DATETIMEV2(6)", "TIMESTAMP", "TIMESTAMP '2024-01-02 03:04:05.123456'",
     "2024-01-02 03:04:05.123456"},
    {"Boolean", "BOOLEAN", "BOOLEAN", "true", "true"},
    {"Char", "CHAR(3)", "VARCHAR", "'abc'", "abc"},
    {"Varchar", "VARCHAR(20)", "VARCHAR", "'hello'", "hello"},
    {"String", "STRING", "VARCHAR", "'a string'", "a string"},
    {"Json", "JSON", "JSON", "'{\"a\":1}'::JSON", "{\"a\":1}"},
    {"Jsonb", "JSONB", "JSON", "'[1,2]'::JSON", "[1,2]"},
    {"Variant", "VARIANT", "JSON", "'{\"v\":true}'::JSON", "{\"v\":true}"},
    {"Array", "ARRAY<INT>", "INTEGER[]", "[1, 2, 3]", "[1, 2, 3]"},
    // In JSON a map is an object, which DuckDB's reader alone would take for a STRUCT.
    {"Map", "MAP<STRING,INT>", "MAP(VARCHAR, INTEGER)", "MAP {'x': 1, 'y': 2}", "{x=1, y=2}"},
    {"Struct", "STRUCT<s_id:INT, s_tags:ARRAY<STRING>>", "STRUCT(s_id INTEGER, s_tags VARCHAR[])",
     "{'s_id': 1, 's_tags': ['a', 'b']}", "{'s_id': 1, 's_tags': [a, b]}"},
};

class DorisTypesLoadTest : public LocalJobTest, public ::testing::WithParamInterface<TypeCase> {};

TEST_P(DorisTypesLoadTest, LoadsFromEachFormatIntoItsMappedType) {
  const TypeCase& type = GetParam();
  engine::Connection& conn = harness_.conn();
  Status created = CreateDorisTable(
      conn, std::string("CREATE TABLE typed (k INT, v ") + type.doris + ") DUPLICATE KEY(k)");
  ASSERT_TRUE(created.ok()) << created.ToString();

  const std::vector<std::pair<std::string, std::string>> formats = {
      {"csv", "SELECT c1, c2"}, {"parquet", "SELECT k, v"}, {"json", "SELECT k, v"}};
  int k = 0;
  for (const auto& [format, select] : formats) {
    ++k;
    const std::string dir = in_ + "/" + format;
    std::filesystem::create_directories(dir);
    const std::string copy_options =
        format == "csv" ? "FORMAT csv, HEADER false" : "FORMAT " + format;
    Status written =
        conn.Execute("COPY (SELECT " + std::to_string(k) + " AS k, " + type.value + " AS v) TO '" +
                     dir + "/f." + format + "' (" + copy_options + ")");
    ASSERT_TRUE(written.ok()) << format << ": " << written.ToString();
    auto created = harness_.Run(
        "CREATE JOB " + format +
        " ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO "
        "INSERT INTO typed " +
        select + " FROM local(\"file_path\" = \"" + dir +
        "/*\", "
        "\"format\" = \"" +
        format + "\"" +
        // DuckDB's CSV writer quotes a value holding a comma or a quote, doubling quotes.
        (format == "csv" ? ", \"column_separator\" = \",\", \"enclose\" = '\"', \"escape\" = '\"'"
                         : "") +
        ")");
    ASSERT_TRUE(created.ok()) << format << ": " << created.status().ToString();
  }
  ASSERT_TRUE(harness_.WaitFor(
      [&] {
        return harness_.Value("SELECT count(*) FROM typed") == std::to_string(formats.size());
      },
      std::chrono::seconds(20)))
      << ::testing::PrintToString(harness_.QueryExpanded(
             "SELECT Name, Status, ErrorMsg FROM jobs(\"type\" = \"insert\")"));
  EXPECT_EQ(harness_.Query("SELECT DISTINCT typeof(v), CAST(v AS VARCHAR) FROM typed"),
            (std::vector<std::vector<std::string>>{{type.duckdb, type.expected}}));
}

INSTANTIATE_TEST_SUITE_P(Types, DorisTypesLoadTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<TypeCase>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace millrace::job
