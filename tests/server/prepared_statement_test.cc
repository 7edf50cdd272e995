// Server-side prepared statements over the binary protocol, driven by MariaDB Connector/C's
// mysql_stmt_* API against the real `millrace serve`: parameters of every type and NULL bound
// and read back typed, one statement executed many times, long data, Millrace's own
// statements, errors with their codes, a statement whose privilege is checked again, and
// read-only cursors; and the other commands clients send (COM_FIELD_LIST, COM_CHANGE_USER,
// COM_RESET_CONNECTION, COM_SET_OPTION, COM_STATISTICS, COM_PROCESS_KILL).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "server/mysql_test_util.h"

namespace millrace::server {
namespace {

// A statement handle that closes itself.
struct StmtCloser {
  void operator()(MYSQL_STMT* stmt) const { mysql_stmt_close(stmt); }
};
using StmtPtr = std::unique_ptr<MYSQL_STMT, StmtCloser>;

class PreparedStatementTest : public SharedServerTest {
 protected:
  static void SetUpTestSuite() {
    mysql_library_init(0, nullptr, nullptr);
    StartServer({{"--threads", "2"}, {}});
  }
  static void TearDownTestSuite() { StopServer(); }

  void SetUp() override {
    std::string error;
    mysql_ = ConnectorC(server().mysql_port(), "", 0, nullptr, &error);
    ASSERT_NE(mysql_, nullptr) << error;
  }

  void Sql(const std::string& sql) {
    ASSERT_EQ(mysql_query(mysql_.get(), sql.c_str()), 0)
        << sql << ": " << mysql_error(mysql_.get());
  }

  StmtPtr Prepare(const std::string& sql) {
    StmtPtr stmt(mysql_stmt_init(mysql_.get()));
    EXPECT_EQ(mysql_stmt_prepare(stmt.get(), sql.data(), sql.size()), 0)
        << sql << ": " << mysql_stmt_error(stmt.get());
    return stmt;
  }

  MysqlPtr mysql_;
};

// One bound parameter or result buffer of Connector/C.
MYSQL_BIND Bind(enum_field_types type, void* buffer, unsigned long length, bool* is_null,
                unsigned long* out_length = nullptr) {
  MYSQL_BIND b;
  std::memset(&b, 0, sizeof(b));
  b.buffer_type = type;
  b.buffer = buffer;
  b.buffer_length = length;
  b.is_null = reinterpret_cast<my_bool*>(is_null);
  b.length = out_length;
  return b;
}

TEST_F(PreparedStatementTest, EveryParameterTypeAndNullRoundTripsTyped) {
  Sql("CREATE DATABASE IF NOT EXISTS ps");
  Sql("CREATE TABLE ps.typed (id INT, b BIGINT, d DOUBLE, s VARCHAR(50), bin BLOB, dt DATE, "
      "ts DATETIME(6), dec DECIMAL(10,2))");
  StmtPtr insert = Prepare("INSERT INTO ps.typed VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  ASSERT_EQ(mysql_stmt_param_count(insert.get()), 8u);

  int32_t id = 1;
  int64_t big = -9007199254740993LL;
  double d = 2.5;
  char s[] = "héllo 'quoted' \\ back";
  char bin[] = {'\0', '\xff', '\x10'};
  MYSQL_TIME date{};
  date.year = 2024, date.month = 2, date.day = 29, date.time_type = MYSQL_TIMESTAMP_DATE;
  MYSQL_TIME ts{};
  ts.year = 1999, ts.month = 12, ts.day = 31, ts.hour = 23, ts.minute = 59, ts.second = 58;
  ts.second_part = 123456, ts.time_type = MYSQL_TIMESTAMP_DATETIME;
  char dec[] = "-12.34";
  bool no = false;
  unsigned long s_len = std::strlen(s), bin_len = sizeof(bin), dec_len = std::strlen(dec);
  std::vector<MYSQL_BIND> params = {Bind(MYSQL_TYPE_LONG, &id, 0, &no),
                                    Bind(MYSQL_TYPE_LONGLONG, &big, 0, &no),
                                    Bind(MYSQL_TYPE_DOUBLE, &d, 0, &no),
                                    Bind(MYSQL_TYPE_STRING, s, s_len, &no, &s_len),
                                    Bind(MYSQL_TYPE_BLOB, bin, bin_len, &no, &bin_len),
                                    Bind(MYSQL_TYPE_DATE, &date, 0, &no),
                                    Bind(MYSQL_TYPE_DATETIME, &ts, 0, &no),
                                    Bind(MYSQL_TYPE_NEWDECIMAL, dec, dec_len, &no, &dec_len)};
  ASSERT_EQ(mysql_stmt_bind_param(insert.get(), params.data()), 0);
  ASSERT_EQ(mysql_stmt_execute(insert.get()), 0) << mysql_stmt_error(insert.get());
  EXPECT_EQ(mysql_stmt_affected_rows(insert.get()), 1u);
  // NULL for every column but the id.
  id = 2;
  bool yes = true;
  for (size_t i = 1; i < params.size(); ++i)
    params[i].is_null = reinterpret_cast<my_bool*>(&yes);
  ASSERT_EQ(mysql_stmt_bind_param(insert.get(), params.data()), 0);
  ASSERT_EQ(mysql_stmt_execute(insert.get()), 0) << mysql_stmt_error(insert.get());

  StmtPtr select = Prepare(
      "SELECT id, b, d, s, bin, dt, ts, dec FROM ps.typed WHERE id >= ? "
      "ORDER BY id");
  ASSERT_EQ(mysql_stmt_param_count(select.get()), 1u);
  ASSERT_EQ(mysql_stmt_field_count(select.get()), 8u);
  int32_t from = 1;
  MYSQL_BIND p = Bind(MYSQL_TYPE_LONG, &from, 0, &no);
  ASSERT_EQ(mysql_stmt_bind_param(select.get(), &p), 0);
  ASSERT_EQ(mysql_stmt_execute(select.get()), 0) << mysql_stmt_error(select.get());

  int32_t r_id = 0;
  int64_t r_big = 0;
  double r_d = 0;
  char r_s[64] = {}, r_bin[16] = {}, r_dec[16] = {};
  MYSQL_TIME r_date{}, r_ts{};
  bool nulls[8] = {};
  unsigned long lens[8] = {};
  std::vector<MYSQL_BIND> out = {
      Bind(MYSQL_TYPE_LONG, &r_id, 0, &nulls[0], &lens[0]),
      Bind(MYSQL_TYPE_LONGLONG, &r_big, 0, &nulls[1], &lens[1]),
      Bind(MYSQL_TYPE_DOUBLE, &r_d, 0, &nulls[2], &lens[2]),
      Bind(MYSQL_TYPE_STRING, r_s, sizeof(r_s), &nulls[3], &lens[3]),
      Bind(MYSQL_TYPE_BLOB, r_bin, sizeof(r_bin), &nulls[4], &lens[4]),
      Bind(MYSQL_TYPE_DATE, &r_date, 0, &nulls[5], &lens[5]),
      Bind(MYSQL_TYPE_DATETIME, &r_ts, 0, &nulls[6], &lens[6]),
      Bind(MYSQL_TYPE_STRING, r_dec, sizeof(r_dec), &nulls[7], &lens[7])};
  ASSERT_EQ(mysql_stmt_bind_result(select.get(), out.data()), 0);
  ASSERT_EQ(mysql_stmt_fetch(select.get()), 0) << mysql_stmt_error(select.get());
  EXPECT_EQ(r_id, 1);
  EXPECT_EQ(r_big, big);
  EXPECT_EQ(r_d, 2.5);
  EXPECT_EQ(std::string(r_s, lens[3]), s);
  EXPECT_EQ(std::string(r_bin, lens[4]), std::string(bin, sizeof(bin)));
  EXPECT_EQ(r_date.year, 2024u);
  EXPECT_EQ(r_date.month, 2u);
  EXPECT_EQ(r_date.day, 29u);
  EXPECT_EQ(r_ts.hour, 23u);
  EXPECT_EQ(r_ts.second, 58u);
  EXPECT_EQ(r_ts.second_part, 123456u);
  EXPECT_EQ(std::string(r_dec, lens[7]), "-12.34");
  ASSERT_EQ(mysql_stmt_fetch(select.get()), 0) << mysql_stmt_error(select.get());
  EXPECT_EQ(r_id, 2);
  for (size_t i = 1; i < 8; ++i)
    EXPECT_TRUE(nulls[i]) << "column " << i;
  EXPECT_EQ(mysql_stmt_fetch(select.get()), MYSQL_NO_DATA);
}

TEST_F(PreparedStatementTest, OneStatementExecutedManyTimesAndLongData) {
  Sql("CREATE DATABASE IF NOT EXISTS ps");
  Sql("CREATE TABLE ps.many (k INT, v VARCHAR)");
  StmtPtr insert = Prepare("INSERT INTO ps.many VALUES (?, ?)");
  int32_t k = 0;
  char v[16];
  unsigned long v_len = 0;
  bool no = false;
  MYSQL_BIND params[2] = {Bind(MYSQL_TYPE_LONG, &k, 0, &no),
                          Bind(MYSQL_TYPE_STRING, v, sizeof(v), &no, &v_len)};
  ASSERT_EQ(mysql_stmt_bind_param(insert.get(), params), 0);
  for (k = 1; k <= 500; ++k) {
    v_len = static_cast<unsigned long>(std::snprintf(v, sizeof(v), "v%d", k));
    ASSERT_EQ(mysql_stmt_execute(insert.get()), 0) << k << ": " << mysql_stmt_error(insert.get());
  }
  // A value sent in pieces (COM_STMT_SEND_LONG_DATA) before the execution.
  k = 1000;
  ASSERT_EQ(mysql_stmt_bind_param(insert.get(), params), 0);
  ASSERT_EQ(mysql_stmt_send_long_data(insert.get(), 1, "long ", 5), 0);
  ASSERT_EQ(mysql_stmt_send_long_data(insert.get(), 1, "value", 5), 0);
  ASSERT_EQ(mysql_stmt_execute(insert.get()), 0) << mysql_stmt_error(insert.get());
  ASSERT_EQ(mysql_query(mysql_.get(),
                        "SELECT count(*), sum(k), max(CASE WHEN k = 1000 THEN v END) "
                        "FROM ps.many"),
            0);
  MYSQL_RES* res = mysql_store_result(mysql_.get());
  MYSQL_ROW row = mysql_fetch_row(res);
  EXPECT_EQ(std::string(row[0]), "501");
  EXPECT_EQ(std::string(row[1]), std::to_string(500 * 501 / 2 + 1000));
  EXPECT_EQ(std::string(row[2]), "long value");
  mysql_free_result(res);
}

TEST_F(PreparedStatementTest, MillracesOwnStatementsAndErrorsWithTheirCodes) {
  // A statement Millrace answers itself runs as text with the values in place.
  Sql("CREATE DATABASE IF NOT EXISTS ps");
  StmtPtr show = Prepare("SHOW DATABASES LIKE ?");
  char pattern[] = "ps";
  unsigned long len = std::strlen(pattern);
  bool no = false;
  MYSQL_BIND p = Bind(MYSQL_TYPE_STRING, pattern, len, &no, &len);
  ASSERT_EQ(mysql_stmt_bind_param(show.get(), &p), 0);
  ASSERT_EQ(mysql_stmt_execute(show.get()), 0) << mysql_stmt_error(show.get());
  ASSERT_EQ(mysql_stmt_store_result(show.get()), 0) << mysql_stmt_error(show.get());
  EXPECT_EQ(mysql_stmt_num_rows(show.get()), 1u);

  // Errors keep their MySQL codes, at prepare and at execute.
  StmtPtr bad(mysql_stmt_init(mysql_.get()));
  const std::string missing = "SELECT * FROM ps.no_such_table WHERE x = ?";
  EXPECT_NE(mysql_stmt_prepare(bad.get(), missing.data(), missing.size()), 0);
  EXPECT_EQ(mysql_stmt_errno(bad.get()), 1146u) << mysql_stmt_error(bad.get());
  Sql("CREATE DATABASE IF NOT EXISTS ps");
  Sql("CREATE TABLE ps.nums (n INT)");
  StmtPtr cast = Prepare("INSERT INTO ps.nums VALUES (CAST(? AS INT))");
  char text[] = "not a number";
  len = std::strlen(text);
  MYSQL_BIND t = Bind(MYSQL_TYPE_STRING, text, len, &no, &len);
  ASSERT_EQ(mysql_stmt_bind_param(cast.get(), &t), 0);
  EXPECT_NE(mysql_stmt_execute(cast.get()), 0);
  EXPECT_NE(mysql_stmt_errno(cast.get()), 0u);
  // The session goes on.
  EXPECT_EQ(mysql_query(mysql_.get(), "SELECT 1"), 0);
  mysql_free_result(mysql_store_result(mysql_.get()));
}

// Privileges are checked at every execution, not only at prepare.
TEST_F(PreparedStatementTest, ARevokedPrivilegeStopsTheNextExecution) {
  Sql("CREATE DATABASE IF NOT EXISTS ps");
  Sql("CREATE TABLE ps.secret (n INT)");
  Sql("INSERT INTO ps.secret VALUES (1), (2)");
  Sql("CREATE USER 'ana'@'%' IDENTIFIED BY 'ana-pw'");
  Sql("GRANT SELECT ON ps.* TO 'ana'@'%'");
  std::string error;
  MysqlPtr ana = ConnectorC(server().mysql_port(), "ana-pw", 0, nullptr, &error, nullptr, "ana");
  ASSERT_NE(ana, nullptr) << error;
  StmtPtr stmt(mysql_stmt_init(ana.get()));
  const std::string sql = "SELECT count(*) FROM ps.secret WHERE n >= ?";
  ASSERT_EQ(mysql_stmt_prepare(stmt.get(), sql.data(), sql.size()), 0)
      << mysql_stmt_error(stmt.get());
  int32_t from = 1;
  bool no = false;
  MYSQL_BIND p = Bind(MYSQL_TYPE_LONG, &from, 0, &no);
  ASSERT_EQ(mysql_stmt_bind_param(stmt.get(), &p), 0);
  ASSERT_EQ(mysql_stmt_execute(stmt.get()), 0) << mysql_stmt_error(stmt.get());
  ASSERT_EQ(mysql_stmt_store_result(stmt.get()), 0);
  EXPECT_EQ(mysql_stmt_num_rows(stmt.get()), 1u);
  mysql_stmt_free_result(stmt.get());
  Sql("REVOKE SELECT ON ps.* FROM 'ana'@'%'");
  EXPECT_NE(mysql_stmt_execute(stmt.get()), 0);
  EXPECT_EQ(mysql_stmt_errno(stmt.get()), 1142u) << mysql_stmt_error(stmt.get());
}

// DuckDB's types without a MySQL twin arrive in the type mysql_types.h declares for them, in
// binary rows as in text ones.
TEST_F(PreparedStatementTest, DuckDbTypesArriveInTheirDeclaredMySqlTypes) {
  StmtPtr stmt = Prepare(
      "SELECT TIMESTAMPTZ '2024-02-29 13:45:30.5+00', 170141183460469231731687303715884105727::"
      "HUGEINT, '5b1e0f3c-1a2b-4c3d-8e9f-0a1b2c3d4e5f'::UUID, [1, 2, 3], INTERVAL 2 DAY");
  ASSERT_EQ(mysql_stmt_execute(stmt.get()), 0) << mysql_stmt_error(stmt.get());
  MYSQL_RES* meta = mysql_stmt_result_metadata(stmt.get());
  ASSERT_NE(meta, nullptr);
  EXPECT_EQ(mysql_fetch_field_direct(meta, 0)->type, MYSQL_TYPE_TIMESTAMP);
  EXPECT_EQ(mysql_fetch_field_direct(meta, 1)->type, MYSQL_TYPE_NEWDECIMAL);
  EXPECT_EQ(mysql_fetch_field_direct(meta, 2)->type, MYSQL_TYPE_STRING);
  EXPECT_EQ(mysql_fetch_field_direct(meta, 3)->type, MYSQL_TYPE_BLOB);
  EXPECT_EQ(mysql_fetch_field_direct(meta, 3)->charsetnr, 45u);
  mysql_free_result(meta);
  MYSQL_TIME ts{};
  char texts[4][64];
  unsigned long lengths[4] = {};
  bool nulls[5] = {};
  MYSQL_BIND out[5] = {Bind(MYSQL_TYPE_TIMESTAMP, &ts, sizeof(ts), &nulls[0])};
  for (int k = 0; k < 4; ++k)
    out[k + 1] = Bind(MYSQL_TYPE_STRING, texts[k], sizeof(texts[k]), &nulls[k + 1], &lengths[k]);
  ASSERT_EQ(mysql_stmt_bind_result(stmt.get(), out), 0);
  ASSERT_EQ(mysql_stmt_fetch(stmt.get()), 0) << mysql_stmt_error(stmt.get());
  EXPECT_EQ(ts.year, 2024u);
  EXPECT_EQ(ts.day, 29u);
  EXPECT_EQ(ts.hour, 13u);
  EXPECT_EQ(ts.second_part, 500000u);
  EXPECT_EQ(std::string(texts[0], lengths[0]), "170141183460469231731687303715884105727");
  EXPECT_EQ(std::string(texts[1], lengths[1]), "5b1e0f3c-1a2b-4c3d-8e9f-0a1b2c3d4e5f");
  EXPECT_EQ(std::string(texts[2], lengths[2]), "[1, 2, 3]");
  EXPECT_EQ(std::string(texts[3], lengths[3]), "2 days");
}

// A read-only cursor (COM_STMT_FETCH): rows arrive a few at a time, and a statement run on the
// connection in between closes the cursor.
TEST_F(PreparedStatementTest, ReadOnlyCursorFetchesRowsInBatches) {
  Sql("CREATE DATABASE IF NOT EXISTS ps");
  Sql("CREATE TABLE ps.seq AS SELECT range AS i FROM range(100)");
  StmtPtr stmt = Prepare("SELECT i, 'r' || i::VARCHAR FROM ps.seq WHERE i < ? ORDER BY i");
  unsigned long cursor = CURSOR_TYPE_READ_ONLY;
  unsigned long prefetch = 3;
  ASSERT_EQ(mysql_stmt_attr_set(stmt.get(), STMT_ATTR_CURSOR_TYPE, &cursor), 0);
  ASSERT_EQ(mysql_stmt_attr_set(stmt.get(), STMT_ATTR_PREFETCH_ROWS, &prefetch), 0);
  int64_t count = 10;
  bool no = false;
  MYSQL_BIND p = Bind(MYSQL_TYPE_LONGLONG, &count, 0, &no);
  ASSERT_EQ(mysql_stmt_bind_param(stmt.get(), &p), 0);
  int64_t i = -1;
  char text[16];
  unsigned long text_length = 0;
  bool i_null = false;
  bool text_null = false;
  MYSQL_BIND out[2] = {Bind(MYSQL_TYPE_LONGLONG, &i, 0, &i_null),
                       Bind(MYSQL_TYPE_STRING, text, sizeof(text), &text_null, &text_length)};
  for (int round = 0; round < 2; ++round) {
    ASSERT_EQ(mysql_stmt_execute(stmt.get()), 0) << mysql_stmt_error(stmt.get());
    ASSERT_EQ(mysql_stmt_bind_result(stmt.get(), out), 0);
    for (int64_t want = 0; want < count; ++want) {
      ASSERT_EQ(mysql_stmt_fetch(stmt.get()), 0) << want << ": " << mysql_stmt_error(stmt.get());
      EXPECT_EQ(i, want);
      EXPECT_EQ(std::string(text, text_length), "r" + std::to_string(want));
    }
    EXPECT_EQ(mysql_stmt_fetch(stmt.get()), MYSQL_NO_DATA);
    count = 7;  // the same statement, executed again with another bound value
  }
  // Another statement on the connection ends the open cursor: its next fetch is an error.
  ASSERT_EQ(mysql_stmt_execute(stmt.get()), 0) << mysql_stmt_error(stmt.get());
  ASSERT_EQ(mysql_stmt_bind_result(stmt.get(), out), 0);
  ASSERT_EQ(mysql_stmt_fetch(stmt.get()), 0);
  Sql("SELECT 1");
  mysql_free_result(mysql_store_result(mysql_.get()));
  int fetched = 0;
  while (fetched < 10 && mysql_stmt_fetch(stmt.get()) == 0)
    ++fetched;
  EXPECT_LT(fetched, 6);
  EXPECT_EQ(mysql_stmt_errno(stmt.get()), 1421u) << mysql_stmt_error(stmt.get());
}

// COM_FIELD_LIST (mysql_list_fields), COM_SET_OPTION, COM_STATISTICS, COM_RESET_CONNECTION,
// COM_CHANGE_USER and COM_PROCESS_KILL, as Connector/C sends them.
TEST_F(PreparedStatementTest, UtilityCommandsAnswerAsMySql) {
  Sql("CREATE DATABASE IF NOT EXISTS util");
  Sql("CREATE TABLE IF NOT EXISTS util.t (id INT, name VARCHAR, price DECIMAL(8,3))");
  Sql("USE util");
  MYSQL_RES* fields = mysql_list_fields(mysql_.get(), "t", nullptr);
  ASSERT_NE(fields, nullptr) << mysql_error(mysql_.get());
  ASSERT_EQ(mysql_num_fields(fields), 3u);
  EXPECT_STREQ(mysql_fetch_field_direct(fields, 0)->name, "id");
  EXPECT_STREQ(mysql_fetch_field_direct(fields, 0)->table, "t");
  EXPECT_EQ(mysql_fetch_field_direct(fields, 2)->type, MYSQL_TYPE_NEWDECIMAL);
  EXPECT_EQ(mysql_fetch_field_direct(fields, 2)->decimals, 3u);
  mysql_free_result(fields);
  fields = mysql_list_fields(mysql_.get(), "t", "N%");
  ASSERT_NE(fields, nullptr) << mysql_error(mysql_.get());
  ASSERT_EQ(mysql_num_fields(fields), 1u);
  EXPECT_STREQ(mysql_fetch_field_direct(fields, 0)->name, "name");
  mysql_free_result(fields);
  EXPECT_EQ(mysql_list_fields(mysql_.get(), "nope", nullptr), nullptr);
  EXPECT_EQ(mysql_errno(mysql_.get()), 1146u) << mysql_error(mysql_.get());

  // Multi-statements follow COM_SET_OPTION.
  EXPECT_NE(mysql_query(mysql_.get(), "SELECT 1; SELECT 2"), 0);
  ASSERT_EQ(mysql_set_server_option(mysql_.get(), MYSQL_OPTION_MULTI_STATEMENTS_ON), 0)
      << mysql_error(mysql_.get());
  ASSERT_EQ(mysql_query(mysql_.get(), "SELECT 1; SELECT 2"), 0) << mysql_error(mysql_.get());
  int results = 0;
  do {
    mysql_free_result(mysql_store_result(mysql_.get()));
    ++results;
  } while (mysql_next_result(mysql_.get()) == 0);
  EXPECT_EQ(results, 2);
  ASSERT_EQ(mysql_set_server_option(mysql_.get(), MYSQL_OPTION_MULTI_STATEMENTS_OFF), 0);
  EXPECT_NE(mysql_query(mysql_.get(), "SELECT 1; SELECT 2"), 0);

  const char* stat = mysql_stat(mysql_.get());
  ASSERT_NE(stat, nullptr) << mysql_error(mysql_.get());
  EXPECT_EQ(std::string(stat).rfind("Uptime: ", 0), 0u) << stat;
  EXPECT_NE(std::string(stat).find("Questions: "), std::string::npos) << stat;

  // COM_RESET_CONNECTION: the database stays; session variables, transactions and prepared
  // statements do not.
  Sql("SET autocommit = 0");
  Sql("INSERT INTO t VALUES (1, 'a', 1.5)");
  StmtPtr stmt = Prepare("SELECT 1");
  ASSERT_EQ(mysql_reset_connection(mysql_.get()), 0) << mysql_error(mysql_.get());
  Sql("SELECT @@autocommit, database(), (SELECT count(*) FROM t)");
  MYSQL_RES* res = mysql_store_result(mysql_.get());
  MYSQL_ROW row = mysql_fetch_row(res);
  EXPECT_STREQ(row[0], "1");
  EXPECT_STREQ(row[1], "util");
  EXPECT_STREQ(row[2], "0");  // the open transaction was rolled back
  mysql_free_result(res);

  // COM_CHANGE_USER: another user, checked against its password; a wrong one closes.
  Sql("CREATE USER IF NOT EXISTS 'bo'@'%' IDENTIFIED BY 'bo-pw'");
  Sql("GRANT SELECT ON util.* TO 'bo'@'%'");
  ASSERT_EQ(mysql_change_user(mysql_.get(), "bo", "bo-pw", "util"), 0) << mysql_error(mysql_.get());
  Sql("SELECT current_user(), database()");
  res = mysql_store_result(mysql_.get());
  row = mysql_fetch_row(res);
  EXPECT_EQ(std::string(row[0]).rfind("bo", 0), 0u) << row[0];
  EXPECT_STREQ(row[1], "util");
  mysql_free_result(res);
  EXPECT_NE(mysql_query(mysql_.get(), "CREATE TABLE util.u (x INT)"), 0);
  EXPECT_EQ(mysql_errno(mysql_.get()), 1142u) << mysql_error(mysql_.get());
  EXPECT_NE(mysql_change_user(mysql_.get(), "root", "wrong", nullptr), 0);
  EXPECT_EQ(mysql_errno(mysql_.get()), 1045u) << mysql_error(mysql_.get());

  // COM_PROCESS_KILL (mysql_kill) ends another connection.
  std::string error;
  MysqlPtr victim = ConnectorC(server().mysql_port(), "", 0, nullptr, &error);
  ASSERT_NE(victim, nullptr) << error;
  MysqlPtr killer = ConnectorC(server().mysql_port(), "", 0, nullptr, &error);
  ASSERT_NE(killer, nullptr) << error;
  ASSERT_EQ(mysql_kill(killer.get(), mysql_thread_id(victim.get())), 0)
      << mysql_error(killer.get());
  EXPECT_NE(mysql_query(victim.get(), "SELECT 1"), 0);
  EXPECT_NE(mysql_kill(killer.get(), 999999), 0);
  EXPECT_EQ(mysql_errno(killer.get()), 1094u) << mysql_error(killer.get());
}

}  // namespace
}  // namespace millrace::server
