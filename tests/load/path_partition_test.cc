#include "load/path_partition.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "load/bad_file.h"
#include "testing/temp_dir.h"

namespace millrace::load {
namespace {

using Names = std::vector<std::string>;

TEST(PathPartitionTest, KeysAreNamesSeparatedByCommas) {
  EXPECT_EQ(*ParsePathPartitionKeys(" city , Year"), (Names{"city", "Year"}));
  for (const auto& [bad, why] :
       std::vector<std::pair<std::string, std::string>>{{"", "a name is empty"},
                                                        {"city,,year", "a name is empty"},
                                                        {"city,CITY", "given twice"},
                                                        {"a=b", "holds '='"},
                                                        {"a/b", "holds '='"}}) {
    auto parsed = ParsePathPartitionKeys(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find(why), std::string::npos)
        << bad << ": " << parsed.status().ToString();
    EXPECT_NE(parsed.status().message().find("\"path_partition_keys\""), std::string::npos);
  }
}

TEST(PathPartitionTest, ValuesComeFromTheDirectoriesOfThePath) {
  EXPECT_EQ(*PathPartitionValues("ev/City=paris/year=2026/a.csv", {"city", "YEAR"}),
            (Names{"paris", "2026"}));
  // The deepest directory wins; a value may hold '='; the file's own name is not a directory.
  EXPECT_EQ(*PathPartitionValues("/in/k=1/x/k=a=b/k=3.csv", {"k"}), (Names{"a=b"}));
  for (const std::string& path :
       {"ev/k=3.csv", "ev/city=paris/a.csv", "ev/k=/a.csv", "ev/k=../a.csv"}) {
    auto values = PathPartitionValues(path, {"k"});
    ASSERT_FALSE(values.ok()) << path;
    EXPECT_EQ(ReasonOf(values.status()), BadFile::kPartitionNotInPath) << path;
  }
}

TEST(PathPartitionTest, TheFileIsLinkedUnderTheWantedDirectoriesOnly) {
  testing::TempDir dir;
  {
    std::ofstream out(dir.Join("d3.csv"));
    out << "1\n";
  }
  auto linked =
      LinkPartitioned(dir.Join("d3.csv"), {"city", "year"}, {"paris", "2026"}, dir.Join("p3"));
  ASSERT_TRUE(linked.ok()) << linked.status().ToString();
  EXPECT_EQ(*linked, dir.Join("p3/city=paris/year=2026/d3.csv"));
  std::ifstream in(*linked);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "1");
  // A second link at the same place is an error, not a silent overwrite.
  EXPECT_EQ(LinkPartitioned(dir.Join("d3.csv"), {"city", "year"}, {"paris", "2026"}, dir.Join("p3"))
                .status()
                .code(),
            StatusCode::kIoError);
}

}  // namespace
}  // namespace millrace::load
