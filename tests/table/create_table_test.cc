// Doris's CREATE TABLE: parsed as Doris writes it, made into DuckDB's DDL (run on a real
// DuckDB), printed back as Doris prints it, and refused with errors that name what is wrong.
#include "table/create_table.h"

#include <gtest/gtest.h>

#include "engine/engine_test_util.h"
#include "sql/mysql_errors.h"
#include "table/regression_ddl.h"

namespace millrace::table {
namespace {

CreateTable ParseOk(std::string_view sql) {
  auto parsed = ParseCreateTable(sql);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? std::move(parsed).value() : CreateTable{};
}

uint16_t Errno(std::string_view sql) {
  auto parsed = ParseCreateTable(sql);
  EXPECT_FALSE(parsed.ok()) << sql;
  return parsed.ok() ? 0 : sql::ClassifyError(parsed.status()).code;
}

std::string Error(std::string_view sql) {
  auto parsed = ParseCreateTable(sql);
  return parsed.ok() ? "" : parsed.status().message();
}

TEST(CreateTableTest, TheRegressionTestsTableParsesAsWritten) {
  const CreateTable create = ParseOk(kRegressionDdl);
  EXPECT_TRUE(create.if_not_exists);
  const TableDef& def = create.def;
  EXPECT_EQ(def.name, "t");
  EXPECT_EQ(def.database, "");
  EXPECT_EQ(def.model, TableModel::kDuplicate);
  EXPECT_EQ(def.keys, std::vector<std::string>{"c1"});
  ASSERT_EQ(def.columns.size(), 3u);
  EXPECT_EQ(def.columns[1].name, "c2");
  EXPECT_EQ(def.columns[1].doris_type, "text");
  EXPECT_EQ(def.columns[1].duckdb_type, "VARCHAR");
  EXPECT_TRUE(def.columns[1].nullable);
  EXPECT_EQ(def.comment, "OLAP");
  EXPECT_EQ(def.distribution, "DISTRIBUTED BY HASH(`c1`) BUCKETS 3");
  ASSERT_EQ(def.properties.size(), 1u);
  EXPECT_EQ(def.properties[0].first, "replication_allocation");
  EXPECT_EQ(def.properties[0].second, "tag.location.default: 1");
  EXPECT_TRUE(IsDorisCreateTable(kRegressionDdl));
  EXPECT_EQ(DuckDbCreateTable(def, create.if_not_exists),
            "CREATE TABLE IF NOT EXISTS \"t\" (\"c1\" INTEGER, \"c2\" VARCHAR, \"c3\" INTEGER)");
}

TEST(CreateTableTest, EachModelWithItsKeysAndFunctions) {
  const TableDef unique = ParseOk(
                              "CREATE TABLE d.users (`id` BIGINT NOT NULL, `name` VARCHAR(64) "
                              "DEFAULT \"anon\" COMMENT 'display name', `seen` DATETIME(3) "
                              "DEFAULT CURRENT_TIMESTAMP) UNIQUE KEY(`id`) DISTRIBUTED BY "
                              "HASH(`id`) BUCKETS AUTO PROPERTIES (\"enable_unique_key_merge_on_"
                              "write\" = \"true\")")
                              .def;
  EXPECT_EQ(unique.model, TableModel::kUnique);
  EXPECT_EQ(unique.database, "d");
  EXPECT_EQ(unique.columns[1].doris_type, "varchar(64)");
  EXPECT_EQ(unique.columns[1].default_doris, "\"anon\"");
  EXPECT_EQ(unique.columns[1].comment, "display name");
  EXPECT_EQ(unique.columns[2].doris_type, "datetime(3)");
  EXPECT_EQ(DuckDbCreateTable(unique, false),
            "CREATE TABLE \"d\".\"users\" (\"id\" BIGINT NOT NULL, \"name\" VARCHAR DEFAULT "
            "'anon', \"seen\" TIMESTAMP DEFAULT CAST(current_localtimestamp() AS TIMESTAMP), "
            "PRIMARY KEY (\"id\"))");

  const TableDef aggregate = ParseOk(
                                 "CREATE TABLE s (k1 DATE, k2 INT, v_sum BIGINT SUM DEFAULT \"0\", "
                                 "v_max INT MAX, v_min INT MIN NULL, v_last STRING REPLACE, "
                                 "v_set STRING REPLACE_IF_NOT_NULL) AGGREGATE KEY(k1, k2) "
                                 "DISTRIBUTED BY HASH(k1) BUCKETS 8")
                                 .def;
  EXPECT_EQ(aggregate.model, TableModel::kAggregate);
  EXPECT_EQ(aggregate.keys, (std::vector<std::string>{"k1", "k2"}));
  EXPECT_EQ(aggregate.columns[2].aggregation, Aggregation::kSum);
  EXPECT_EQ(aggregate.columns[6].aggregation, Aggregation::kReplaceIfNotNull);
  EXPECT_EQ(DuckDbCreateTable(aggregate, false),
            "CREATE TABLE \"s\" (\"k1\" DATE, \"k2\" INTEGER, \"v_sum\" BIGINT DEFAULT '0', "
            "\"v_max\" INTEGER, \"v_min\" INTEGER, \"v_last\" VARCHAR, \"v_set\" VARCHAR, "
            "PRIMARY KEY (\"k1\", \"k2\"))");

  // Without a key clause: DUPLICATE, keyed on the first columns up to the first string one.
  const TableDef plain = ParseOk("CREATE TABLE p (a INT, b STRING, c INT, d INT)").def;
  EXPECT_EQ(plain.model, TableModel::kDuplicate);
  EXPECT_EQ(plain.keys, (std::vector<std::string>{"a", "b"}));
}

TEST(CreateTableTest, DorisTypesMapToDuckDbTypes) {
  const TableDef def = ParseOk(
                           "CREATE TABLE ty (a TINYINT, b SMALLINT, c INT, d BIGINT, e LARGEINT, "
                           "f FLOAT, g DOUBLE, h DECIMAL(10,2), i DECIMALV3(38, 9), j DECIMAL, "
                           "k DATE, l DATEV2, m DATETIME, n DATETIMEV2(6), o BOOLEAN, p CHAR(3), "
                           "q VARCHAR(20), r STRING, s JSON, t JSONB, u VARIANT, v ARRAY<INT>, "
                           "w ARRAY<ARRAY<STRING>>, x MAP<STRING,ARRAY<INT>>, "
                           "y STRUCT<s_id:INT, s_tags:ARRAY<STRING>>)")
                           .def;
  std::vector<std::string> doris;
  std::vector<std::string> duckdb;
  for (const Column& column : def.columns) {
    doris.push_back(column.doris_type);
    duckdb.push_back(column.duckdb_type);
  }
  EXPECT_EQ(doris, (std::vector<std::string>{"tinyint",
                                             "smallint",
                                             "int",
                                             "bigint",
                                             "largeint",
                                             "float",
                                             "double",
                                             "decimal(10,2)",
                                             "decimal(38,9)",
                                             "decimal(9,0)",
                                             "date",
                                             "date",
                                             "datetime",
                                             "datetime(6)",
                                             "boolean",
                                             "char(3)",
                                             "varchar(20)",
                                             "text",
                                             "json",
                                             "json",
                                             "variant",
                                             "array<int>",
                                             "array<array<text>>",
                                             "map<text,array<int>>",
                                             "struct<s_id:int,s_tags:array<text>>"}));
  EXPECT_EQ(duckdb, (std::vector<std::string>{"TINYINT",
                                              "SMALLINT",
                                              "INTEGER",
                                              "BIGINT",
                                              "HUGEINT",
                                              "FLOAT",
                                              "DOUBLE",
                                              "DECIMAL(10,2)",
                                              "DECIMAL(38,9)",
                                              "DECIMAL(9,0)",
                                              "DATE",
                                              "DATE",
                                              "TIMESTAMP",
                                              "TIMESTAMP",
                                              "BOOLEAN",
                                              "VARCHAR",
                                              "VARCHAR",
                                              "VARCHAR",
                                              "JSON",
                                              "JSON",
                                              "JSON",
                                              "INTEGER[]",
                                              "VARCHAR[][]",
                                              "MAP(VARCHAR, INTEGER[])",
                                              "STRUCT(\"s_id\" INTEGER, \"s_tags\" VARCHAR[])"}));
  // DuckDB takes what it was given.
  auto db = engine::OpenOrDie({});
  auto conn = engine::ConnectOrDie(*db);
  Status created = conn->Execute(DuckDbCreateTable(def, false));
  EXPECT_TRUE(created.ok()) << created.ToString();
}

TEST(CreateTableTest, TypesWithoutAnHonestMappingAreRefusedByName) {
  for (const char* type : {"BITMAP", "HLL", "QUANTILE_STATE", "IPV4"}) {
    const std::string sql = std::string("CREATE TABLE x (k INT, v ") + type + ")";
    EXPECT_EQ(Errno(sql), 1235) << type;
    EXPECT_NE(Error(sql).find(std::string(type) + " columns"), std::string::npos) << Error(sql);
  }
  EXPECT_EQ(Errno("CREATE TABLE x (k INT, v BITMAP BITMAP_UNION) AGGREGATE KEY(k)"), 1235);
  EXPECT_NE(Error("CREATE TABLE x (k INT, v DECIMAL(76, 2))").find("1 to 38 digits"),
            std::string::npos);
  EXPECT_NE(Error("CREATE TABLE x (k INT, v FOO)").find("unknown column type FOO"),
            std::string::npos);
  EXPECT_EQ(Errno("CREATE TABLE x (k INT, v FOO)"), 1064);
}

TEST(CreateTableTest, DefinitionsDorisRefusesAreRefusedWithWhy) {
  EXPECT_EQ(Error("CREATE TABLE x (a INT, b INT) UNIQUE KEY(c)"),
            "key column c is not a column of x");
  EXPECT_EQ(Error("CREATE TABLE x (a INT, b INT) UNIQUE KEY(b)"),
            "key columns must be the first columns, in order: b is not column 1 of x");
  EXPECT_NE(Error("CREATE TABLE x (a INT, b INT) AGGREGATE KEY(a)").find("needs its function"),
            std::string::npos);
  EXPECT_NE(Error("CREATE TABLE x (a INT, b INT SUM) DUPLICATE KEY(a)")
                .find("only AGGREGATE KEY tables take"),
            std::string::npos);
  EXPECT_EQ(Error("CREATE TABLE x (a INT, a INT)"), "duplicate column a");
  EXPECT_EQ(Errno("CREATE TABLE x (a INT AUTO_INCREMENT, b INT)"), 1235);
  EXPECT_EQ(Errno("CREATE TABLE x (a INT) ENGINE=MYSQL"), 1235);
  EXPECT_EQ(Errno("CREATE EXTERNAL TABLE x (a INT)"), 1235);
  EXPECT_EQ(Errno("CREATE TABLE x (a INT) DUPLICATE KEY(a) UNIQUE KEY(a)"), 1064);
  EXPECT_EQ(Errno("CREATE TABLE x (a INT"), 1064);
  EXPECT_EQ(Errno("CREATE TABLE x (a ARRAY<INT)"), 1064);
  EXPECT_EQ(Errno("CREATE TABLE x (a JSON, b INT) UNIQUE KEY(a)"), 1105);
}

TEST(CreateTableTest, PartitionsIndexesRollupsAndCtasAreKeptAsWritten) {
  const CreateTable create = ParseOk(
      "CREATE TABLE IF NOT EXISTS db1.events (\n"
      "  `dt` DATE NOT NULL,\n"
      "  `id` BIGINT,\n"
      "  `msg` STRING,\n"
      "  INDEX idx_msg (`msg`) USING INVERTED COMMENT 'text search'\n"
      ") DUPLICATE KEY(`dt`, `id`)\n"
      "AUTO PARTITION BY RANGE (date_trunc(`dt`, 'month')) ()\n"
      "DISTRIBUTED BY RANDOM BUCKETS AUTO\n"
      "ROLLUP (r1 (`dt`, `msg`))\n"
      "PROPERTIES (\"replication_num\" = \"1\", \"compression\" = \"zstd\")");
  const TableDef& def = create.def;
  EXPECT_EQ(def.indexes,
            std::vector<std::string>{"INDEX idx_msg (`msg`) USING INVERTED COMMENT 'text search'"});
  EXPECT_EQ(def.partition, "AUTO PARTITION BY RANGE (date_trunc(`dt`, 'month')) ()");
  EXPECT_EQ(def.distribution, "DISTRIBUTED BY RANDOM BUCKETS AUTO");
  EXPECT_EQ(def.rollup, "ROLLUP (r1 (`dt`, `msg`))");
  EXPECT_EQ(def.properties.size(), 2u);
  const TableDef range = ParseOk(
                             "CREATE TABLE r (d DATE, v INT) PARTITION BY RANGE(d) (PARTITION p1 "
                             "VALUES LESS THAN (\"2024-01-01\"), PARTITION p2 VALUES [(\"2024-01-"
                             "01\"), (\"2025-01-01\"))) DISTRIBUTED BY HASH(d)")
                             .def;
  EXPECT_EQ(range.partition.rfind("PARTITION BY RANGE(d) (PARTITION p1", 0), 0u);
  EXPECT_EQ(range.distribution, "DISTRIBUTED BY HASH(d)");

  const CreateTable ctas =
      ParseOk("CREATE TABLE t2 PROPERTIES (\"replication_num\" = \"1\") AS SELECT * FROM t1");
  EXPECT_EQ(ctas.query, "SELECT * FROM t1");
  const CreateTable like = ParseOk("CREATE TABLE t3 LIKE db.t1");
  ASSERT_TRUE(like.like);
  EXPECT_EQ(like.like->first, "db");
  EXPECT_EQ(like.like->second, "t1");
}

TEST(CreateTableTest, ShowCreateTableParsesBackToTheSameTable) {
  for (const char* sql :
       {kRegressionDdl,
        "CREATE TABLE s (k1 DATE, k2 INT, v_sum BIGINT SUM DEFAULT \"0\", v_last STRING "
        "REPLACE NOT NULL COMMENT 'last \"seen\" value') AGGREGATE KEY(k1, k2) COMMENT 'it''s "
        "sums' DISTRIBUTED BY HASH(k1) BUCKETS 8",
        "CREATE TABLE u (`id` BIGINT NOT NULL, `tags` ARRAY<STRING>, `at` DATETIME DEFAULT "
        "CURRENT_TIMESTAMP, INDEX i (`tags`) USING INVERTED) UNIQUE KEY(`id`) AUTO PARTITION BY "
        "LIST (`id`) () PROPERTIES (\"a\" = \"1\", \"b\" = \"x\"\"y\")"}) {
    const TableDef def = ParseOk(sql).def;
    const std::string shown = ShowCreateTable(def);
    const TableDef again = ParseOk(shown).def;
    EXPECT_EQ(ShowCreateTable(again), shown) << sql;
    EXPECT_EQ(DuckDbCreateTable(again, false), DuckDbCreateTable(def, false)) << shown;
    EXPECT_EQ(again.comment, def.comment);
    EXPECT_EQ(again.properties, def.properties);
  }
  EXPECT_EQ(ShowCreateTable(ParseOk(kRegressionDdl).def),
            "CREATE TABLE `t` (\n"
            "  `c1` int NULL,\n"
            "  `c2` text NULL,\n"
            "  `c3` int NULL\n"
            ") ENGINE=OLAP\n"
            "DUPLICATE KEY(`c1`)\n"
            "COMMENT 'OLAP'\n"
            "DISTRIBUTED BY HASH(`c1`) BUCKETS 3\n"
            "PROPERTIES (\n"
            "\"replication_allocation\" = \"tag.location.default: 1\"\n"
            ");");
}

TEST(CreateTableTest, PlainDuckDbDdlIsNotDoris) {
  EXPECT_FALSE(IsDorisCreateTable("CREATE TABLE t (a INTEGER PRIMARY KEY, b VARCHAR)"));
  EXPECT_FALSE(IsDorisCreateTable("CREATE TABLE t AS SELECT 1 AS a"));
  EXPECT_FALSE(IsDorisCreateTable("CREATE TABLE t (a INT, UNIQUE (a))"));
  EXPECT_TRUE(IsDorisCreateTable("CREATE TABLE t (a INT, b INT) UNIQUE KEY (a)"));
  EXPECT_TRUE(IsDorisCreateTable("CREATE TABLE `t` (a INT)"));
  EXPECT_TRUE(IsDorisCreateTable("CREATE TABLE t (a ARRAY<INT>)"));
  EXPECT_TRUE(IsDorisCreateTable("CREATE TABLE t LIKE s"));
  EXPECT_TRUE(IsDorisCreateTable("CREATE TABLE t (k INT, v BITMAP)"));
  EXPECT_TRUE(IsDorisCreateTable("CREATE TABLE IF NOT EXISTS d.t LIKE d.s"));
}

}  // namespace
}  // namespace millrace::table
