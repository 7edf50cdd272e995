// The binlog followed as a replica follows it, against a real MariaDB 10.11 (one server for the
// binary): connection errors as values, the source requirements each named, transactions as
// GTID / TABLE_MAP / rows / XID events with positions, DDL, a start from a GTID position and
// from a purged file, and heartbeats on an idle log.
#include <gtest/gtest.h>

#include "mysql/binlog_requirements.h"
#include "mysql/binlog_stream.h"
#include "mysql/mysql_connection.h"
#include "testing/mariadb_server.h"
#include "testing/server_test.h"
#include "testing/wait_for.h"

namespace millrace::mysql {
namespace {

using testing::MariadbServer;

class BinlogStreamTest : public millrace::testing::SharedServerTest<MariadbServer> {
 protected:
  static ConnectParams Params(const std::string& password = "") {
    ConnectParams p;
    p.host = server_->host();
    p.port = server_->port();
    p.user = server_->user();
    p.password = password.empty() ? server_->password() : password;
    return p;
  }
  static std::string Sql(const std::string& sql) {
    auto out = server_->Sql(sql);
    EXPECT_TRUE(out.ok()) << sql << ": " << out.status().ToString();
    return out.ok() ? *out : "";
  }
  // Where the log ends now.
  static BinlogPosition End() {
    auto end = server_->BinlogEnd();
    EXPECT_TRUE(end.ok()) << end.status().ToString();
    return end.ok() ? BinlogPosition{end->first, end->second} : BinlogPosition{};
  }
  static std::unique_ptr<BinlogStream> Open(const BinlogStart& start) {
    auto stream = BinlogStream::Open(Params(), 77, start, std::chrono::milliseconds(200));
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    return stream.ok() ? std::move(stream).value() : nullptr;
  }
  // The next event that is not a heartbeat or a rotation (a dump starts with one).
  static StreamEvent NextEvent(BinlogStream& stream) {
    while (true) {
      auto event = stream.Next();
      EXPECT_TRUE(event.ok()) << event.status().ToString();
      if (!event.ok()) return StreamEvent{};
      if (!std::holds_alternative<HeartbeatEvent>(event->event) &&
          !std::holds_alternative<RotateEvent>(event->event)) {
        return std::move(event).value();
      }
    }
  }
};

TEST_F(BinlogStreamTest, ConnectionErrorsAreValuesWithTheServersErrno) {
  auto wrong = MysqlConnection::Connect(Params("wrong-password"));
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(ErrnoOf(wrong.status()), 1045);
  EXPECT_EQ(wrong.status().message().find("wrong-password"), std::string::npos);
  ConnectParams nowhere = Params();
  nowhere.port = 1;
  auto unreachable = MysqlConnection::Connect(nowhere);
  ASSERT_FALSE(unreachable.ok());
  EXPECT_EQ(unreachable.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(unreachable.status().message().find("127.0.0.1:1"), std::string::npos);
  auto conn = MysqlConnection::Connect(Params());
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  auto rows = (*conn)->Query("SELECT 1, NULL, 'it''s', @@time_zone");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->rows[0][0], "1");
  EXPECT_EQ(rows->rows[0][1], std::nullopt);
  EXPECT_EQ(rows->rows[0][2], "it's");
  EXPECT_EQ(rows->rows[0][3], "+00:00");
  Status bad = (*conn)->Execute("SELEC 1");
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrnoOf(bad), 1064);
  EXPECT_EQ((*conn)->Literal("a'b\\c"), "'a\\'b\\\\c'");
}

TEST_F(BinlogStreamTest, EachMissingRequirementIsNamed) {
  auto conn = MysqlConnection::Connect(Params());
  ASSERT_TRUE(conn.ok());
  EXPECT_EQ(CheckBinlogSource(**conn), Status::Ok());
  auto error_with = [&](const std::string& set, const std::string& restore) {
    Sql("SET GLOBAL " + set);
    Status s = CheckBinlogSource(**conn);
    Sql("SET GLOBAL " + restore);
    return s;
  };
  Status format = error_with("binlog_format = 'STATEMENT'", "binlog_format = 'ROW'");
  EXPECT_EQ(format.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(format.message().find("binlog_format = STATEMENT"), std::string::npos)
      << format.ToString();
  Status image = error_with("binlog_row_image = 'MINIMAL'", "binlog_row_image = 'FULL'");
  EXPECT_NE(image.message().find("binlog_row_image"), std::string::npos) << image.ToString();
  Status metadata = error_with("binlog_row_metadata = 'MINIMAL'", "binlog_row_metadata = 'FULL'");
  EXPECT_NE(metadata.message().find("binlog_row_metadata"), std::string::npos);
  Status compressed = error_with("log_bin_compress = ON", "log_bin_compress = OFF");
  EXPECT_NE(compressed.message().find("log_bin_compress = ON"), std::string::npos)
      << compressed.ToString();
  // A user who may read tables but not the binlog.
  Sql("CREATE USER 'reader'@'127.0.0.1' IDENTIFIED BY 'pw'; GRANT SELECT ON *.* TO "
      "'reader'@'127.0.0.1'");
  ConnectParams reader = Params();
  reader.user = "reader";
  reader.password = "pw";
  auto limited = MysqlConnection::Connect(reader);
  ASSERT_TRUE(limited.ok()) << limited.status().ToString();
  Status denied = CheckBinlogSource(**limited);
  EXPECT_EQ(denied.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(denied.message().find("REPLICATION SLAVE"), std::string::npos) << denied.ToString();
}

TEST_F(BinlogStreamTest, TransactionsArriveAsEventsWithPositionsAndDdlAsAStatement) {
  Sql("CREATE DATABASE IF NOT EXISTS shop; CREATE TABLE shop.items (id INT PRIMARY KEY, name "
      "VARCHAR(20), qty INT)");
  const BinlogPosition start = End();
  auto stream = Open({"", start});
  ASSERT_NE(stream, nullptr);
  Sql("BEGIN; INSERT INTO shop.items VALUES (1, 'a', 10), (2, 'b', 20); UPDATE shop.items SET "
      "qty = 11 WHERE id = 1; DELETE FROM shop.items WHERE id = 2; COMMIT;"
      "ALTER TABLE shop.items ADD COLUMN note TEXT");
  StreamEvent gtid = NextEvent(*stream);
  ASSERT_TRUE(std::holds_alternative<GtidEvent>(gtid.event));
  EXPECT_FALSE(std::get<GtidEvent>(gtid.event).standalone);
  EXPECT_EQ(gtid.after.file, start.file);
  EXPECT_GT(gtid.after.position, start.position);
  std::vector<RowsKind> kinds;
  std::vector<std::string> first_values;
  uint64_t last = gtid.after.position;
  while (true) {
    StreamEvent e = NextEvent(*stream);
    EXPECT_GT(e.after.position, last);
    last = e.after.position;
    if (std::holds_alternative<XidEvent>(e.event)) break;
    if (const auto* map = std::get_if<TableMapEvent>(&e.event)) {
      EXPECT_EQ(map->table.name, "items");
      EXPECT_EQ(map->table.columns.size(), 3u);
      ASSERT_EQ(map->table.key.size(), 1u);
    }
    if (const auto* rows = std::get_if<RowsEvent>(&e.event)) {
      kinds.push_back(rows->kind);
      const change::Tuple& t =
          rows->kind == RowsKind::kDelete ? rows->rows[0].before : rows->rows[0].after;
      first_values.push_back(t[0].text + "|" + t[2].text);
    }
  }
  EXPECT_EQ(kinds, (std::vector<RowsKind>{RowsKind::kWrite, RowsKind::kUpdate, RowsKind::kDelete}));
  EXPECT_EQ(first_values, (std::vector<std::string>{"1|10", "1|11", "2|20"}));
  // DDL: a standalone GTID, then the statement whole.
  StreamEvent ddl_gtid = NextEvent(*stream);
  ASSERT_TRUE(std::holds_alternative<GtidEvent>(ddl_gtid.event));
  EXPECT_TRUE(std::get<GtidEvent>(ddl_gtid.event).standalone);
  StreamEvent ddl = NextEvent(*stream);
  ASSERT_TRUE(std::holds_alternative<QueryEvent>(ddl.event));
  EXPECT_EQ(std::get<QueryEvent>(ddl.event).schema, "");
  EXPECT_NE(std::get<QueryEvent>(ddl.event).statement.find("ADD COLUMN note"), std::string::npos);
  // An idle log still speaks: heartbeats.
  auto heartbeat = stream->Next();
  ASSERT_TRUE(heartbeat.ok()) << heartbeat.status().ToString();
  EXPECT_TRUE(std::holds_alternative<HeartbeatEvent>(heartbeat->event));
}

TEST_F(BinlogStreamTest, AGtidPositionResumesAfterItsTransactions) {
  Sql("CREATE DATABASE IF NOT EXISTS shop; CREATE TABLE shop.marks (id INT PRIMARY KEY)");
  Sql("INSERT INTO shop.marks VALUES (1)");
  const std::string after_first = Sql("SELECT @@gtid_binlog_pos");
  Sql("INSERT INTO shop.marks VALUES (2)");
  auto stream = Open({after_first, {}});
  ASSERT_NE(stream, nullptr);
  // The first rows the stream hands out are the second insert's.
  while (true) {
    StreamEvent e = NextEvent(*stream);
    if (const auto* rows = std::get_if<RowsEvent>(&e.event)) {
      EXPECT_EQ(rows->table->name, "marks");
      EXPECT_EQ(rows->rows[0].after[0].text, "2");
      EXPECT_FALSE(e.after.file.empty());  // the file comes from the dump's first ROTATE
      break;
    }
  }
}

TEST_F(BinlogStreamTest, APurgedFileIsOutOfRangeNamingIt) {
  const BinlogPosition old = End();
  Sql("FLUSH BINARY LOGS");
  const BinlogPosition now = End();
  ASSERT_NE(now.file, old.file);
  // A file an earlier test's dump thread still reads is kept until that thread ends.
  ASSERT_TRUE(millrace::testing::WaitFor([&] {
    Sql("PURGE BINARY LOGS TO '" + now.file + "'");
    return Sql("SHOW BINARY LOGS").find(old.file) == std::string::npos;
  }));
  auto stream = BinlogStream::Open(Params(), 78, {"", old}, std::chrono::milliseconds(200));
  Status failed = stream.status();
  for (int i = 0; failed.ok() && i < 10; ++i)
    failed = (*stream)->Next().status();
  EXPECT_EQ(failed.code(), StatusCode::kOutOfRange) << failed.ToString();
  EXPECT_EQ(ErrnoOf(failed), 1236);
  EXPECT_NE(failed.message().find(old.file), std::string::npos) << failed.ToString();
}

TEST_F(BinlogStreamTest, PositionsFollowARotationAndResumeThereOnlyForFollowedTables) {
  Sql("CREATE DATABASE IF NOT EXISTS shop; CREATE TABLE shop.kept (id INT PRIMARY KEY);"
      "CREATE TABLE shop.other (id INT PRIMARY KEY)");
  const BinlogPosition start = End();
  auto stream = BinlogStream::Open(
      Params(), 79, {"", start}, std::chrono::milliseconds(200),
      [](const std::string& schema, const std::string& table) { return table == "kept"; });
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  Sql("FLUSH BINARY LOGS");
  const BinlogPosition rotated = End();
  ASSERT_NE(rotated.file, start.file);
  Sql("INSERT INTO shop.other VALUES (1); INSERT INTO shop.kept VALUES (1)");
  // Every position after the switch names the new file; the other table's rows never come.
  BinlogPosition after_first;
  std::vector<std::string> kept;
  bool rotated_seen = false;
  while (kept.empty()) {
    StreamEvent e = NextEvent(**stream);
    if (const auto* rows = std::get_if<RowsEvent>(&e.event)) {
      EXPECT_EQ(rows->table->name, "kept");
      kept.push_back(rows->rows[0].after[0].text);
    }
    rotated_seen = rotated_seen || e.after.file == rotated.file;
    if (rotated_seen) EXPECT_EQ(e.after.file, rotated.file);
  }
  while (true) {
    StreamEvent e = NextEvent(**stream);
    if (std::holds_alternative<XidEvent>(e.event)) {
      after_first = e.after;
      break;
    }
  }
  EXPECT_EQ(after_first.file, rotated.file);
  EXPECT_EQ(kept, std::vector<std::string>{"1"});
  // Resuming at a position between transactions gives the next one.
  Sql("INSERT INTO shop.kept VALUES (2)");
  auto resumed = Open({"", after_first});
  ASSERT_NE(resumed, nullptr);
  while (true) {
    StreamEvent e = NextEvent(*resumed);
    if (const auto* rows = std::get_if<RowsEvent>(&e.event)) {
      EXPECT_EQ(rows->rows[0].after[0].text, "2");
      break;
    }
  }
  EXPECT_EQ(
      BinlogStream::Open(Params(), 0, {"", start}, std::chrono::milliseconds(200)).status().code(),
      StatusCode::kInvalidArgument);
}

TEST_F(BinlogStreamTest, AnXaTransactionIsRefusedNamingWhereItIs) {
  Sql("CREATE DATABASE IF NOT EXISTS shop; CREATE TABLE shop.xa (id INT PRIMARY KEY)");
  const BinlogPosition start = End();
  Sql("XA START 'x1'; INSERT INTO shop.xa VALUES (1); XA END 'x1'; XA PREPARE 'x1'; "
      "XA COMMIT 'x1'");
  auto stream = Open({"", start});
  ASSERT_NE(stream, nullptr);
  Status failed;
  for (int i = 0; failed.ok() && i < 50; ++i)
    failed = stream->Next().status();
  EXPECT_EQ(failed.code(), StatusCode::kNotSupported) << failed.ToString();
  EXPECT_NE(failed.message().find("XA transaction"), std::string::npos) << failed.ToString();
}

}  // namespace
}  // namespace millrace::mysql
