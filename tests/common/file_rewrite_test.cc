#include "common/file_rewrite.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "testing/temp_dir.h"

namespace millrace {
namespace {

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

ino_t Inode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

Status WriteWhole(const std::string& path, std::initializer_list<std::string_view> parts) {
  MR_ASSIGN_OR_RETURN(auto file, FileRewrite::Open(path));
  for (std::string_view part : parts)
    MR_RETURN_IF_ERROR(file->Write(part));
  return file->Finish();
}

TEST(FileRewriteTest, CreatesAFileThatIsMissing) {
  testing::TempDir dir;
  const std::string path = dir.Join("new.csv");
  ASSERT_TRUE(WriteWhole(path, {"a,b\n", "1,2\n"}).ok());
  EXPECT_EQ(Contents(path), "a,b\n1,2\n");
}

TEST(FileRewriteTest, ShorterContentLeavesNothingOfTheEarlierHolder) {
  testing::TempDir dir;
  const std::string path = dir.Join("kept.csv");
  ASSERT_TRUE(WriteWhole(path, {std::string(10000, 'x')}).ok());
  const ino_t inode = Inode(path);
  ASSERT_TRUE(WriteWhole(path, {"1,2\n"}).ok());
  EXPECT_EQ(Contents(path), "1,2\n");
  EXPECT_EQ(Inode(path), inode);  // the same file, rewritten in place
}

TEST(FileRewriteTest, LongerContentOverwritesAll) {
  testing::TempDir dir;
  const std::string path = dir.Join("kept.csv");
  ASSERT_TRUE(WriteWhole(path, {"old\n"}).ok());
  ASSERT_TRUE(WriteWhole(path, {"new and longer\n"}).ok());
  EXPECT_EQ(Contents(path), "new and longer\n");
}

TEST(FileRewriteTest, NothingWrittenLeavesAnEmptyFile) {
  testing::TempDir dir;
  const std::string path = dir.Join("kept.csv");
  ASSERT_TRUE(WriteWhole(path, {"old\n"}).ok());
  ASSERT_TRUE(WriteWhole(path, {}).ok());
  EXPECT_EQ(Contents(path), "");
}

// A partial file never passes for a whole: one not finished is removed, a kept file too.
TEST(FileRewriteTest, AFileNotFinishedIsRemoved) {
  testing::TempDir dir;
  const std::string path = dir.Join("kept.csv");
  ASSERT_TRUE(WriteWhole(path, {"earlier holder\n"}).ok());
  {
    auto file = FileRewrite::Open(path);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Write("half").ok());
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(FileRewriteTest, ErrorsNameThePath) {
  testing::TempDir dir;
  const std::string path = dir.Join("missing/dir/file.csv");
  auto file = FileRewrite::Open(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kIoError);
  EXPECT_NE(file.status().message().find(path), std::string::npos) << file.status().ToString();
}

TEST(FileRewriteTest, NoWriteAfterFinish) {
  testing::TempDir dir;
  auto file = FileRewrite::Open(dir.Join("f"));
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Write("x").ok());
  ASSERT_TRUE((*file)->Finish().ok());
  EXPECT_FALSE((*file)->Write("y").ok());
  EXPECT_FALSE((*file)->Finish().ok());
}

}  // namespace
}  // namespace millrace
