// JoinCsvFiles and CsvJoinable: which dialects may read small files as one, and the joined
// file's bytes (each file whole, in order, without a leading byte order mark, ended by the line
// delimiter).
#include "load/csv_join.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "testing/server_process.h"
#include "testing/temp_dir.h"

namespace millrace::load {
namespace {

class CsvJoinTest : public ::testing::Test {
 protected:
  std::string File(const std::string& name, const std::string& content) {
    const std::string path = dir_.Join(name);
    EXPECT_TRUE(testing::WriteFile(path, content, /*append=*/false).ok()) << path;
    return path;
  }
  static std::string Read(const std::string& path) { return testing::ReadFile(path); }
  testing::TempDir dir_;
};

TEST(CsvJoinableTest, OnlyDialectsWhereNoRecordSpansALineEnd) {
  FileFunctionOptions plain;
  plain.format = Format::kCsv;
  plain.csv.column_separator = ",";
  EXPECT_TRUE(CsvJoinable(plain));
  FileFunctionOptions crlf = plain;
  crlf.csv.line_delimiter = "\r\n";
  EXPECT_TRUE(CsvJoinable(crlf));

  std::vector<FileFunctionOptions> refused(7, plain);
  refused[0].csv.enclose = "\"";
  refused[1].csv.trim_double_quotes = true;
  refused[2].csv.escape = "\\";
  refused[3].csv.skip_lines = 1;
  refused[4].format = Format::kCsvWithNames;
  refused[5].format = Format::kJson;
  refused[6].path_partition_keys = {"day"};
  for (size_t i = 0; i < refused.size(); ++i)
    EXPECT_FALSE(CsvJoinable(refused[i])) << i;
}

TEST_F(CsvJoinTest, EachFileWholeInOrderEndedByTheLineDelimiter) {
  const std::vector<std::string> files = {
      File("a.csv", "1,a\n2,b\n"),
      File("b.csv", "3,c"),  // no final line end: one is added
      File("c.csv",
           "\xEF\xBB\xBF"
           "4,d\n"),                  // a byte order mark: dropped
      File("d.csv", ""),              // empty: nothing, not even a line end
      File("e.csv", "5,e\r\n\n6,f"),  // a blank line stays (DuckDB skips it)
  };
  const std::string out = dir_.Join("j.csv");
  ASSERT_TRUE(JoinCsvFiles(files, "\n", out).ok());
  EXPECT_EQ(Read(out), "1,a\n2,b\n3,c\n4,d\n5,e\r\n\n6,f\n");

  const std::vector<std::string> crlf = {File("f.csv", "1,a\r\n"), File("g.csv", "2,b\n"),
                                         File("h.csv", "3,c\r\n")};
  ASSERT_TRUE(JoinCsvFiles(crlf, "\r\n", out).ok());
  EXPECT_EQ(Read(out), "1,a\r\n2,b\n\r\n3,c\r\n");
}

// Files whose bytes are in memory are joined from there (their files are not read: here they
// hold other bytes, or none), the others from their files, each as JoinCsvFiles joins a file;
// more than one write block of them is joined whole.
TEST_F(CsvJoinTest, BytesInMemoryAreJoinedInsteadOfTheirFiles) {
  const std::string big(100 << 10, 'z');
  const std::string a = "\xEF\xBB\xBF"
                        "1,a\n",
                    b = "3,c", c = big + "\n" + big;
  const std::vector<std::string> files = {File("a.csv", "stale\n"), File("b.csv", "2,b\n"),
                                          dir_.Join("never_written.csv"), File("c.csv", "x\n"),
                                          File("d.csv", big)};
  const std::string out = dir_.Join("j.csv");
  ASSERT_TRUE(JoinCsvFiles(files, "\n", out, {&a, nullptr, &b, &c, nullptr}).ok());
  EXPECT_EQ(Read(out), "1,a\n2,b\n3,c\n" + c + "\n" + big + "\n");

  const Status mismatch = JoinCsvFiles(files, "\n", out, {&a});
  EXPECT_EQ(mismatch.code(), StatusCode::kInvalidArgument) << mismatch.ToString();
}

// A work directory keeps its files' inodes between batches: the joined file may exist, longer.
TEST_F(CsvJoinTest, RewritesALongerFileFromItsStart) {
  const std::string out = File("j.csv", std::string(1000, 'x'));
  ASSERT_TRUE(JoinCsvFiles({File("a.csv", "1,a\n")}, "\n", out).ok());
  EXPECT_EQ(Read(out), "1,a\n");
}

TEST_F(CsvJoinTest, AFileThatCannotBeReadIsNamedAndNothingIsLeft) {
  const std::string out = dir_.Join("j.csv");
  const std::string missing = dir_.Join("gone.csv");
  const Status s = JoinCsvFiles({File("a.csv", "1,a\n"), missing}, "\n", out);
  ASSERT_EQ(s.code(), StatusCode::kIoError) << s.ToString();
  EXPECT_NE(s.message().find(missing), std::string::npos) << s.message();
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace millrace::load
