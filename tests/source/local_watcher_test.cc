// LocalWatcher against the real inotify of a temporary directory: files closed after writing and
// renamed into place are reported, new subdirectories are watched (hidden ones are not), a
// handle's end ends its watches, and an overflow asks every root to be listed.
#include "source/local_watcher.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <utility>

#include "common/thread_annotations.h"
#include "testing/temp_dir.h"
#include "testing/wait_for.h"

namespace millrace::source {
namespace {

class LocalWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started = LocalWatcher::Start();
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    watcher_ = std::move(started).value();
    watcher_->SetListener([this](const std::string& path, bool directory) {
      MutexLock lock(&mu_);
      seen_.insert({path, directory});
    });
    root_ = dir_.Join("in");
    std::filesystem::create_directories(root_);
  }

  // Waits until the listener got (path, directory).
  bool Saw(const std::string& path, bool directory) {
    return testing::WaitFor(
        [&] {
          MutexLock lock(&mu_);
          return seen_.count({path, directory}) > 0;
        },
        std::chrono::seconds(10));
  }
  bool SawAnythingUnder(const std::string& prefix) {
    MutexLock lock(&mu_);
    for (const auto& [path, directory] : seen_) {
      if (path.starts_with(prefix)) return true;
    }
    return false;
  }
  static void Write(const std::string& path) { std::ofstream(path) << "1,a\n"; }

  testing::TempDir dir_;
  std::string root_;
  std::unique_ptr<LocalWatcher> watcher_;
  Mutex mu_;
  std::set<std::pair<std::string, bool>> seen_ GUARDED_BY(mu_);
};

TEST_F(LocalWatcherTest, FilesThatLandAndNewDirectoriesAreReported) {
  std::filesystem::create_directories(root_ + "/old");
  auto handle = watcher_->Watch(root_, nullptr);
  EXPECT_EQ(watcher_->watched_directories(), 2u);
  Write(root_ + "/a.csv");
  EXPECT_TRUE(Saw(root_ + "/a.csv", false));
  // Renamed into place, as a careful producer writes.
  Write(root_ + "/.b.csv");
  std::filesystem::rename(root_ + "/.b.csv", root_ + "/b.csv");
  EXPECT_TRUE(Saw(root_ + "/b.csv", false));
  // A directory there before the watch, and one made after it, with a file in it.
  Write(root_ + "/old/c.csv");
  EXPECT_TRUE(Saw(root_ + "/old/c.csv", false));
  std::filesystem::create_directories(root_ + "/new");
  EXPECT_TRUE(Saw(root_ + "/new", true));
  Write(root_ + "/new/d.csv");
  EXPECT_TRUE(Saw(root_ + "/new/d.csv", false));
  // A hidden directory is not watched.
  std::filesystem::create_directories(root_ + "/.hidden");
  Write(root_ + "/.hidden/e.csv");
  Write(root_ + "/f.csv");
  EXPECT_TRUE(Saw(root_ + "/f.csv", false));
  EXPECT_FALSE(SawAnythingUnder(root_ + "/.hidden"));
  EXPECT_EQ(watcher_->watched_directories(), 3u);
  // A file reported whole is whole as of its last change then, not of a later one.
  const auto last_change = [](const std::string& path) {
    struct stat st {};
    EXPECT_EQ(stat(path.c_str(), &st), 0);
    return std::max(st.st_mtim.tv_sec * 1'000'000'000 + st.st_mtim.tv_nsec,
                    st.st_ctim.tv_sec * 1'000'000'000 + st.st_ctim.tv_nsec);
  };
  EXPECT_TRUE(watcher_->Landed(root_ + "/a.csv", last_change(root_ + "/a.csv")));
  EXPECT_TRUE(watcher_->Landed(root_ + "/b.csv", last_change(root_ + "/b.csv")));
  EXPECT_FALSE(watcher_->Landed(root_ + "/a.csv", last_change(root_ + "/a.csv") + 60'000'000'000));
  EXPECT_FALSE(watcher_->Landed(root_ + "/.hidden/e.csv", 0));
}

// A directory its handle's `descend` refuses is not watched (a source's glob cannot match there).
TEST_F(LocalWatcherTest, OnlyDirectoriesWhereTheGlobCouldMatchAreWatched) {
  std::filesystem::create_directories(root_ + "/logs");
  std::filesystem::create_directories(root_ + "/data");
  auto handle = watcher_->Watch(root_, [this](const std::string& directory) {
    return directory.starts_with(root_ + "/data");
  });
  EXPECT_EQ(watcher_->watched_directories(), 2u);
  std::filesystem::create_directories(root_ + "/data/day1");
  std::filesystem::create_directories(root_ + "/logs/day1");
  EXPECT_TRUE(Saw(root_ + "/data/day1", true));
  Write(root_ + "/data/day1/x.csv");
  EXPECT_TRUE(Saw(root_ + "/data/day1/x.csv", false));
  EXPECT_FALSE(SawAnythingUnder(root_ + "/logs"));
  EXPECT_EQ(watcher_->watched_directories(), 3u);
}

TEST_F(LocalWatcherTest, AHandlesEndEndsItsWatchesAndAnOverflowListsEveryRoot) {
  std::filesystem::create_directories(root_ + "/sub");
  auto outer = watcher_->Watch(root_, nullptr);
  auto inner = watcher_->Watch(root_ + "/sub", nullptr);
  watcher_->SimulateOverflow();
  EXPECT_TRUE(Saw(root_, true));
  EXPECT_TRUE(Saw(root_ + "/sub", true));
  // The outer root still covers sub.
  inner.reset();
  EXPECT_EQ(watcher_->watched_directories(), 2u);
  outer.reset();
  EXPECT_EQ(watcher_->watched_directories(), 0u);
  Write(root_ + "/late.csv");
  // Another root's event shows the thread read past the late file's.
  const std::string other = dir_.Join("other");
  std::filesystem::create_directories(other);
  auto handle = watcher_->Watch(other, nullptr);
  Write(other + "/x.csv");
  EXPECT_TRUE(Saw(other + "/x.csv", false));
  EXPECT_FALSE(SawAnythingUnder(root_ + "/late"));
  // A root that does not exist is not watched.
  auto missing = watcher_->Watch(dir_.Join("missing"), nullptr);
  EXPECT_EQ(watcher_->watched_directories(), 1u);
}

}  // namespace
}  // namespace millrace::source
