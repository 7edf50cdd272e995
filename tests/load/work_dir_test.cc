// WorkDirs: a directory given back keeps its regular files' inodes and nothing else, comes back
// under a new name, and the pool stays bounded.
#include "load/work_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "testing/temp_dir.h"

namespace millrace::load {
namespace {

namespace fs = std::filesystem;

ino_t Inode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

std::unique_ptr<WorkDir> TakeOrDie(WorkDirs& dirs) {
  auto work = dirs.Take();
  EXPECT_TRUE(work.ok()) << work.status().ToString();
  return work.ok() ? std::move(work).value() : nullptr;
}

class WorkDirTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  std::shared_ptr<WorkDirs> dirs_ = WorkDirs::Under(dir_.Join("work"));
};

TEST_F(WorkDirTest, AGivenBackDirectoryKeepsEmptiedFilesOnlyAndComesBackUnderANewName) {
  auto first = TakeOrDie(*dirs_);
  const std::string path = first->path();
  ASSERT_TRUE(fs::is_directory(path));
  std::ofstream(path + "/d0.csv") << "1,a\n2,b\n";
  std::ofstream(path + "/d1.csv") << "";
  fs::create_symlink("/proc/self/fd/0", path + "/d2.csv");
  fs::create_directory(path + "/p3");
  std::ofstream(path + "/p3/x.csv") << "3,c\n";
  const ino_t d0 = Inode(path + "/d0.csv");
  first.reset();
  EXPECT_EQ(dirs_->idle(), 1u);

  auto second = TakeOrDie(*dirs_);
  EXPECT_NE(second->path(), path);  // nothing keyed by path sees the old batch's files
  EXPECT_FALSE(fs::exists(path));
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(second->path())) {
    names.push_back(entry.path().filename().string());
    EXPECT_TRUE(fs::is_regular_file(entry.symlink_status())) << entry.path();
    EXPECT_EQ(entry.file_size(), 0u) << entry.path();  // no byte of the old batch stays
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"d0.csv", "d1.csv"}));
  EXPECT_EQ(Inode(second->path() + "/d0.csv"), d0);  // the inode is the one reused
  EXPECT_EQ(dirs_->idle(), 0u);
}

TEST_F(WorkDirTest, ThePoolKeepsAFewDirectoriesAndAFewThousandFilesAtMost) {
  std::vector<std::unique_ptr<WorkDir>> held;
  for (size_t i = 0; i < WorkDirs::kIdleDirs + 2; ++i)
    held.push_back(TakeOrDie(*dirs_));
  const size_t files = WorkDirs::kKeptFiles + 5;
  for (size_t i = 0; i < files; ++i)
    std::ofstream(held[0]->path() + "/d" + std::to_string(i)) << i;
  held.clear();
  EXPECT_EQ(dirs_->idle(), WorkDirs::kIdleDirs);
  size_t dirs = 0;
  size_t kept = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir_.Join("work"))) {
    if (entry.is_directory()) ++dirs;
    if (entry.is_regular_file()) ++kept;
  }
  EXPECT_EQ(dirs, WorkDirs::kIdleDirs);
  EXPECT_EQ(kept, WorkDirs::kKeptFiles);
}

TEST_F(WorkDirTest, AWaitingDirectoryRemovedFromOutsideIsReplaced) {
  TakeOrDie(*dirs_).reset();
  ASSERT_EQ(dirs_->idle(), 1u);
  fs::remove_all(dir_.Join("work"));
  auto work = TakeOrDie(*dirs_);
  ASSERT_NE(work, nullptr);
  EXPECT_TRUE(fs::is_directory(work->path()));
}

TEST_F(WorkDirTest, AWorkDirMayOutliveEveryOtherOwnerOfItsPool) {
  auto work = TakeOrDie(*dirs_);
  const std::string path = work->path();
  std::weak_ptr<WorkDirs> pool = dirs_;
  dirs_.reset();
  EXPECT_FALSE(pool.expired());
  work.reset();
  EXPECT_TRUE(pool.expired());
  EXPECT_FALSE(fs::exists(path));  // the pool went with its last holder: nothing kept
}

}  // namespace
}  // namespace millrace::load
