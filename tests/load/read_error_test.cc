// Reader errors as the user sees them: DuckDB's text cut to what says what is wrong, work paths
// named by the file's key, every value bounded.
#include "load/read_error.h"

#include <gtest/gtest.h>

namespace millrace::load {
namespace {

TEST(ReadErrorTest, DuckDbsAppendicesAndWorkPathsAreCut) {
  const Status duckdb(
      StatusCode::kInvalidArgument,
      "Invalid Input Error: CSV Error on Line: 2\nOriginal Line: 2,???\nInvalid unicode (byte "
      "sequence mismatch) detected. This file is not utf-8 encoded.\n\nPossible Solution: Set "
      "the correct encoding\nPossible Solution: Enable ignore errors (ignore_errors=true)\n\n  "
      "file = /w/batch-1/d1.csv\n  delimiter = , (Set By User)\n  sample_size = 20480\n");
  const Status described =
      DescribeReadError(duckdb.WithDetail({ErrorDomain::kDuckDb, 7}), "in/b.csv", {"/w/batch-1"});
  EXPECT_EQ(described.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(described.Is(ErrorDomain::kDuckDb, 7)) << "presentation only: the detail is kept";
  EXPECT_EQ(described.message(),
            "file in/b.csv: Invalid Input Error: CSV Error on Line: 2\nOriginal Line: 2,???\n"
            "Invalid unicode (byte sequence mismatch) detected. This file is not utf-8 encoded.");
}

TEST(ReadErrorTest, TheQueryContextIsCutAndPathsReadAsTheKey) {
  const Status duckdb = Status::InvalidArgument(
      "Invalid Input Error: No magic bytes found at end of file '/w/batch-2/d1.parquet'\n\nLINE "
      "1: INSERT INTO t SELECT id FROM (SELECT * FROM read_parquet(['/w/batch-2/d1.parquet'...\n"
      "                      ^");
  EXPECT_EQ(DescribeReadError(duckdb, "s3://b/x.parquet", {"/w/batch-2"}).message(),
            "file s3://b/x.parquet: Invalid Input Error: No magic bytes found at end of file "
            "'s3://b/x.parquet'");
}

TEST(ReadErrorTest, ALongValueIsCutSayingHowLongItWas) {
  const std::string line(3 << 20, 'x');
  const Status duckdb = Status::InvalidArgument("CSV Error on Line: 1\nOriginal Line: " + line);
  const std::string message = DescribeReadError(duckdb, "a.csv", {}).message();
  EXPECT_LE(message.size(), kMaxMessageBytes + 64);
  EXPECT_NE(message.find("Original Line: xxx"), std::string::npos);
  EXPECT_NE(message.find("... (" + std::to_string(line.size() + 15) + " bytes)"), std::string::npos)
      << message;
}

// A reader's error quotes bytes of the file: a column name that is not UTF-8 once broke the
// ledger's INSERT, and the job paused on every retry.
TEST(ReadErrorTest, BytesThatAreNotUtf8AreReplaced) {
  const Status duckdb = Status::InvalidArgument(
      "Binder Error: Referenced column \"name\" not found\nCandidate bindings: \"\xb4"
      "ame\"");
  EXPECT_EQ(DescribeReadError(duckdb, "a.parquet", {}).message(),
            "file a.parquet: Binder Error: Referenced column \"name\" not found\nCandidate "
            "bindings: \"\xEF\xBF\xBD"
            "ame\"");
  // A cut never splits a character.
  const Status long_value =
      Status::InvalidArgument(std::string(kMaxLineBytes - 1, 'x') + "\xC3\xA9");
  const std::string cut = DescribeReadError(long_value, "a.csv", {}).message();
  EXPECT_NE(cut.find(std::string(kMaxLineBytes - 1, 'x') + "... ("), std::string::npos) << cut;
}

TEST(ReadErrorTest, OkStaysOk) {
  EXPECT_TRUE(DescribeReadError(Status::Ok(), "a.csv", {}).ok());
}

}  // namespace
}  // namespace millrace::load
