#include "source/local_source.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "source/source_test_util.h"
#include "testing/temp_dir.h"

namespace millrace::source {
namespace {

using millrace::testing::TempDir;
using namespace std::chrono_literals;

void WriteFile(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  ASSERT_TRUE(out.good()) << path;
}

void SetMtime(const std::string& path, Clock::WallTime t) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch());
  struct timespec times[2];
  times[0].tv_sec = times[1].tv_sec = ns.count() / 1'000'000'000;
  times[0].tv_nsec = times[1].tv_nsec = ns.count() % 1'000'000'000;
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

// The real file system with hooks that run before a call reaches it, so a test can change a
// file at an exact moment or fail a call the way a bad disk would.
class HookedFileSystem final : public LocalFileSystem {
 public:
  using StatHook = std::function<Status(const std::string& path)>;
  // Runs before each read of an open file; `reads` counts the reads before this one.
  using ReadHook = std::function<Status(const std::string& path, int reads)>;

  Result<std::vector<DirectoryEntry>> ListDirectory(const std::string& path) override {
    ++list_directory_calls;
    if (before_list) MR_RETURN_IF_ERROR(before_list(path));
    return LocalFileSystem::Posix()->ListDirectory(path);
  }
  Result<FileStat> Stat(const std::string& path) override {
    if (before_stat) MR_RETURN_IF_ERROR(before_stat(path));
    return LocalFileSystem::Posix()->Stat(path);
  }
  Result<std::unique_ptr<ReadableFile>> OpenForRead(const std::string& path) override {
    MR_ASSIGN_OR_RETURN(auto file, LocalFileSystem::Posix()->OpenForRead(path));
    return std::unique_ptr<ReadableFile>(
        std::make_unique<HookedFile>(std::move(file), path, &before_read));
  }

  Result<std::string> Resolve(const std::string& path) override {
    return LocalFileSystem::Posix()->Resolve(path);
  }

  StatHook before_stat;
  StatHook before_list;  // before a directory is listed
  ReadHook before_read;
  int list_directory_calls = 0;

 private:
  class HookedFile final : public ReadableFile {
   public:
    HookedFile(std::unique_ptr<ReadableFile> file, std::string path, const ReadHook* hook)
        : file_(std::move(file)), path_(std::move(path)), hook_(hook) {}
    Result<FileStat> Stat() override { return file_->Stat(); }
    Result<size_t> Read(char* buffer, size_t n) override {
      if (*hook_) MR_RETURN_IF_ERROR((*hook_)(path_, reads_));
      ++reads_;
      return file_->Read(buffer, n);
    }

   private:
    std::unique_ptr<ReadableFile> file_;
    std::string path_;
    const ReadHook* hook_;
    int reads_ = 0;
  };
};

class LocalSourceTest : public ::testing::Test {
 protected:
  // Files written by the test were changed "now" in real time; the clock starts a minute
  // later so they are settled unless a test says otherwise.
  LocalSourceTest() : clock_(Clock::Real()->WallNow() + 1min) {}

  std::unique_ptr<LocalSource> MakeLocal(const std::string& pattern,
                                         LocalFileSystem* file_system = nullptr) {
    auto source = LocalSource::Create(
        pattern, {.clock = &clock_, .settle_time = 1s, .file_system = file_system});
    EXPECT_TRUE(source.ok()) << source.status().ToString();
    return source.ok() ? std::move(source).value() : nullptr;
  }

  Listing ListOrDie(FileSource& source, ListOptions options = {}) {
    auto listing = source.List(options);
    EXPECT_TRUE(listing.ok()) << listing.status().ToString();
    return listing.ok() ? std::move(listing).value() : Listing{};
  }

  TempDir dir_;
  ManualClock clock_;
};

TEST_F(LocalSourceTest, ListsMatchingFilesInByteOrderAfterStartAfter) {
  for (const char* name : {"in/b.csv", "in/a.csv", "in/B.csv", "in/c.json", "in/sub/d.csv",
                           "in/a.csv.gz", "other/e.csv"}) {
    WriteFile(dir_.Join(name), name);
  }
  auto source = MakeLocal(dir_.Join("in/*.csv"));
  Listing all = ListOrDie(*source);
  EXPECT_EQ(Keys(all), (std::vector<std::string>{dir_.Join("in/B.csv"), dir_.Join("in/a.csv"),
                                                 dir_.Join("in/b.csv")}));
  EXPECT_FALSE(all.more);
  EXPECT_EQ(all.last_matching_key, dir_.Join("in/b.csv"));
  EXPECT_EQ(all.files[1].size, std::string("in/a.csv").size());

  Listing after = ListOrDie(*source, {.start_after = dir_.Join("in/a.csv")});
  EXPECT_EQ(Keys(after), std::vector<std::string>{dir_.Join("in/b.csv")});
  Listing none = ListOrDie(*source, {.start_after = dir_.Join("in/b.csv")});
  EXPECT_TRUE(none.files.empty());
  EXPECT_EQ(none.last_matching_key, "");
}

TEST_F(LocalSourceTest, BracesAndDoubleStarWalkOnlyWhereMatchesCanBe) {
  for (const char* name : {"in/a/1.json", "in/b/2.json", "in/c/3.json", "in/a/deep/4.json",
                           "in/x/y/z/5.csv", "in/6.csv"}) {
    WriteFile(dir_.Join(name), "{}");
  }
  HookedFileSystem fs;
  auto braces = MakeLocal(dir_.Join("in/{a,b}/*.json"), &fs);
  EXPECT_EQ(Keys(ListOrDie(*braces)),
            (std::vector<std::string>{dir_.Join("in/a/1.json"), dir_.Join("in/b/2.json")}));
  // in/, in/a/, in/b/: not in/c/ nor in/a/deep/, where nothing can match.
  EXPECT_EQ(fs.list_directory_calls, 3);

  auto deep = MakeLocal(dir_.Join("in/**.csv"));
  EXPECT_EQ(Keys(ListOrDie(*deep)),
            (std::vector<std::string>{dir_.Join("in/6.csv"), dir_.Join("in/x/y/z/5.csv")}));
}

// A subdirectory that cannot be listed (root bypasses permissions, so a hook fails it the way
// a directory without +r would) is passed over and reported; the files around it are listed.
TEST_F(LocalSourceTest, ASubdirectoryThatCannotBeListedIsPassedOverAndReported) {
  for (const char* name : {"in/a/1.csv", "in/b/2.csv", "in/c/3.csv"})
    WriteFile(dir_.Join(name), name);
  HookedFileSystem fs;
  fs.before_list = [&](const std::string& path) {
    return path == dir_.Join("in/b")
               ? Status::PermissionDenied("cannot list directory " + path + ": Permission denied")
               : Status::Ok();
  };
  auto source = MakeLocal(dir_.Join("in/*/*.csv"), &fs);
  Listing listing = ListOrDie(*source);
  EXPECT_EQ(Keys(listing),
            (std::vector<std::string>{dir_.Join("in/a/1.csv"), dir_.Join("in/c/3.csv")}));
  EXPECT_EQ(listing.unlisted_directories,
            std::vector<std::string>{"cannot list directory " + dir_.Join("in/b") +
                                     ": Permission denied"});
  // The root itself still fails the listing.
  fs.before_list = [&](const std::string& path) {
    return Status::PermissionDenied("cannot list directory " + path);
  };
  EXPECT_EQ(source->List({}).status().code(), StatusCode::kPermissionDenied);
}

TEST_F(LocalSourceTest, DirectoriesWhollyBelowStartAfterAreNotWalked) {
  for (const char* name : {"in/2026-01/a.csv", "in/2026-02/a.csv", "in/2026-03/a.csv"}) {
    WriteFile(dir_.Join(name), "x");
  }
  HookedFileSystem fs;
  auto source = MakeLocal(dir_.Join("in/*/*.csv"), &fs);
  Listing listing = ListOrDie(*source, {.start_after = dir_.Join("in/2026-02/a.csv")});
  EXPECT_EQ(Keys(listing), std::vector<std::string>{dir_.Join("in/2026-03/a.csv")});
  EXPECT_EQ(fs.list_directory_calls, 3);  // in/, 2026-02/, 2026-03/
}

TEST_F(LocalSourceTest, MaxFilesAndMaxBytesIncludeTheFileThatCrossesTheLimit) {
  for (int i = 0; i < 5; ++i) {
    WriteFile(dir_.Join("in/f" + std::to_string(i) + ".csv"), std::string(100, 'x'));
  }
  auto source = MakeLocal(dir_.Join("in/*.csv"));
  Listing by_count = ListOrDie(*source, {.max_files = 2});
  EXPECT_EQ(Keys(by_count),
            (std::vector<std::string>{dir_.Join("in/f0.csv"), dir_.Join("in/f1.csv")}));
  EXPECT_TRUE(by_count.more);
  EXPECT_EQ(by_count.last_matching_key, dir_.Join("in/f4.csv"));

  // 250 bytes: f0, f1 (200) are below, f2 crosses to 300 and is included.
  Listing by_bytes = ListOrDie(*source, {.max_bytes = 250});
  EXPECT_EQ(by_bytes.files.size(), 3u);
  EXPECT_TRUE(by_bytes.more);
  // Exactly reaching the limit stops too.
  Listing exact = ListOrDie(*source, {.max_bytes = 200});
  EXPECT_EQ(exact.files.size(), 2u);
  // A limit the whole set fits in leaves nothing more.
  Listing all = ListOrDie(*source, {.start_after = dir_.Join("in/f2.csv"), .max_files = 2});
  EXPECT_EQ(all.files.size(), 2u);
  EXPECT_FALSE(all.more);
}

TEST_F(LocalSourceTest, HiddenAndTemporaryFilesAreNeverListed) {
  for (const char* name : {"in/.a.csv", "in/b.csv.tmp", "in/c.csv.part", "in/d.csv._COPYING_",
                           "in/.staging/e.csv", "in/ok.csv", "in/sub/ok2.csv"}) {
    WriteFile(dir_.Join(name), "x");
  }
  auto source = MakeLocal(dir_.Join("in/**"));
  EXPECT_EQ(Keys(ListOrDie(*source)),
            (std::vector<std::string>{dir_.Join("in/ok.csv"), dir_.Join("in/sub/ok2.csv")}));
}

TEST_F(LocalSourceTest, SymlinkedFilesAreFollowedSymlinkedDirectoriesAreNot) {
  WriteFile(dir_.Join("data/real.csv"), "12345");
  WriteFile(dir_.Join("in/sub/x.csv"), "x");
  std::filesystem::create_symlink(dir_.Join("data/real.csv"), dir_.Join("in/link.csv"));
  std::filesystem::create_symlink(dir_.Join("in"), dir_.Join("in/sub/loop"));  // a cycle
  std::filesystem::create_symlink(dir_.Join("nowhere.csv"), dir_.Join("in/dangling.csv"));
  auto source = MakeLocal(dir_.Join("in/**.csv"));
  const Listing listing = ListOrDie(*source);
  EXPECT_EQ(Keys(listing),
            (std::vector<std::string>{dir_.Join("in/link.csv"), dir_.Join("in/sub/x.csv")}));
  EXPECT_EQ(listing.files[0].size, 5u);  // the target's size
}

TEST_F(LocalSourceTest, MissingDirectoryListsNothing) {
  auto source = MakeLocal(dir_.Join("not-yet/*.csv"));
  Listing listing = ListOrDie(*source);
  EXPECT_TRUE(listing.files.empty());
  EXPECT_FALSE(listing.more);
}

TEST_F(LocalSourceTest, RelativePatternIsRejected) {
  auto source = LocalSource::Create("in/*.csv", {});
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(source.status().message().find("in/*.csv"), std::string::npos);
}

class LocalSourceSettleTest : public ::testing::Test {
 protected:
  // The clock starts at the real time before any file is written, so every file's change
  // time is at or after the clock's "now" and only Advance() lets them settle.
  LocalSourceSettleTest() : clock_(Clock::Real()->WallNow()) {}

  std::unique_ptr<LocalSource> MakeLocal(const std::string& pattern,
                                         LocalFileSystem* file_system = nullptr) {
    auto source = LocalSource::Create(
        pattern, {.clock = &clock_, .settle_time = 1s, .file_system = file_system});
    EXPECT_TRUE(source.ok()) << source.status().ToString();
    return std::move(source).value();
  }

  TempDir dir_;
  ManualClock clock_;
};

TEST_F(LocalSourceSettleTest, FileIsTakenOnlyAfterTheSettleTime) {
  WriteFile(dir_.Join("in/a.csv"), "a");
  auto source = MakeLocal(dir_.Join("in/*.csv"));
  auto fresh = source->List({});
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE(fresh->files.empty());
  EXPECT_EQ(fresh->unsettled_files, 1u);
  EXPECT_FALSE(fresh->more);  // nothing can be taken right now
  EXPECT_EQ(fresh->last_matching_key, dir_.Join("in/a.csv"));

  clock_.Advance(3s);  // well past 1 s even if writing the file took a while
  auto settled = source->List({});
  ASSERT_TRUE(settled.ok());
  EXPECT_EQ(Keys(*settled), std::vector<std::string>{dir_.Join("in/a.csv")});
  EXPECT_EQ(settled->unsettled_files, 0u);
}

TEST_F(LocalSourceSettleTest, PreservedOldMtimeDoesNotMakeAFreshCopySettled) {
  // `cp -p` sets an old mtime on a file it has just written: ctime still says "just now".
  WriteFile(dir_.Join("in/a.csv"), "a");
  SetMtime(dir_.Join("in/a.csv"), clock_.WallNow() - 24h);
  auto source = MakeLocal(dir_.Join("in/*.csv"));
  auto listing = source->List({});
  ASSERT_TRUE(listing.ok());
  EXPECT_TRUE(listing->files.empty());
  EXPECT_EQ(listing->unsettled_files, 1u);
}

TEST_F(LocalSourceSettleTest, ListingStopsBeforeTheFirstUnsettledFile) {
  WriteFile(dir_.Join("in/a.csv"), "a");
  WriteFile(dir_.Join("in/c.csv"), "c");
  clock_.Advance(3s);
  // b is written now in real time, which is behind the clock; an mtime at the clock's
  // present makes it as fresh as a file being written.
  WriteFile(dir_.Join("in/b.csv"), "b");
  SetMtime(dir_.Join("in/b.csv"), clock_.WallNow());
  auto source = MakeLocal(dir_.Join("in/*.csv"));
  auto listing = source->List({});
  ASSERT_TRUE(listing.ok());
  // c is settled but comes after b: handing it out would move an offset past b.
  EXPECT_EQ(Keys(*listing), std::vector<std::string>{dir_.Join("in/a.csv")});
  EXPECT_EQ(listing->unsettled_files, 2u);
  EXPECT_FALSE(listing->more);
  EXPECT_EQ(listing->last_matching_key, dir_.Join("in/c.csv"));

  clock_.Advance(3s);
  auto later = source->List({.start_after = dir_.Join("in/a.csv")});
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(Keys(*later), (std::vector<std::string>{dir_.Join("in/b.csv"), dir_.Join("in/c.csv")}));
}

TEST_F(LocalSourceSettleTest, FileChangingBetweenTheTwoLooksIsHeldBack) {
  WriteFile(dir_.Join("in/a.csv"), "a");
  clock_.Advance(3s);
  HookedFileSystem fs;
  const std::string path = dir_.Join("in/a.csv");
  int stats_of_a = 0;
  // A writer appends between the walk's stat and the second look.
  fs.before_stat = [&](const std::string& p) {
    if (p == path && ++stats_of_a == 2) {
      std::ofstream(p, std::ios::app) << "more";
    }
    return Status::Ok();
  };
  auto source = MakeLocal(dir_.Join("in/*.csv"), &fs);
  auto listing = source->List({});
  ASSERT_TRUE(listing.ok());
  EXPECT_TRUE(listing->files.empty());
  EXPECT_EQ(listing->unsettled_files, 1u);
  EXPECT_EQ(stats_of_a, 2);
}

class LocalSourceDownloadTest : public LocalSourceTest {
 protected:
  FileInfo ListOne(FileSource& source) {
    Listing listing = ListOrDie(source);
    EXPECT_EQ(listing.files.size(), 1u);
    return listing.files.empty() ? FileInfo{} : listing.files[0];
  }
};

TEST_F(LocalSourceDownloadTest, DownloadCopiesTheListedBytes) {
  std::string content;
  for (int i = 0; i < 300'000; ++i)
    content += static_cast<char>('a' + i % 26);
  content += std::string("\0\xff", 2);
  WriteFile(dir_.Join("in/big.csv"), content);
  auto source = MakeLocal(dir_.Join("in/*.csv"));
  const FileInfo file = ListOne(*source);
  EXPECT_EQ(file.size, content.size());
  const std::string out = dir_.Join("out.bin");
  ASSERT_TRUE(source->Download(file, out).ok());
  EXPECT_EQ(ReadFileBytes(out), content);

  auto stat = source->Stat(file.key);
  ASSERT_TRUE(stat.ok());
  EXPECT_EQ(stat->etag, file.etag);
  EXPECT_EQ(stat->last_modified, file.last_modified);
}

TEST_F(LocalSourceDownloadTest, FileDeletedAfterListingIsNotFoundNamingIt) {
  WriteFile(dir_.Join("in/a.csv"), "a");
  auto source = MakeLocal(dir_.Join("in/*.csv"));
  const FileInfo file = ListOne(*source);
  std::filesystem::remove(file.key);
  const Status status = source->Download(file, dir_.Join("out"));
  EXPECT_EQ(status.code(), StatusCode::kNotFound) << status.ToString();
  EXPECT_NE(status.message().find(file.key), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("out")));
}

TEST_F(LocalSourceDownloadTest, ChangedFileIsAbortedNamingIt) {
  WriteFile(dir_.Join("in/a.csv"), "version one");
  auto source = MakeLocal(dir_.Join("in/*.csv"));
  const FileInfo file = ListOne(*source);
  const auto old_mtime = file.last_modified;

  // Same size, new content: only the mtime tells.
  WriteFile(file.key, "version two");
  SetMtime(file.key, old_mtime + 1s);
  Status status = source->Download(file, dir_.Join("out"));
  EXPECT_EQ(status.code(), StatusCode::kAborted) << status.ToString();
  EXPECT_NE(status.message().find(file.key), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("out")));

  // Replaced by rename (new inode), mtime and size even restored.
  WriteFile(dir_.Join("in/.new"), "version one");
  SetMtime(dir_.Join("in/.new"), old_mtime);
  std::filesystem::rename(dir_.Join("in/.new"), file.key);
  status = source->Download(file, dir_.Join("out"));
  EXPECT_EQ(status.code(), StatusCode::kAborted) << status.ToString();
}

TEST_F(LocalSourceDownloadTest, FileRewrittenDuringCopyIsAborted) {
  const std::string content(3 << 20, 'x');  // several reads of the copy buffer
  WriteFile(dir_.Join("in/a.csv"), content);
  HookedFileSystem fs;
  auto source = MakeLocal(dir_.Join("in/*.csv"), &fs);
  const FileInfo file = ListOne(*source);
  // After the first megabyte is copied, a writer overwrites bytes in place: same size, same
  // inode. The mtime is set explicitly because the kernel's clock tick may not have moved.
  fs.before_read = [&](const std::string& path, int reads) {
    if (reads == 1) {
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(2 << 20);
      f << "zzzz";
      f.close();
      SetMtime(path, file.last_modified + 1s);
    }
    return Status::Ok();
  };
  const Status status = source->Download(file, dir_.Join("out"));
  EXPECT_EQ(status.code(), StatusCode::kAborted) << status.ToString();
  EXPECT_NE(status.message().find("while copying"), std::string::npos) << status.ToString();
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("out")));
}

TEST_F(LocalSourceDownloadTest, FileTruncatedDuringCopyIsAborted) {
  WriteFile(dir_.Join("in/a.csv"), std::string(3 << 20, 'x'));
  HookedFileSystem fs;
  auto source = MakeLocal(dir_.Join("in/*.csv"), &fs);
  const FileInfo file = ListOne(*source);
  fs.before_read = [&](const std::string& path, int reads) {
    if (reads == 1) std::filesystem::resize_file(path, 1 << 20);
    return Status::Ok();
  };
  const Status status = source->Download(file, dir_.Join("out"));
  EXPECT_EQ(status.code(), StatusCode::kAborted) << status.ToString();
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("out")));
}

TEST_F(LocalSourceDownloadTest, ReadErrorIsIoErrorNamingTheFile) {
  WriteFile(dir_.Join("in/a.csv"), std::string(3 << 20, 'y'));
  HookedFileSystem fs;
  auto source = MakeLocal(dir_.Join("in/*.csv"), &fs);
  const FileInfo file = ListOne(*source);
  fs.before_read = [](const std::string& path, int reads) {
    return reads == 2 ? ErrnoStatus(EIO, "cannot read", path) : Status::Ok();
  };
  const Status status = source->Download(file, dir_.Join("out"));
  EXPECT_EQ(status.code(), StatusCode::kIoError) << status.ToString();
  EXPECT_NE(status.message().find(file.key), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("out")));
}

TEST_F(LocalSourceDownloadTest, UnreadableFileIsPermissionDeniedNamingIt) {
  WriteFile(dir_.Join("in/a.csv"), "secret rows");
  auto source = MakeLocal(dir_.Join("in/*.csv"));
  const FileInfo file = ListOne(*source);
  ASSERT_EQ(::chmod(file.key.c_str(), 0), 0);
  const std::string out_dir = dir_.Join("out");
  std::filesystem::create_directories(out_dir);
  const std::string out = out_dir + "/a.csv";
  if (::geteuid() != 0) {
    const Status status = source->Download(file, out);
    EXPECT_EQ(status.code(), StatusCode::kPermissionDenied) << status.ToString();
    EXPECT_NE(status.message().find(file.key), std::string::npos);
    return;
  }
  // Root reads any file: download as an unprivileged user in a child process instead.
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
  ASSERT_EQ(::chmod(out_dir.c_str(), 0777), 0);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(pipe_fds[0]);
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    const std::string result = source->Download(file, out).ToString();
    const bool wrote =
        ::write(pipe_fds[1], result.data(), result.size()) == static_cast<ssize_t>(result.size());
    ::_exit(wrote ? 0 : 3);
  }
  ::close(pipe_fds[1]);
  std::string result;
  char buf[512];
  ssize_t n;
  while ((n = ::read(pipe_fds[0], buf, sizeof(buf))) > 0)
    result.append(buf, n);
  ::close(pipe_fds[0]);
  int wstatus = 0;
  ASSERT_EQ(::waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << wstatus;
  EXPECT_TRUE(result.starts_with("PERMISSION_DENIED")) << result;
  EXPECT_NE(result.find(file.key), std::string::npos) << result;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST_F(LocalSourceTest, StatChecksThePatternAndExistence) {
  WriteFile(dir_.Join("in/a.csv"), "a");
  auto source = MakeLocal(dir_.Join("in/*.csv"));
  EXPECT_EQ(source->Stat(dir_.Join("in/a.json")).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(source->Stat(dir_.Join("in/gone.csv")).status().code(), StatusCode::kNotFound);
  auto stat = source->Stat(dir_.Join("in/a.csv"));
  ASSERT_TRUE(stat.ok());
  EXPECT_EQ(stat->size, 1u);
  EXPECT_EQ(source->Describe(), dir_.Join("in/*.csv"));
}

// local() and local-file jobs read only under the server's --local-root directories.
class LocalRootsTest : public LocalSourceTest {
 protected:
  void SetUp() override {
    WriteFile(dir_.Join("root/in/a.csv"), "a");
    WriteFile(dir_.Join("secret/s.csv"), "secret");
    std::filesystem::create_symlink(dir_.Join("secret/s.csv"), dir_.Join("root/in/link.csv"));
    std::filesystem::create_symlink(dir_.Join("secret"), dir_.Join("root/up"));
    auto roots = ResolveRoots({dir_.Join("root")});
    ASSERT_TRUE(roots.ok()) << roots.status().ToString();
    roots_ = *roots;
  }

  Result<std::unique_ptr<LocalSource>> Confined(const std::string& pattern) {
    return LocalSource::Create(pattern, {.clock = &clock_, .settle_time = 1s, .roots = roots_});
  }

  std::vector<std::string> roots_;
};

TEST_F(LocalRootsTest, FilesUnderARootAreRead) {
  auto source = Confined(dir_.Join("root/in/a.csv"));
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  Listing listing = ListOrDie(**source);
  ASSERT_EQ(listing.files.size(), 1u);
  EXPECT_TRUE((*source)->Download(listing.files[0], dir_.Join("copy")).ok());
}

TEST_F(LocalRootsTest, DotDotAndPathsOutsideAreRefusedBeforeAnythingIsListed) {
  for (const std::string& pattern :
       {dir_.Join("root/../secret/*.csv"), dir_.Join("root/in/./a.csv"), dir_.Join("secret/*.csv"),
        std::string("/etc/passwd"), dir_.Join("root/up/*.csv")}) {
    auto source = Confined(pattern);
    EXPECT_EQ(source.status().code(), StatusCode::kPermissionDenied) << pattern;
  }
  auto outside = Confined(dir_.Join("secret/*.csv"));
  EXPECT_NE(outside.status().message().find("outside the local roots"), std::string::npos)
      << outside.status().message();
}

TEST_F(LocalRootsTest, ASymlinkOutOfTheRootIsNotRead) {
  auto source = Confined(dir_.Join("root/in/*.csv"));
  ASSERT_TRUE(source.ok());
  Listing listing = ListOrDie(**source);
  ASSERT_EQ(Keys(listing),
            (std::vector<std::string>{dir_.Join("root/in/a.csv"), dir_.Join("root/in/link.csv")}));
  Status copied = (*source)->Download(listing.files[1], dir_.Join("copy"));
  EXPECT_EQ(copied.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(copied.message().find(dir_.Join("secret/s.csv")), std::string::npos)
      << copied.message();
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("copy")));
}

// Place (read in place) checks what Download checks, and links to the file it opened.
TEST_F(LocalRootsTest, PlaceRefusesASymlinkOutOfTheRootAndLinksTheFileItOpened) {
  auto source = Confined(dir_.Join("root/in/*.csv"));
  ASSERT_TRUE(source.ok());
  Listing listing = ListOrDie(**source);
  ASSERT_EQ(listing.files.size(), 2u);
  auto refused = (*source)->Place(listing.files[1], dir_.Join("outside"));
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("outside")));

  const std::string at = dir_.Join("placed.csv");
  auto placed = (*source)->Place(listing.files[0], at);
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  ASSERT_NE(*placed, nullptr);
  EXPECT_EQ(std::filesystem::read_symlink(at).string().rfind("/proc/self/fd/", 0), 0u);
  EXPECT_EQ(ReadFileBytes(at), "a");
  EXPECT_TRUE((*placed)->CheckUnchanged().ok());
  // The path now names another file: the link still leads to the one opened (it is read whole),
  // and the check says the version to load is another.
  WriteFile(dir_.Join("root/in/.new"), "b");
  std::filesystem::rename(dir_.Join("root/in/.new"), dir_.Join("root/in/a.csv"));
  EXPECT_EQ(ReadFileBytes(at), "a");
  const Status replaced = (*placed)->CheckUnchanged();
  EXPECT_EQ(replaced.code(), StatusCode::kAborted);
  EXPECT_NE(replaced.message().find("replaced"), std::string::npos) << replaced.message();
  // Removed after the read (a producer cleaning up): what was read is the listed version.
  std::filesystem::remove(dir_.Join("root/in/a.csv"));
  EXPECT_TRUE((*placed)->CheckUnchanged().ok());
}

TEST_F(LocalSourceDownloadTest, PlaceSeesAWriteInPlaceAndRefusesWhatDownloadRefuses) {
  WriteFile(dir_.Join("in/a.csv"), "1,old\n");
  auto source = MakeLocal(dir_.Join("in/*.csv"));
  const FileInfo file = ListOne(*source);
  auto placed = source->Place(file, dir_.Join("a.link"));
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  ASSERT_NE(*placed, nullptr);
  WriteFile(dir_.Join("in/a.csv"), "1,new\n");  // same inode, rewritten
  const Status written = (*placed)->CheckUnchanged();
  EXPECT_EQ(written.code(), StatusCode::kAborted);
  EXPECT_NE(written.message().find("written in place"), std::string::npos) << written.message();
  // The listed version is gone: placing it again is ABORTED, as its download is.
  EXPECT_EQ(source->Place(file, dir_.Join("again")).status().code(), StatusCode::kAborted);
  // A FIFO fails as its copy would, never in DuckDB's reader.
  ASSERT_EQ(::mkfifo(dir_.Join("in/b.csv").c_str(), 0644), 0);
  FileInfo fifo = file;
  fifo.key = dir_.Join("in/b.csv");
  auto not_regular = source->Place(fifo, dir_.Join("fifo.link"));
  EXPECT_EQ(not_regular.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(not_regular.status().message().find("not a regular file"), std::string::npos);
}

TEST_F(LocalRootsTest, ARootMustBeADirectory) {
  EXPECT_EQ(ResolveRoots({dir_.Join("missing")}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolveRoots({dir_.Join("root/in/a.csv")}).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace millrace::source
