// The pure parts of the PostgreSQL module: WAL positions, COPY's text format, type mappings,
// and pgoutput messages built byte by byte as the protocol documents them.
#include <gtest/gtest.h>

#include "pg/lsn.h"
#include "pg/pg_connection.h"
#include "pg/pg_types.h"
#include "pg/pgoutput.h"

namespace millrace::pg {
namespace {

std::string U32(uint32_t v) {
  std::string out;
  for (int i = 3; i >= 0; --i)
    out.push_back(static_cast<char>((v >> (i * 8)) & 0xff));
  return out;
}
std::string U16(uint16_t v) {
  return std::string{static_cast<char>(v >> 8), static_cast<char>(v & 0xff)};
}
std::string U64(uint64_t v) {
  return U32(static_cast<uint32_t>(v >> 32)) + U32(static_cast<uint32_t>(v));
}

TEST(LsnTest, RoundTripsAndRejectsWhatIsNotAPosition) {
  auto lsn = ParseLsn("16/B374D848");
  ASSERT_TRUE(lsn.ok());
  EXPECT_EQ(*lsn, (0x16ULL << 32) | 0xB374D848ULL);
  EXPECT_EQ(FormatLsn(*lsn), "16/B374D848");
  EXPECT_EQ(*ParseLsn("0/16b3748"), 0x16B3748ULL);
  for (const char* bad : {"", "16", "/1", "1/", "x/1", "1/2/3", "1 /2"}) {
    EXPECT_EQ(ParseLsn(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(ConnectUriTest, ReadsTheFieldsAndRefusesWhatIsNotAUri) {
  auto params = ParseConnectUri("postgresql://ann:p%40ss@db.example:6543/catalog?sslmode=require");
  ASSERT_TRUE(params.ok()) << params.status().ToString();
  EXPECT_EQ(params->host, "db.example");
  EXPECT_EQ(params->port, 6543);
  EXPECT_EQ(params->database, "catalog");
  EXPECT_EQ(params->user, "ann");
  EXPECT_EQ(params->password, "p@ss");
  EXPECT_EQ(params->sslmode, "require");
  EXPECT_EQ(ParseConnectUri("postgres://h/d").value().port, 5432);

  EXPECT_EQ(ParseConnectUri("mysql://h/d").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseConnectUri("postgresql://h").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseConnectUri("postgresql:///d").status().code(), StatusCode::kInvalidArgument);
  const Status bad = ParseConnectUri("postgresql://u:secretpw@h/d?nosuch=1").status();
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message().find("secretpw"), std::string::npos) << bad.message();
  EXPECT_EQ(ParseConnectUri("postgresql://h:99999/d").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(CopyLineTest, DecodesEscapesAndNulls) {
  Row row = DecodeCopyLine("1\t\\N\ta\\tb\\nc\\\\d\t\t\\101\\x41");
  ASSERT_EQ(row.size(), 5u);
  EXPECT_EQ(*row[0], "1");
  EXPECT_FALSE(row[1].has_value());
  EXPECT_EQ(*row[2], "a\tb\nc\\d");
  EXPECT_EQ(*row[3], "");
  EXPECT_EQ(*row[4], "AA");
  // A literal backslash-N is a value, not NULL.
  EXPECT_EQ(*DecodeCopyLine("\\\\N")[0], "\\N");
}

TEST(TypeMapTest, CommonTypesMapAndConvert) {
  auto map = [](uint32_t oid, int32_t modifier = -1) {
    PgType t;
    t.oid = oid;
    t.modifier = modifier;
    return MapType(t);
  };
  EXPECT_EQ(map(23).duckdb_type, "INTEGER");
  EXPECT_EQ(map(1700, ((12 << 16) | 3) + 4).duckdb_type, "DECIMAL(12,3)");
  EXPECT_EQ(map(1700).duckdb_type, "DECIMAL(38,9)");
  EXPECT_EQ(map(1700, ((60 << 16) | 3) + 4).duckdb_type, "VARCHAR");
  EXPECT_EQ(map(1043, 24).doris_type, "varchar(20)");
  EXPECT_EQ(change::ValueSql(map(17), "v"), "unhex(substr(v, 3))");
  EXPECT_EQ(change::ValueSql(map(25), "v"), "v");
  PgType array;
  array.oid = 1007;
  array.category = 'A';
  array.element = 23;
  EXPECT_EQ(MapType(array).duckdb_type, "INTEGER[]");
  EXPECT_EQ(*change::StageText(MapType(array), "{1,2}"), "[\"1\",\"2\"]");
  PgType enum_type;
  enum_type.oid = 90000;
  enum_type.typtype = 'e';
  EXPECT_EQ(MapType(enum_type).duckdb_type, "VARCHAR");
}

TEST(PgOutputTest, DecodesTheMessagesOfATransaction) {
  auto begin = DecodePgOutput("B" + U64(0x1234) + U64(99) + U32(7));
  ASSERT_TRUE(begin.ok());
  EXPECT_EQ(std::get<BeginMessage>(*begin).final_lsn, 0x1234u);
  EXPECT_EQ(std::get<BeginMessage>(*begin).xid, 7u);

  const std::string relation = std::string("R") + U32(16384) + "public" + '\0' + "t" + '\0' + 'd' +
                               U16(2) + '\1' + "id" + '\0' + U32(23) + U32(0xffffffff) + '\0' +
                               "v" + '\0' + U32(25) + U32(0xffffffff);
  auto rel = DecodePgOutput(relation);
  ASSERT_TRUE(rel.ok()) << rel.status().ToString();
  const auto& r = std::get<RelationMessage>(*rel);
  EXPECT_EQ(r.name, "t");
  ASSERT_EQ(r.columns.size(), 2u);
  EXPECT_TRUE(r.columns[0].key);
  EXPECT_FALSE(r.columns[1].key);
  EXPECT_EQ(r.columns[1].type_oid, 25u);

  const std::string tuple = U16(2) + "t" + U32(2) + "42" + "u";
  auto update =
      DecodePgOutput("U" + U32(16384) + "K" + U16(2) + "t" + U32(1) + "1" + "n" + "N" + tuple);
  ASSERT_TRUE(update.ok()) << update.status().ToString();
  const auto& u = std::get<UpdateMessage>(*update);
  EXPECT_EQ(u.old_kind, 'K');
  EXPECT_EQ(u.old_row[0].text, "1");
  EXPECT_EQ(u.row[0].text, "42");
  EXPECT_EQ(u.row[1].kind, change::TupleValue::Kind::kUnchanged);

  auto del = DecodePgOutput("D" + U32(16384) + "K" + U16(1) + "t" + U32(2) + "42");
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(std::get<DeleteMessage>(*del).old_row[0].text, "42");

  auto truncate = DecodePgOutput("T" + U32(2) + std::string(1, '\1') + U32(1) + U32(2));
  ASSERT_TRUE(truncate.ok());
  EXPECT_TRUE(std::get<TruncateMessage>(*truncate).cascade);
  EXPECT_EQ(std::get<TruncateMessage>(*truncate).relations.size(), 2u);

  auto commit = DecodePgOutput("C" + std::string(1, '\0') + U64(0x1234) + U64(0x1250) + U64(5));
  ASSERT_TRUE(commit.ok());
  EXPECT_EQ(std::get<CommitMessage>(*commit).end_lsn, 0x1250u);
}

TEST(PgOutputTest, ACutShortOrUnknownMessageIsDataLoss) {
  EXPECT_EQ(DecodePgOutput("").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(DecodePgOutput("Z").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(DecodePgOutput("B" + U32(1)).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(DecodePgOutput("I" + U32(1) + "N" + U16(1) + "t" + U32(10) + "ab").status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(DecodePgOutput("I" + U32(1) + "N" + U16(1) + "x").status().code(),
            StatusCode::kDataLoss);
}

TEST(SqlStateTest, PacksAndClassifies) {
  const Status s = Status(StatusCode::kNotFound, "x")
                       .WithDetail(ErrorDetail{ErrorDomain::kPostgres, PackSqlState("42P01"), 0});
  EXPECT_EQ(SqlStateOf(s), "42P01");
  EXPECT_EQ(SqlStateOf(Status::Internal("not postgres")), "");
  EXPECT_EQ(SqlStateStatusCode("28P01"), StatusCode::kUnauthenticated);
  EXPECT_EQ(SqlStateStatusCode("42501"), StatusCode::kPermissionDenied);
  EXPECT_EQ(SqlStateStatusCode("08006"), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace millrace::pg
