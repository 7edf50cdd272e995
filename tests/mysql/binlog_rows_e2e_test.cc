// The binlog row decoder against a real MariaDB 10.11: a table with a column of every type
// Millrace decodes, rows at the types' limits, NULLs, zero dates, updates (one and several
// rows) and a delete; every decoded value is compared with the text the server itself gives for
// the same row at the same moment (CAST(... AS CHAR), HEX(...), CONVERT(... USING utf8mb4)).
// Also the partial images of binlog_row_image = MINIMAL.
#include <gtest/gtest.h>
#include <mysql.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "binlog_reader.h"
#include "mysql/binlog_rows.h"
#include "testing/mariadb_server.h"

namespace millrace::mysql {
namespace {

using change::TupleValue;
using Row = std::vector<std::optional<std::string>>;

// How a column's expected text compares with the decoded one.
enum class Compare {
  kExact,
  kFloat,      // both read as a float: the server prints FLOAT with six digits, so the expected
               // text is the value widened to DOUBLE
  kDouble,     // both read as a double
  kDate,       // a zero month or day is NULL
  kTimestamp,  // UTC, '+00' appended; the zero TIMESTAMP is NULL
  kBytes,      // the server's LOWER(HEX(col)) after '\x'
};

struct ColumnSpec {
  const char* name;
  const char* ddl;
  const char* expected;  // the server's text for the column; "" for CAST(name AS CHAR)
  const char* duckdb_type;
  Compare compare = Compare::kExact;
};

const std::vector<ColumnSpec>& Columns() {
  static const std::vector<ColumnSpec> columns = {
      {"id", "INT PRIMARY KEY", "", "INTEGER"},
      {"ti", "TINYINT", "", "TINYINT"},
      {"tiu", "TINYINT UNSIGNED", "", "UTINYINT"},
      {"si", "SMALLINT", "", "SMALLINT"},
      {"siu", "SMALLINT UNSIGNED", "", "USMALLINT"},
      {"mi", "MEDIUMINT", "", "INTEGER"},
      {"miu", "MEDIUMINT UNSIGNED", "", "UINTEGER"},
      {"i", "INT", "", "INTEGER"},
      {"iu", "INT UNSIGNED", "", "UINTEGER"},
      {"bi", "BIGINT", "", "BIGINT"},
      {"biu", "BIGINT UNSIGNED", "", "UBIGINT"},
      {"d", "DECIMAL(12,3)", "", "DECIMAL(12,3)"},
      {"dw", "DECIMAL(65,30)", "", "VARCHAR"},
      {"dz", "DECIMAL(10,0)", "", "DECIMAL(10,0)"},
      {"f", "FLOAT", "CAST(CAST(f AS DOUBLE) AS CHAR)", "FLOAT", Compare::kFloat},
      {"db", "DOUBLE", "", "DOUBLE", Compare::kDouble},
      {"b", "BIT(5)", "CAST(b + 0 AS CHAR)", "UBIGINT"},
      {"b64", "BIT(64)", "CAST(b64 + 0 AS CHAR)", "UBIGINT"},
      {"dt", "DATE", "", "DATE", Compare::kDate},
      {"dtm0", "DATETIME", "", "TIMESTAMP", Compare::kDate},
      {"dtm", "DATETIME(6)", "", "TIMESTAMP", Compare::kDate},
      {"ts0", "TIMESTAMP NULL DEFAULT NULL", "", "TIMESTAMPTZ", Compare::kTimestamp},
      {"ts", "TIMESTAMP(3) NULL DEFAULT NULL", "", "TIMESTAMPTZ", Compare::kTimestamp},
      {"ts6", "TIMESTAMP(6) NULL DEFAULT NULL", "", "TIMESTAMPTZ", Compare::kTimestamp},
      {"tm0", "TIME", "", "VARCHAR"},
      {"tm", "TIME(2)", "", "VARCHAR"},
      {"tm3", "TIME(3)", "", "VARCHAR"},
      {"tm6", "TIME(6)", "", "VARCHAR"},
      {"y", "YEAR", "", "SMALLINT"},
      {"c", "CHAR(5)", "c", "VARCHAR"},
      {"cl", "CHAR(100)", "cl", "VARCHAR"},
      {"vc", "VARCHAR(20)", "vc", "VARCHAR"},
      {"vl", "VARCHAR(300)", "vl", "VARCHAR"},
      {"tx", "TEXT", "tx", "VARCHAR"},
      {"mt", "MEDIUMTEXT", "mt", "VARCHAR"},
      {"bl", "BLOB", "LOWER(HEX(bl))", "BLOB", Compare::kBytes},
      {"lb", "LONGBLOB", "LOWER(HEX(lb))", "BLOB", Compare::kBytes},
      {"bn", "BINARY(4)", "LOWER(HEX(bn))", "BLOB", Compare::kBytes},
      {"vb", "VARBINARY(10)", "LOWER(HEX(vb))", "BLOB", Compare::kBytes},
      {"e", "ENUM('a','bb','c')", "e", "VARCHAR"},
      {"s", "SET('x','y','z')", "s", "VARCHAR"},
      {"j", "JSON", "j",
       "VARCHAR"},  // MariaDB's JSON is a LONGTEXT: nothing in the binlog says JSON
      {"lat", "VARCHAR(10) CHARACTER SET latin1", "CONVERT(lat USING utf8mb4)", "VARCHAR"},
      {"latc", "CHAR(3) CHARACTER SET latin1", "CONVERT(latc USING utf8mb4)", "VARCHAR"},
      {"latx", "VARCHAR(128) CHARACTER SET latin1", "CONVERT(latx USING utf8mb4)", "VARCHAR"},
      {"el", "ENUM('ä','ö€') CHARACTER SET latin1", "CONVERT(el USING utf8mb4)", "VARCHAR"},
  };
  return columns;
}

// The rows inserted, in column order (after id).
const char* const kMaxRow =
    "127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807, "
    "18446744073709551615, 999999999.999, "
    "99999999999999999999999999999999999.999999999999999999999999999999, 9999999999, "
    "3.4028234e38, 1.7976931348623157e308, b'11111', "
    "b'1111111111111111111111111111111111111111111111111111111111111111', '9999-12-31', "
    "'9999-12-31 23:59:59', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07', "
    "'2038-01-19 03:14:07.999', '2038-01-19 03:14:07.999999', '838:59:59', '838:59:59.99', "
    "'838:59:59.999', '838:59:59.999999', 2155, 'zzzzz', REPEAT('é', 100), REPEAT('x', 20), "
    "REPEAT('ü', 300), REPEAT('t', 1000), REPEAT('m', 70000), UNHEX(REPEAT('ff', 300)), "
    "UNHEX(REPEAT('00ff', 40000)), x'ffffffff', x'00010203040506070809', 'c', 'x,y,z', "
    "'{\"k\": [1, 2, {\"n\": null}]}', 'ÿé€Ž', 'Ææ€', "
    // Every latin1 byte past ASCII.
    "UNHEX('"
    "808182838485868788898A8B8C8D8E8F909192939495969798999A9B9C9D9E9FA0A1A2A3A4A5A6A7A8A9AAABACADAE"
    "AFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBFC0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDD"
    "DEDFE0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF'), 'ö€'";
const char* const kMinRow =
    "-128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0, -999999999.999, "
    "-99999999999999999999999999999999999.999999999999999999999999999999, -9999999999, "
    "-3.4028234e38, -1.7976931348623157e308, b'0', b'0', '1000-01-01', '1000-01-01 00:00:00', "
    "'1000-01-01 00:00:00.000001', '1970-01-01 00:00:01', '1970-01-01 00:00:01.001', "
    "'1970-01-01 00:00:01.000001', '-838:59:59', '-838:59:59.99', '-00:00:00.001', "
    "'-00:00:01.5', 1901, '', '', '', '', '', '', '', '', x'00', '', 'a', '', '[]', '', '', '', "
    "'ä'";
const char* const kTypicalRow =
    "-5, 7, -300, 300, -70000, 70000, -5, 5, -5, 5, -0.5, "
    "0.000000000000000000000000000001, 0, 0.1, 0.1, b'101', "
    "b'1000000000000000000000000000000000000000000000000000000000000000', '2024-02-29', "
    "'2024-02-29 12:34:56', '2024-02-29 12:34:56.5', '2024-02-29 12:34:56', "
    "'2024-02-29 12:34:56.789', '2000-01-01 00:00:00.123456', '-12:34:56', '-00:00:00.01', "
    "'100:00:00.5', '-01:02:03.000004', 2024, 'ab ', 'x', 'héllo 😀', '😀😀', "
    "'line1\\nline2\\ttab\\\\', '', x'00', x'', 'ab', x'00ff00', 'bb', 'x,z', "
    "'{\"a\": \"é😀\"}', 'café€', 'ñ', 'plain', 'ä'";

// A Connector/C session with the writer's settings: UTC, utf8mb4.
class Session {
 public:
  static Result<std::unique_ptr<Session>> Open(const testing::ServerAddress& server) {
    auto session = std::unique_ptr<Session>(new Session());
    MYSQL* m = session->mysql_;
    mysql_options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    if (!mysql_real_connect(m, server.host.c_str(), server.user.c_str(), server.password.c_str(),
                            nullptr, static_cast<unsigned>(server.port), nullptr, 0))
      return Status::Unavailable(std::string("connect: ") + mysql_error(m));
    MR_RETURN_IF_ERROR(session->Exec("SET time_zone = '+00:00'"));
    return session;
  }
  ~Session() { mysql_close(mysql_); }

  Status Exec(const std::string& sql) {
    if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0)
      return Status::Internal(sql.substr(0, 200) + ": " + mysql_error(mysql_));
    if (MYSQL_RES* result = mysql_store_result(mysql_)) mysql_free_result(result);
    return Status::Ok();
  }

  Result<std::vector<Row>> Query(const std::string& sql) {
    if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0)
      return Status::Internal(sql.substr(0, 200) + ": " + mysql_error(mysql_));
    std::unique_ptr<MYSQL_RES, decltype(&mysql_free_result)> result(mysql_store_result(mysql_),
                                                                    &mysql_free_result);
    if (!result) return Status::Internal(std::string("no result: ") + mysql_error(mysql_));
    const unsigned fields = mysql_num_fields(result.get());
    std::vector<Row> rows;
    while (MYSQL_ROW row = mysql_fetch_row(result.get())) {
      const unsigned long* lengths = mysql_fetch_lengths(result.get());
      Row& out = rows.emplace_back();
      for (unsigned i = 0; i < fields; ++i) {
        if (row[i] == nullptr) {
          out.push_back(std::nullopt);
        } else {
          out.push_back(std::string(row[i], lengths[i]));
        }
      }
    }
    return rows;
  }

 private:
  Session() : mysql_(mysql_init(nullptr)) {}
  MYSQL* mysql_;
};

class BinlogRowsE2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto server = millrace::testing::MariadbServer::Start();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  static testing::ServerAddress Address() {
    return {server_->host(), server_->port(), server_->user(), server_->password()};
  }

  static millrace::testing::MariadbServer* server_;
};

millrace::testing::MariadbServer* BinlogRowsE2eTest::server_ = nullptr;

// The server's text for rows `ids` of cdc.t, ordered by id, one entry a column.
std::string ExpectedSelect(const std::string& ids) {
  std::string select = "SELECT ";
  for (const ColumnSpec& column : Columns()) {
    if (column.name != std::string("id")) select += ", ";
    select += *column.expected ? std::string(column.expected)
                               : "CAST(" + std::string(column.name) + " AS CHAR)";
  }
  return select + " FROM cdc.t WHERE id IN (" + ids + ") ORDER BY id";
}

// What the decoder should give for the server's text `expected` of `column`.
std::optional<std::string> Expect(const ColumnSpec& column,
                                  const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  switch (column.compare) {
    case Compare::kDate:
    case Compare::kTimestamp:
      // 'YYYY-MM-DD...': a zero month or day is NULL.
      if (text->substr(5, 2) == "00" || text->substr(8, 2) == "00") return std::nullopt;
      return column.compare == Compare::kTimestamp ? *text + "+00" : *text;
    case Compare::kBytes:
      return "\\x" + *text;
    default:
      return text;
  }
}

// Compares one decoded tuple with the server's row, column by column.
void ExpectTuple(const change::Tuple& decoded, const Row& server, const std::string& what) {
  ASSERT_EQ(decoded.size(), Columns().size()) << what;
  ASSERT_EQ(server.size(), Columns().size()) << what;
  for (size_t i = 0; i < decoded.size(); ++i) {
    const ColumnSpec& column = Columns()[i];
    const std::optional<std::string> expected = Expect(column, server[i]);
    const std::string where = what + ", column " + column.name;
    ASSERT_NE(decoded[i].kind, TupleValue::Kind::kUnchanged) << where;
    if (!expected) {
      EXPECT_EQ(decoded[i].kind, TupleValue::Kind::kNull) << where << ": " << decoded[i].text;
      continue;
    }
    ASSERT_EQ(decoded[i].kind, TupleValue::Kind::kText) << where << ": expected " << *expected;
    const std::string& got = decoded[i].text;
    switch (column.compare) {
      case Compare::kFloat:
        EXPECT_EQ(std::strtof(got.c_str(), nullptr),
                  static_cast<float>(std::strtod(expected->c_str(), nullptr)))
            << where << ": " << got << " vs " << *expected;
        break;
      case Compare::kDouble:
        EXPECT_EQ(std::strtod(got.c_str(), nullptr), std::strtod(expected->c_str(), nullptr))
            << where << ": " << got << " vs " << *expected;
        break;
      default:
        // Long values: compare sizes first so a failure does not print 160 kB.
        ASSERT_EQ(got.size(), expected->size())
            << where << ": " << got.substr(0, 80) << " vs " << expected->substr(0, 80);
        EXPECT_EQ(got, *expected) << where;
    }
  }
}

struct DecodedBinlog {
  std::optional<BinlogTable> table;  // the last table map of the schema
  std::vector<std::pair<RowsKind, RowChange>> changes;
};

// Every row change to a table of `schema` in the binlog from `from`, decoded.
Result<DecodedBinlog> DecodeBinlog(const testing::ServerAddress& server,
                                   const testing::BinlogPosition& from, const std::string& schema) {
  auto read = testing::ReadBinlog(server, from);
  if (!read.ok()) return read.status();
  if (!read->mariadb) return Status::Internal("the FORMAT_DESCRIPTION event names no MariaDB");
  DecodedBinlog out;
  for (const testing::BinlogEvent& event : read->events) {
    if (event.type == 19) {  // TABLE_MAP
      auto parts = SplitTableMapEvent(event.body, read->mariadb);
      if (!parts.ok()) return parts.status();
      if (parts->schema != schema) continue;
      auto map = DecodeTableMap(*parts);
      if (!map.ok()) return map.status();
      out.table = std::move(*map);
      continue;
    }
    auto rows = SplitRowsEvent(event.type, event.body);
    if (!rows.ok()) return rows.status();
    if (!out.table || rows->table_id != out.table->table_id) continue;
    auto changes = DecodeRows(*out.table, *rows);
    if (!changes.ok()) return changes.status();
    for (RowChange& change : *changes)
      out.changes.emplace_back(rows->kind, std::move(change));
  }
  return out;
}

// Where the binlog ends now.
Result<testing::BinlogPosition> CurrentPosition(Session& session) {
  auto status = session.Query("SHOW MASTER STATUS");
  if (!status.ok()) return status.status();
  if (status->size() != 1 || !(*status)[0][0] || !(*status)[0][1])
    return Status::Internal("SHOW MASTER STATUS: no binary log");
  return testing::BinlogPosition{*(*status)[0][0], std::stoull(*(*status)[0][1])};
}

struct Step {
  std::string sql;
  std::string ids;  // the rows it touches
  RowsKind kind;
};

TEST_F(BinlogRowsE2eTest, DecodesEveryTypeAsTheServerPrintsIt) {
  auto opened = Session::Open(Address());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Session& session = **opened;
  std::string ddl = "CREATE TABLE cdc.t (";
  for (const ColumnSpec& column : Columns())
    ddl +=
        std::string(column.name == std::string("id") ? "" : ", ") + column.name + " " + column.ddl;
  ddl += ") DEFAULT CHARSET utf8mb4";
  ASSERT_TRUE(session.Exec("CREATE DATABASE cdc").ok());
  ASSERT_TRUE(session.Exec(ddl).ok());

  auto position = CurrentPosition(session);
  ASSERT_TRUE(position.ok()) << position.status().ToString();
  const testing::BinlogPosition from = *position;

  const std::vector<Step> steps = {
      {"INSERT INTO cdc.t VALUES (1, " + std::string(kMaxRow) + ")", "1", RowsKind::kWrite},
      {"INSERT INTO cdc.t VALUES (2, " + std::string(kMinRow) + ")", "2", RowsKind::kWrite},
      {"INSERT INTO cdc.t (id) VALUES (3)", "3", RowsKind::kWrite},
      {"INSERT INTO cdc.t VALUES (4, " + std::string(kTypicalRow) + ")", "4", RowsKind::kWrite},
      {"UPDATE cdc.t SET ti = 0, vc = 'changed', j = NULL, tm = NULL, lb = x'01' WHERE id = 1", "1",
       RowsKind::kUpdate},
      {"UPDATE cdc.t SET ti = 1, d = 1.5, dt = '2000-01-01', s = 'y', bn = x'01', "
       "tm6 = '-00:00:00.000001', lat = 'Ü' WHERE id = 3",
       "3", RowsKind::kUpdate},
      {"UPDATE cdc.t SET y = 1999, e = 'c' WHERE id IN (2, 4)", "2, 4", RowsKind::kUpdate},
      {"DELETE FROM cdc.t WHERE id = 2", "2", RowsKind::kDelete},
      // Zero dates and TIMESTAMPs, which a non-strict sql_mode lets in.
      {"INSERT INTO cdc.t (id, dt, dtm0, dtm, ts0, ts, ts6) VALUES (5, '0000-00-00', "
       "'0000-00-00 00:00:00', '2020-00-00 00:00:00', 0, 0, 0), "
       "(6, '2020-00-15', '2020-05-00 10:00:00', '0000-00-00 00:00:00.000001', NULL, NULL, NULL)",
       "5, 6", RowsKind::kWrite},
  };
  ASSERT_TRUE(session.Exec("SET sql_mode = ''").ok());  // for the zero dates of the last step

  struct Expected {
    RowsKind kind;
    Row before, after;
    std::string what;
  };
  std::vector<Expected> expected;
  for (size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    std::vector<Row> before, after;
    if (step.kind != RowsKind::kWrite) {
      auto rows = session.Query(ExpectedSelect(step.ids));
      ASSERT_TRUE(rows.ok()) << rows.status().ToString();
      before = std::move(*rows);
    }
    ASSERT_TRUE(session.Exec(step.sql).ok()) << step.sql.substr(0, 200);
    if (step.kind != RowsKind::kDelete) {
      auto rows = session.Query(ExpectedSelect(step.ids));
      ASSERT_TRUE(rows.ok()) << rows.status().ToString();
      after = std::move(*rows);
    }
    const size_t count = std::max(before.size(), after.size());
    ASSERT_GT(count, 0u) << step.sql;
    for (size_t r = 0; r < count; ++r)
      expected.push_back({step.kind, r < before.size() ? before[r] : Row{},
                          r < after.size() ? after[r] : Row{},
                          "step " + std::to_string(s + 1) + " row " + std::to_string(r + 1)});
  }

  auto decoded_binlog = DecodeBinlog(Address(), from, "cdc");
  ASSERT_TRUE(decoded_binlog.ok()) << decoded_binlog.status().ToString();
  const std::optional<BinlogTable>& table = decoded_binlog->table;
  const auto& decoded = decoded_binlog->changes;

  ASSERT_TRUE(table.has_value());
  ASSERT_EQ(table->columns.size(), Columns().size());
  for (size_t i = 0; i < Columns().size(); ++i) {
    EXPECT_EQ(table->columns[i].name, Columns()[i].name);
    EXPECT_EQ(MapColumn(table->columns[i]).duckdb_type, Columns()[i].duckdb_type)
        << Columns()[i].name;
  }
  EXPECT_EQ(table->key, (std::vector<size_t>{0}));

  ASSERT_EQ(decoded.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const Expected& want = expected[i];
    const auto& [kind, change] = decoded[i];
    ASSERT_EQ(kind, want.kind) << want.what;
    if (want.kind != RowsKind::kWrite)
      ExpectTuple(change.before, want.before, want.what + " before");
    if (want.kind != RowsKind::kDelete) ExpectTuple(change.after, want.after, want.what + " after");
  }
}

// binlog_row_image = MINIMAL: a DELETE's image and an UPDATE's before image hold the primary key
// only, the after image the columns the statement wrote; the others are UNCHANGED.
TEST_F(BinlogRowsE2eTest, DecodesMinimalImages) {
  auto opened = Session::Open(Address());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Session& session = **opened;
  ASSERT_TRUE(session.Exec("CREATE DATABASE minimal").ok());
  ASSERT_TRUE(
      session.Exec("CREATE TABLE minimal.t (id INT PRIMARY KEY, a INT, b VARCHAR(10))").ok());
  ASSERT_TRUE(session.Exec("INSERT INTO minimal.t VALUES (1, 10, 'old'), (2, 20, 'two')").ok());
  auto position = CurrentPosition(session);
  ASSERT_TRUE(position.ok()) << position.status().ToString();
  ASSERT_TRUE(session.Exec("SET SESSION binlog_row_image = 'MINIMAL'").ok());
  ASSERT_TRUE(session.Exec("UPDATE minimal.t SET b = 'new' WHERE id = 1").ok());
  ASSERT_TRUE(session.Exec("DELETE FROM minimal.t WHERE id = 2").ok());

  auto decoded = DecodeBinlog(Address(), *position, "minimal");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->changes.size(), 2u);
  const auto& [update_kind, update] = decoded->changes[0];
  ASSERT_EQ(update_kind, RowsKind::kUpdate);
  EXPECT_EQ(update.before[0].text, "1");
  EXPECT_EQ(update.before[1].kind, TupleValue::Kind::kUnchanged);
  EXPECT_EQ(update.before[2].kind, TupleValue::Kind::kUnchanged);
  EXPECT_EQ(update.after[1].kind, TupleValue::Kind::kUnchanged);
  EXPECT_EQ(update.after[2].text, "new");
  const auto& [delete_kind, deleted] = decoded->changes[1];
  ASSERT_EQ(delete_kind, RowsKind::kDelete);
  EXPECT_EQ(deleted.before[0].text, "2");
  EXPECT_EQ(deleted.before[1].kind, TupleValue::Kind::kUnchanged);
}

}  // namespace
}  // namespace millrace::mysql
