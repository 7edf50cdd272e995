// A MySQL source's snapshot and its binlog agree, against a real MariaDB 10.11 (one server for
// the binary): the same rows read by SnapshotSelect and decoded from the binlog give the same
// text for every type; a table's description maps every column as its TABLE_MAP does; splits
// by a composite key read every row once, in order; a consistent snapshot's position is where
// the stream of what it does not see begins.
#include <gtest/gtest.h>

#include <map>

#include "cdc/mysql_tables.h"
#include "mysql/binlog_stream.h"
#include "testing/mariadb_server.h"
#include "testing/server_test.h"

namespace millrace::cdc {
namespace {

using mysql::BinlogPosition;
using testing::MariadbServer;

class MysqlSnapshotTest : public millrace::testing::SharedServerTest<MariadbServer> {
 protected:
  static mysql::ConnectParams Params() {
    return {server_->host(), server_->port(), server_->user(), server_->password(), ""};
  }
  static std::string Sql(const std::string& sql) {
    auto out = server_->Sql(sql);
    EXPECT_TRUE(out.ok()) << sql << ": " << out.status().ToString();
    return out.ok() ? *out : "";
  }
  static std::unique_ptr<mysql::MysqlConnection> Connect() {
    auto conn = mysql::MysqlConnection::Connect(Params());
    EXPECT_TRUE(conn.ok()) << conn.status().ToString();
    return conn.ok() ? std::move(conn).value() : nullptr;
  }
  static BinlogPosition End() {
    auto end = server_->BinlogEnd();
    EXPECT_TRUE(end.ok()) << end.status().ToString();
    return end.ok() ? BinlogPosition{end->first, end->second} : BinlogPosition{};
  }
  // The first `count` row images the binlog holds from `from`, with the TABLE_MAP of each (a
  // heartbeat only says the server was idle for a moment: a loaded machine may pause it).
  struct Written {
    mysql::BinlogTable table;
    change::Tuple row;
  };
  static std::vector<Written> Inserted(const BinlogPosition& from, size_t count) {
    auto stream =
        mysql::BinlogStream::Open(Params(), 91, {"", from}, std::chrono::milliseconds(200));
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    std::vector<Written> out;
    if (!stream.ok()) return out;
    for (int heartbeats = 0; out.size() < count && heartbeats < 100;) {
      auto event = (*stream)->Next();
      EXPECT_TRUE(event.ok()) << event.status().ToString();
      if (!event.ok()) break;
      if (std::holds_alternative<mysql::HeartbeatEvent>(event->event)) ++heartbeats;
      if (const auto* rows = std::get_if<mysql::RowsEvent>(&event->event)) {
        for (const mysql::RowChange& change : rows->rows)
          out.push_back({*rows->table, change.after});
      }
    }
    return out;
  }
  static std::vector<mysql::Row> Select(mysql::MysqlConnection& conn, const SourceTable& table,
                                        const std::vector<std::string>& after, int64_t limit) {
    auto rows = conn.Query(SnapshotSelect(conn, table, after, limit));
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? rows->rows : std::vector<mysql::Row>{};
  }
};

TEST_F(MysqlSnapshotTest, ASnapshotAndTheBinlogGiveEveryValueTheSameText) {
  Sql("CREATE DATABASE IF NOT EXISTS shop; CREATE TABLE shop.every (id INT PRIMARY KEY, "
      "ti TINYINT, ui INT UNSIGNED, bi BIGINT UNSIGNED, d DECIMAL(12,3), dw DECIMAL(50,20), "
      "f FLOAT, db DOUBLE, b BIT(5), dt DATE, dtm DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME(2), "
      "y YEAR, c CHAR(5), vc VARCHAR(20), tx TEXT, bl BLOB, bn BINARY(4), vb VARBINARY(10), "
      "e ENUM('a','bb','c'), s SET('x','y','z'), j JSON, lat VARCHAR(10) CHARACTER SET latin1, "
      "emoji VARCHAR(10) CHARACTER SET utf8mb4)");
  const BinlogPosition from = End();
  Sql("SET sql_mode = ''; INSERT INTO shop.every VALUES "
      "(1, -5, 4000000000, 18446744073709551615, -123456789.125, "
      "12345678901234567890.12345678901234567890, 0.1, -2.25e100, b'10101', '2024-02-29', "
      "'1999-12-31 23:59:59.123456', '2024-06-01 12:00:00.5', '-838:59:59.99', 2024, 'ab', "
      "'héllo', 'long text', x'00ff10', x'01', x'0a0b', 'bb', 'x,z', '{\"a\": [1, 2]}', 'café', "
      "'😀'),"
      "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
      "(3, 127, 0, 0, 0, 0, 123456.7, 1e-300, b'0', '0000-00-00', '0000-00-00 00:00:00', "
      "'0000-00-00 00:00:00', '00:00:00', 0, '', '', '', '', x'', x'', 'a', '', 'null', '', '')");
  std::vector<Written> written = Inserted(from, 3);
  ASSERT_EQ(written.size(), 3u);
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  auto table = DescribeMysqlTable(*conn, "shop", "every");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_EQ(table->key, std::vector<size_t>{0});
  // Each column maps as the binlog's TABLE_MAP describes it.
  for (size_t i = 0; i < table->columns.size(); ++i) {
    const change::TypeMapping from_binlog = mysql::MapColumn(written[0].table.columns[i]);
    EXPECT_EQ(table->columns[i].mapping.duckdb_type, from_binlog.duckdb_type)
        << table->columns[i].name;
    EXPECT_EQ(table->columns[i].mapping.doris_type, from_binlog.doris_type)
        << table->columns[i].name;
    EXPECT_EQ(table->columns[i].mapping.form, from_binlog.form) << table->columns[i].name;
  }
  std::vector<mysql::Row> snapshot = Select(*conn, *table, {}, 100);
  ASSERT_EQ(snapshot.size(), 3u);
  for (size_t r = 0; r < 3; ++r) {
    for (size_t i = 0; i < table->columns.size(); ++i) {
      const SourceColumn& column = table->columns[i];
      const change::TupleValue& binlog = written[r].row[i];
      const mysql::Field& copied = snapshot[r][i];
      ASSERT_EQ(binlog.kind == change::TupleValue::Kind::kNull, !copied.has_value())
          << "row " << r + 1 << " column " << column.name << ": binlog " << binlog.text;
      if (!copied) continue;
      if (column.name == "f") {
        // FLOAT: the binlog's shortest text and the snapshot's exact double are one float.
        EXPECT_EQ(std::stof(binlog.text), std::stof(*copied)) << "row " << r + 1;
      } else if (column.name == "db") {
        // DOUBLE: one value, whatever the exponent's spelling ("e+100" / "e100").
        EXPECT_EQ(std::stod(binlog.text), std::stod(*copied)) << "row " << r + 1;
      } else {
        EXPECT_EQ(binlog.text, *copied) << "row " << r + 1 << " column " << column.name;
      }
    }
  }
}

TEST_F(MysqlSnapshotTest, SplitsByACompositeKeyReadEveryRowOnceInOrder) {
  Sql("CREATE DATABASE IF NOT EXISTS shop; CREATE TABLE shop.pairs (a INT, b VARBINARY(8), "
      "ts TIMESTAMP(6) NOT NULL DEFAULT '2000-01-01 00:00:00', v INT, PRIMARY KEY (a, b, ts));"
      "INSERT INTO shop.pairs (a, b, v) VALUES (1, x'00', 1), (1, x'01', 2), (1, x'ff', 3), "
      "(2, x'00', 4), (2, x'', 5), (3, x'7f80', 6), (3, x'80', 7)");
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  auto table = DescribeMysqlTable(*conn, "shop", "pairs");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_EQ(table->key.size(), 3u);
  std::vector<std::string> all;
  for (const mysql::Row& row : Select(*conn, *table, {}, 100))
    all.push_back(*row[3]);
  std::vector<std::string> split;
  std::vector<std::string> after;
  while (true) {
    std::vector<mysql::Row> rows = Select(*conn, *table, after, 2);
    for (const mysql::Row& row : rows)
      split.push_back(*row[3]);
    if (rows.size() < 2) break;
    after = {*rows.back()[0], *rows.back()[1], *rows.back()[2]};
  }
  EXPECT_EQ(all.size(), 7u);
  EXPECT_EQ(split, all);
  // Keys beyond a double's 53 bits: bounds compare as integers, so no row is skipped.
  Sql("CREATE TABLE shop.snowflakes (tenant INT, id BIGINT UNSIGNED, PRIMARY KEY (tenant, id));"
      "INSERT INTO shop.snowflakes VALUES (1, 1152921504606846976), (1, 1152921504606846977), "
      "(1, 1152921504606846978), (1, 1152921504606846979), (2, 18446744073709551615)");
  auto flakes = DescribeMysqlTable(*conn, "shop", "snowflakes");
  ASSERT_TRUE(flakes.ok()) << flakes.status().ToString();
  std::vector<std::string> ids;
  after.clear();
  while (true) {
    std::vector<mysql::Row> rows = Select(*conn, *flakes, after, 1);
    for (const mysql::Row& row : rows)
      ids.push_back(*row[1]);
    if (rows.empty()) break;
    after = {*rows.back()[0], *rows.back()[1]};
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"1152921504606846976", "1152921504606846977",
                                           "1152921504606846978", "1152921504606846979",
                                           "18446744073709551615"}));
}

TEST_F(MysqlSnapshotTest, AConsistentSnapshotsPositionIsWhereTheStreamOfWhatItMissesBegins) {
  Sql("CREATE DATABASE IF NOT EXISTS shop; CREATE TABLE shop.seen (id INT PRIMARY KEY);"
      "INSERT INTO shop.seen VALUES (1)");
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  const BinlogPosition before = End();
  auto snapshot = ConsistentSnapshot(*conn);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  EXPECT_EQ(snapshot->position, before);
  EXPECT_FALSE(snapshot->gtid.empty());
  Sql("INSERT INTO shop.seen VALUES (2)");  // after the snapshot: not in it
  auto table = DescribeMysqlTable(*conn, "shop", "seen");
  ASSERT_TRUE(table.ok());
  std::vector<mysql::Row> rows = Select(*conn, *table, {}, 100);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(*rows[0][0], "1");
  ASSERT_TRUE(conn->Execute("COMMIT").ok());
  // The stream from the snapshot's GTID position brings exactly what the snapshot missed.
  auto stream =
      mysql::BinlogStream::Open(Params(), 92, {snapshot->gtid, {}}, std::chrono::milliseconds(200));
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  // Every row event until the stream has shown the insert and then gone idle.
  std::vector<std::string> streamed;
  for (int heartbeats = 0; heartbeats < 100;) {
    auto event = (*stream)->Next();
    ASSERT_TRUE(event.ok()) << event.status().ToString();
    if (std::holds_alternative<mysql::HeartbeatEvent>(event->event)) {
      if (!streamed.empty()) break;
      ++heartbeats;
    }
    if (const auto* written = std::get_if<mysql::RowsEvent>(&event->event)) {
      if (written->table->name == "seen") streamed.push_back(written->rows[0].after[0].text);
    }
  }
  EXPECT_EQ(streamed, std::vector<std::string>{"2"});
  // Missing tables and keys, and what the decoder cannot read, are named before any copy.
  EXPECT_EQ(DescribeMysqlTable(*conn, "shop", "missing").status().code(), StatusCode::kNotFound);
  Sql("CREATE TABLE shop.keyless (v INT)");
  Status keyless = DescribeMysqlTable(*conn, "shop", "keyless").status();
  EXPECT_NE(keyless.message().find("primary key"), std::string::npos) << keyless.ToString();
  Sql("CREATE TABLE shop.wide_chars (id INT PRIMARY KEY, v VARCHAR(5) CHARACTER SET utf16);"
      "CREATE TABLE shop.enum_key (e ENUM('small', 'medium', 'large') PRIMARY KEY)");
  Status utf16 = DescribeMysqlTable(*conn, "shop", "wide_chars").status();
  EXPECT_EQ(utf16.code(), StatusCode::kNotSupported);
  EXPECT_NE(utf16.message().find("utf16"), std::string::npos) << utf16.ToString();
  EXPECT_EQ(DescribeMysqlTable(*conn, "shop", "enum_key").status().code(),
            StatusCode::kNotSupported);
  Sql("CREATE TABLE shop.aria_table (id INT PRIMARY KEY) ENGINE = Aria");
  Status aria = DescribeMysqlTable(*conn, "shop", "aria_table").status();
  EXPECT_NE(aria.message().find("InnoDB"), std::string::npos) << aria.ToString();
}

}  // namespace
}  // namespace millrace::cdc
