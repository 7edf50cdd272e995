// ClassifyError decides from a status's detail and code, never from its message.
#include "sql/mysql_errors.h"

#include <gtest/gtest.h>

#include "engine/duckdb_status.h"

namespace millrace::sql {
namespace {

using engine::DuckDbReason;

Status DuckDbError(StatusCode code, duckdb_error_type type,
                   DuckDbReason reason = DuckDbReason::kNone) {
  return Status(code, "a DuckDB error")
      .WithDetail({ErrorDomain::kDuckDb, type, static_cast<int32_t>(reason)});
}

void ExpectError(const Status& status, uint16_t code, std::string_view sqlstate) {
  const MySqlError error = ClassifyError(status);
  EXPECT_EQ(error.code, code) << status.ToString();
  EXPECT_EQ(error.sqlstate, sqlstate) << status.ToString();
}

TEST(ClassifyErrorTest, DuckDbDetailsMapByTypeAndReason) {
  constexpr StatusCode kAny = StatusCode::kInvalidArgument;
  ExpectError(DuckDbError(kAny, DUCKDB_ERROR_PARSER), kErParse, "42000");
  ExpectError(DuckDbError(kAny, DUCKDB_ERROR_SYNTAX), kErParse, "42000");
  ExpectError(DuckDbError(kAny, DUCKDB_ERROR_CATALOG, DuckDbReason::kTableMissing), kErNoSuchTable,
              "42S02");
  ExpectError(DuckDbError(kAny, DUCKDB_ERROR_CATALOG, DuckDbReason::kTableExists), kErTableExists,
              "42S01");
  ExpectError(DuckDbError(kAny, DUCKDB_ERROR_CATALOG, DuckDbReason::kSchemaMissing), kErBadDb,
              "42000");
  ExpectError(DuckDbError(kAny, DUCKDB_ERROR_CATALOG, DuckDbReason::kSchemaExists),
              kErDbCreateExists, "HY000");
  ExpectError(DuckDbError(kAny, DUCKDB_ERROR_CATALOG, DuckDbReason::kFunctionMissing),
              kErSpDoesNotExist, "42000");
  ExpectError(DuckDbError(kAny, DUCKDB_ERROR_CATALOG, DuckDbReason::kUnknownSetting),
              kErUnknownSystemVariable, "HY000");
  ExpectError(DuckDbError(kAny, DUCKDB_ERROR_BINDER, DuckDbReason::kColumnMissing), kErBadField,
              "42S22");
  ExpectError(DuckDbError(kAny, DUCKDB_ERROR_CONSTRAINT, DuckDbReason::kDuplicateKey), kErDupEntry,
              "23000");
  ExpectError(DuckDbError(kAny, DUCKDB_ERROR_CONSTRAINT, DuckDbReason::kNotNullViolated),
              kErBadNull, "23000");
  ExpectError(DuckDbError(kAny, DUCKDB_ERROR_CONVERSION), kErTruncatedWrongValue, "HY000");
  ExpectError(DuckDbError(StatusCode::kOutOfRange, DUCKDB_ERROR_OUT_OF_RANGE), kErDataOutOfRange,
              "22003");
  ExpectError(DuckDbError(StatusCode::kCancelled, DUCKDB_ERROR_INTERRUPT), kErQueryInterrupted,
              "70100");
  ExpectError(DuckDbError(StatusCode::kNotSupported, DUCKDB_ERROR_NOT_IMPLEMENTED),
              kErNotSupportedYet, "42000");
}

TEST(ClassifyErrorTest, DuckDbErrorsWithoutAMySqlCounterpartFallBackToTheCode) {
  ExpectError(DuckDbError(StatusCode::kInvalidArgument, DUCKDB_ERROR_BINDER), kErUnknown, "HY000");
  ExpectError(DuckDbError(StatusCode::kFailedPrecondition, DUCKDB_ERROR_CONSTRAINT), kErUnknown,
              "HY000");
  ExpectError(
      DuckDbError(StatusCode::kAlreadyExists, DUCKDB_ERROR_CATALOG, DuckDbReason::kEntryExists),
      kErUnknown, "HY000");
  ExpectError(DuckDbError(StatusCode::kResourceExhausted, DUCKDB_ERROR_OUT_OF_MEMORY),
              kErOutOfResources, "HY000");
}

TEST(ClassifyErrorTest, TheSqlLayersErrorsCarryTheirErrno) {
  ExpectError(UnknownDatabaseError("d"), kErBadDb, "42000");
  ExpectError(NoDatabaseSelectedError(), kErNoDb, "3D000");
  ExpectError(DatabaseExistsError("d"), kErDbCreateExists, "HY000");
  ExpectError(DatabaseMissingError("d"), kErDbDropExists, "HY000");
  ExpectError(DatabaseAccessDeniedError("d"), kErDbAccessDenied, "42000");
  ExpectError(NoSuchTableError("d", "t"), kErNoSuchTable, "42S02");
  ExpectError(UnknownSystemVariableError("v"), kErUnknownSystemVariable, "HY000");
  ExpectError(WrongValueForVariableError("v", "x"), kErWrongValueForVar, "42000");
  ExpectError(EmptyQueryError(), kErEmptyQuery, "42000");
  ExpectError(SyntaxError("here"), kErParse, "42000");
  EXPECT_TRUE(NoSuchTableError("d", "t").Is(ErrorDomain::kMySql, kErNoSuchTable));
}

TEST(ClassifyErrorTest, TheMessagesAreMySqls) {
  EXPECT_EQ(UnknownDatabaseError("d").message(), "Unknown database 'd'");
  EXPECT_EQ(NoSuchTableError("d", "t").message(), "Table 'd.t' doesn't exist");
  EXPECT_EQ(DatabaseExistsError("d").message(), "Can't create database 'd'; database exists");
  EXPECT_EQ(SyntaxError("here").message(),
            "You have an error in your SQL syntax; check the manual that corresponds to your "
            "Millrace server version: here");
}

TEST(ClassifyErrorTest, PrivilegeErrorsAreMySqls) {
  ExpectError(AccessDeniedError("bob", "10.0.0.1", true), kErAccessDenied, "28000");
  EXPECT_EQ(AccessDeniedError("bob", "10.0.0.1", true).message(),
            "Access denied for user 'bob'@'10.0.0.1' (using password: YES)");
  EXPECT_EQ(AccessDeniedError("bob", "h", false).message(),
            "Access denied for user 'bob'@'h' (using password: NO)");
  ExpectError(DatabaseAccessDeniedError("bob", "%", "shop"), kErDbAccessDenied, "42000");
  EXPECT_EQ(DatabaseAccessDeniedError("bob", "%", "shop").message(),
            "Access denied for user 'bob'@'%' to database 'shop'");
  ExpectError(TableAccessDeniedError("SELECT_PRIV", "bob", "%", "shop", "t"), kErTableAccessDenied,
              "42000");
  EXPECT_EQ(TableAccessDeniedError("SELECT_PRIV", "bob", "%", "shop", "t").message(),
            "SELECT_PRIV command denied to user 'bob'@'%' for table 'shop.t'");
  ExpectError(SpecificAccessDeniedError("ADMIN_PRIV"), kErSpecificAccessDenied, "42000");
  EXPECT_EQ(SpecificAccessDeniedError("ADMIN_PRIV").message(),
            "Access denied; you need (at least one of) the ADMIN_PRIV privilege(s) for this "
            "operation");
  ExpectError(CannotUserError("CREATE USER", "bob", "%"), kErCannotUser, "HY000");
  EXPECT_EQ(CannotUserError("DROP USER", "bob", "%").message(),
            "Operation DROP USER failed for 'bob'@'%'");
  ExpectError(PasswordNoMatchError(), kErPasswordNoMatch, "42000");
  ExpectError(NonexistingGrantError("bob", "%"), kErNonexistingGrant, "42000");
  EXPECT_EQ(NonexistingGrantError("bob", "%").message(),
            "There is no such grant defined for user 'bob' on host '%'");
  ExpectError(CantCreateUserWithGrantError(), kErCantCreateUserWithGrant, "42000");
  ExpectError(WrongUsageError("DB GRANT", "GLOBAL PRIVILEGES"), kErWrongUsage, "HY000");
  ExpectError(TooManyUserConnectionsError("bob"), kErTooManyUserConnections, "42000");
  ExpectError(PasswordFormatError(), kErPasswordFormat, "HY000");
}

// The text of an error decides nothing: without a detail, only the StatusCode counts.
TEST(ClassifyErrorTest, AMessageThatReadsLikeAKnownErrorIsNotClassifiedAsOne) {
  ExpectError(Status::InvalidArgument("Conversion Error: looks like DuckDB"), kErUnknown, "HY000");
  ExpectError(Status::InvalidArgument("Parser Error: syntax error at or near \"SELEC\""),
              kErUnknown, "HY000");
  ExpectError(Status::NotFound("Catalog Error: Table with name t does not exist!"), kErUnknown,
              "HY000");
  ExpectError(Status::NotFound("Table 'd.t' doesn't exist"), kErUnknown, "HY000");
  ExpectError(Status::InvalidArgument("You have an error in your SQL syntax"), kErUnknown, "HY000");
  // A detail of another domain is not read as MySQL's or DuckDB's.
  ExpectError(Status::InvalidArgument("x").WithDetail({ErrorDomain::kJob, kErParse, 0}), kErUnknown,
              "HY000");
}

TEST(ClassifyErrorTest, WithoutADetailTheCodeDecides) {
  ExpectError(Status::Unauthenticated("no"), kErAccessDenied, "28000");
  ExpectError(Status::PermissionDenied("no"), kErOptionPreventsStatement, "HY000");
  ExpectError(Status::Unauthenticated("no"), kErAccessDenied, "28000");
  ExpectError(Status::Cancelled("stop"), kErQueryInterrupted, "70100");
  ExpectError(Status::ResourceExhausted("full"), kErOutOfResources, "HY000");
  ExpectError(Status::NotSupported("later"), kErNotSupportedYet, "42000");
  ExpectError(Status::Internal("oops"), kErUnknown, "HY000");
}

// Context added on the way up keeps the detail, and with it the errno.
TEST(ClassifyErrorTest, ContextKeepsTheClassification) {
  ExpectError(NoSuchTableError("d", "t").WithContext("DESC"), kErNoSuchTable, "42S02");
}

TEST(SqlStateOfTest, KnowsEveryErrnoItSends) {
  EXPECT_EQ(SqlStateOf(kErNoSuchTable), "42S02");
  EXPECT_EQ(SqlStateOf(kErNoDb), "3D000");
  EXPECT_EQ(SqlStateOf(kErHandshake), "08S01");
  EXPECT_EQ(SqlStateOf(9999), "HY000");
}

}  // namespace
}  // namespace millrace::sql
