// CheckCsvLastLine: a last line longer than the CSV reader takes is refused, with or without a
// final line end; anything shorter, and a long line that is not the last, pass. The same of the
// bytes in memory (CheckCsvLastLineIn), every time.
#include "load/csv_last_line.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing/temp_dir.h"

namespace millrace::load {
namespace {

class CsvLastLineTest : public ::testing::Test {
 protected:
  Status Check(const std::string& content, char line_end = '\n') {
    const std::string path = dir_.Join("f.csv");
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
    Status in_file = CheckCsvLastLine(path, line_end, 100);
    EXPECT_EQ(CheckCsvLastLineIn(content, line_end, 100), in_file);
    return in_file;
  }
  testing::TempDir dir_;
};

TEST_F(CsvLastLineTest, OnlyAnOverlongLastLineIsRefused) {
  const std::string limit(100, 'x');
  const std::string over(101, 'x');
  EXPECT_TRUE(Check("").ok());
  EXPECT_TRUE(Check(over).ok());  // the whole file is shorter than the window: DuckDB's to judge
  EXPECT_TRUE(Check("a,b\n" + limit).ok());
  EXPECT_TRUE(Check("a,b\n" + limit + "\n").ok());
  EXPECT_TRUE(Check(over + over + "\nshort\n").ok());  // long lines before the last: DuckDB errs
  const Status refused = Check("a,b\n" + over + over);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("the last line of the file is longer than 100 bytes"),
            std::string::npos)
      << refused.message();
  EXPECT_FALSE(Check("a,b\n" + over + over + "\n").ok());
  EXPECT_FALSE(Check("a,b\r" + over + over + "\r", '\r').ok());
  EXPECT_TRUE(Check("a,b\r" + limit + "\r", '\r').ok());
}

}  // namespace
}  // namespace millrace::load
