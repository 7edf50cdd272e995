// DuckDB's errors carry a typed detail: the error type DuckDB reports and what the error is
// about, read once where the error becomes a Status. These tests pin the wordings of the DuckDB
// version we build with: when one fails after an upgrade, ReadDuckDbError needs the new text.
#include "engine/duckdb_status.h"

#include <gtest/gtest.h>

#include <fstream>

#include "engine/database.h"
#include "engine/engine_test_util.h"
#include "testing/temp_dir.h"

namespace millrace::engine {
namespace {

ErrorDetail DuckDb(duckdb_error_type type, DuckDbReason reason = DuckDbReason::kNone) {
  return ErrorDetail{ErrorDomain::kDuckDb, type, static_cast<int32_t>(reason)};
}

class DuckDbStatusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = OpenOrDie({});
    conn_ = ConnectOrDie(*db_);
  }
  // The error of `sql` run both ways: Execute reports DuckDB's typed result error, Query a
  // failed prepare (text only) or a failed execution. Both must carry the same detail.
  ErrorDetail DetailOf(const std::string& sql) {
    Status executed = conn_->Execute(sql);
    EXPECT_FALSE(executed.ok()) << sql;
    auto queried = conn_->Query(sql);
    Status via_query = queried.ok() ? (*queried)->Next().status() : queried.status();
    EXPECT_FALSE(via_query.ok()) << sql;
    EXPECT_EQ(executed.detail(), via_query.detail()) << sql << "\n"
                                                     << executed.ToString() << "\n"
                                                     << via_query.ToString();
    EXPECT_EQ(executed.code(), via_query.code()) << sql;
    return executed.detail();
  }
  std::unique_ptr<Database> db_;
  std::unique_ptr<Connection> conn_;
};

TEST_F(DuckDbStatusTest, CatalogErrorsSayWhatIsMissingOrExists) {
  EXPECT_EQ(DetailOf("SELECT * FROM no_such_table"),
            DuckDb(DUCKDB_ERROR_CATALOG, DuckDbReason::kTableMissing));
  EXPECT_EQ(conn_->Execute("SELECT * FROM no_such_table").code(), StatusCode::kNotFound);
  EXPECT_EQ(DetailOf("DROP VIEW no_such_view"),
            DuckDb(DUCKDB_ERROR_CATALOG, DuckDbReason::kTableMissing));

  ASSERT_TRUE(conn_->Execute("CREATE TABLE t (a INTEGER)").ok());
  EXPECT_EQ(DetailOf("CREATE TABLE t (a INTEGER)"),
            DuckDb(DUCKDB_ERROR_CATALOG, DuckDbReason::kTableExists));
  EXPECT_EQ(conn_->Execute("CREATE TABLE t (a INTEGER)").code(), StatusCode::kAlreadyExists);

  EXPECT_EQ(DetailOf("CREATE TABLE no_such_schema.t (a INTEGER)"),
            DuckDb(DUCKDB_ERROR_CATALOG, DuckDbReason::kSchemaMissing));
  ASSERT_TRUE(conn_->Execute("CREATE SCHEMA s").ok());
  EXPECT_EQ(DetailOf("CREATE SCHEMA s"), DuckDb(DUCKDB_ERROR_CATALOG, DuckDbReason::kSchemaExists));

  EXPECT_EQ(DetailOf("SELECT no_such_function(1)"),
            DuckDb(DUCKDB_ERROR_CATALOG, DuckDbReason::kFunctionMissing));
  EXPECT_EQ(DetailOf("SET no_such_setting = 1"),
            DuckDb(DUCKDB_ERROR_CATALOG, DuckDbReason::kUnknownSetting));
  EXPECT_EQ(DetailOf("DROP SEQUENCE no_such_sequence"),
            DuckDb(DUCKDB_ERROR_CATALOG, DuckDbReason::kEntryMissing));
}

TEST_F(DuckDbStatusTest, AMissingColumnIsABinderErrorWithItsReason) {
  EXPECT_EQ(DetailOf("SELECT nope FROM (SELECT 1 AS a)"),
            DuckDb(DUCKDB_ERROR_BINDER, DuckDbReason::kColumnMissing));
}

TEST_F(DuckDbStatusTest, ASyntaxErrorIsAParserError) {
  EXPECT_EQ(DetailOf("SELEC 1"), DuckDb(DUCKDB_ERROR_PARSER));
  EXPECT_EQ(conn_->Execute("SELEC 1").code(), StatusCode::kInvalidArgument);
}

TEST_F(DuckDbStatusTest, ABadCastIsAConversionError) {
  EXPECT_EQ(DetailOf("SELECT CAST('x' AS INTEGER)"), DuckDb(DUCKDB_ERROR_CONVERSION));
  // Raised while rows are produced: arrives from Next() with the same detail.
  auto result = conn_->Query("SELECT CAST('x' || i AS INTEGER) FROM range(10) t(i)");
  Status produced = result.ok() ? (*result)->Next().status() : result.status();
  EXPECT_EQ(produced.detail(), DuckDb(DUCKDB_ERROR_CONVERSION)) << produced.ToString();
}

TEST_F(DuckDbStatusTest, ConstraintViolationsSayWhichConstraint) {
  ASSERT_TRUE(conn_->Execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)").ok());
  EXPECT_EQ(DetailOf("INSERT INTO t VALUES (1, NULL)"),
            DuckDb(DUCKDB_ERROR_CONSTRAINT, DuckDbReason::kNotNullViolated));
  ASSERT_TRUE(conn_->Execute("INSERT INTO t VALUES (1, 1)").ok());
  // Against a stored row, and within one statement.
  EXPECT_EQ(DetailOf("INSERT INTO t VALUES (1, 2)"),
            DuckDb(DUCKDB_ERROR_CONSTRAINT, DuckDbReason::kDuplicateKey));
  EXPECT_EQ(DetailOf("INSERT INTO t VALUES (3, 3), (3, 3)"),
            DuckDb(DUCKDB_ERROR_CONSTRAINT, DuckDbReason::kDuplicateKey));
  EXPECT_EQ(conn_->Execute("INSERT INTO t VALUES (1, 2)").code(), StatusCode::kFailedPrecondition);
}

TEST_F(DuckDbStatusTest, EndingATransactionOutsideOneSaysSo) {
  EXPECT_EQ(DetailOf("COMMIT"),
            DuckDb(DUCKDB_ERROR_TRANSACTION, DuckDbReason::kNoActiveTransaction));
  EXPECT_EQ(DetailOf("ROLLBACK"),
            DuckDb(DUCKDB_ERROR_TRANSACTION, DuckDbReason::kNoActiveTransaction));
}

TEST_F(DuckDbStatusTest, AJsonValueThatDoesNotFitItsColumnIsATransformFailure) {
  millrace::testing::TempDir dir;
  const std::string path = dir.Join("rows.json");
  std::ofstream(path) << "{\"a\": \"not a number\"}\n";
  const ErrorDetail detail =
      DetailOf("SELECT * FROM read_json(" + QuoteLiteral(path) + ", columns = {a: 'INTEGER'})");
  EXPECT_EQ(detail, DuckDb(DUCKDB_ERROR_INVALID_INPUT, DuckDbReason::kJsonTransformFailed));
}

// DuckDB gives only text for a failed prepare: the type is read from the message's prefix,
// matched whole ("Invalid Input" is not "Invalid").
TEST(ReadDuckDbErrorTest, TheTypeOfATextOnlyErrorComesFromItsPrefix) {
  EXPECT_EQ(ReadDuckDbError(std::nullopt, "Invalid Input Error: bad"),
            DuckDb(DUCKDB_ERROR_INVALID_INPUT));
  EXPECT_EQ(ReadDuckDbError(std::nullopt, "Invalid Error: bad"), DuckDb(DUCKDB_ERROR_INVALID));
  EXPECT_EQ(ReadDuckDbError(std::nullopt, "Invalid type Error: bad"),
            DuckDb(DUCKDB_ERROR_INVALID_TYPE));
  EXPECT_EQ(ReadDuckDbError(std::nullopt, "INTERRUPT Error: Interrupted!"),
            DuckDb(DUCKDB_ERROR_INTERRUPT));
  EXPECT_EQ(ReadDuckDbError(std::nullopt, "no prefix at all"), DuckDb(DUCKDB_ERROR_INVALID));
  EXPECT_EQ(ReadDuckDbError(std::nullopt, ""), DuckDb(DUCKDB_ERROR_INVALID));
  EXPECT_EQ(StatusFromDuckDBMessage(nullptr).code(), StatusCode::kInternal);
}

// A reason belongs to its type: a binder error (as DuckDB wraps a table function's own error)
// that happens to read like a catalog one is not a missing table.
TEST(ReadDuckDbErrorTest, AReasonIsOnlyReadForItsOwnType) {
  EXPECT_EQ(ReadDuckDbError(DUCKDB_ERROR_BINDER, "Binder Error: Table with name t does not exist!"),
            DuckDb(DUCKDB_ERROR_BINDER));
  EXPECT_EQ(ReadDuckDbError(DUCKDB_ERROR_INVALID_INPUT,
                            "Invalid Input Error: NOT NULL constraint failed"),
            DuckDb(DUCKDB_ERROR_INVALID_INPUT));
}

TEST(ReadDuckDbErrorTest, ANameThatReadsLikeTheMessageDoesNotConfuseIt) {
  EXPECT_EQ(ReadDuckDbError(std::nullopt,
                            "Catalog Error: Table with name \"x does not exist\" already exists!"),
            DuckDb(DUCKDB_ERROR_CATALOG, DuckDbReason::kTableExists));
  EXPECT_EQ(ReadDuckDbError(std::nullopt,
                            "Catalog Error: Table with name already exists! does not exist!\n"
                            "Did you mean \"t\"?"),
            DuckDb(DUCKDB_ERROR_CATALOG, DuckDbReason::kTableMissing));
}

TEST(DuckDbReasonOfTest, IsNoneOutsideTheDuckDbDomain) {
  EXPECT_EQ(DuckDbReasonOf(Status::Ok()), DuckDbReason::kNone);
  const Status mysql = Status::NotFound("x").WithDetail({ErrorDomain::kMySql, 1146, 0});
  EXPECT_EQ(DuckDbReasonOf(mysql), DuckDbReason::kNone);
  EXPECT_FALSE(IsDuckDbError(Status::InvalidArgument("Conversion Error: not really"),
                             DUCKDB_ERROR_CONVERSION));
}

}  // namespace
}  // namespace millrace::engine
