// What a job does with the files the server was reading when it stopped: a pure policy over
// the marks it left (the catalog half is in duckdb_catalog's tests, the process half in
// job_crash_test.cc).
#include "files/crash_suspects.h"

#include <gtest/gtest.h>

namespace millrace::files {
namespace {

std::vector<source::FileInfo> Files(const std::vector<std::string>& keys) {
  std::vector<source::FileInfo> files;
  for (const std::string& key : keys)
    files.push_back(source::FileInfo{key, "e", 10, {}});
  return files;
}

job::ReadingMark Mark(const std::string& key, int64_t batch_files, int64_t alone_crashes = 0) {
  return job::ReadingMark{key, 4, batch_files, alone_crashes, 100};
}

TEST(CrashSuspectsTest, WithoutMarksBatchesAreWholeAndEveryFileIsMarked) {
  CrashSuspects suspects({}, false);
  EXPECT_TRUE(suspects.empty());
  const auto files = Files({"a", "b", "c"});
  EXPECT_EQ(suspects.BatchSize(files), 3u);
  const CrashSuspects::Reading reading = suspects.BeforeReading(files, 9, 500, false);
  ASSERT_EQ(reading.marks.size(), 3u);
  EXPECT_TRUE(reading.set_aside.empty());
  for (const job::ReadingMark& m : reading.marks) {
    EXPECT_EQ(m.task_id, 9);
    EXPECT_EQ(m.batch_files, 3);
    EXPECT_EQ(m.alone_crashes, 0);
    EXPECT_EQ(m.started_us, 500);
  }
}

// A file read alone by one of several tasks of the job at once (max_concurrent_tasks) is not
// read alone in the process: a fault then does not count against it.
TEST(CrashSuspectsTest, AFileReadBesideOtherTasksIsNeverMarkedAsReadAlone) {
  CrashSuspects suspects({}, false);
  const CrashSuspects::Reading reading = suspects.BeforeReading(Files({"a"}), 9, 500, true);
  ASSERT_EQ(reading.marks.size(), 1u);
  EXPECT_EQ(reading.marks[0].batch_files, 2);
  CrashSuspects after({reading.marks[0]}, /*fault=*/true);
  const CrashSuspects::Reading again = after.BeforeReading(Files({"a"}), 10, 600, false);
  ASSERT_EQ(again.marks.size(), 1u);
  EXPECT_EQ(again.marks[0].alone_crashes, 0);
}

TEST(CrashSuspectsTest, TheFilesOfAStoppedBatchAreReadOneAtATime) {
  CrashSuspects suspects({Mark("b", 2), Mark("c", 2)}, true);
  EXPECT_FALSE(suspects.empty());
  // The files before the first suspect still go together; a suspect goes alone.
  EXPECT_EQ(suspects.BatchSize(Files({"a", "b", "c", "d"})), 1u);
  EXPECT_EQ(suspects.BatchSize(Files({"0", "a", "b", "c"})), 2u);
  EXPECT_EQ(suspects.BatchSize(Files({"b", "c", "d"})), 1u);
  // Read alone, a suspect of a batch is marked with no alone crash yet: it is not set aside.
  const CrashSuspects::Reading reading = suspects.BeforeReading(Files({"b"}), 9, 500, false);
  ASSERT_EQ(reading.marks.size(), 1u);
  EXPECT_EQ(reading.marks[0].batch_files, 1);
  EXPECT_EQ(reading.marks[0].alone_crashes, 0);
  EXPECT_TRUE(reading.set_aside.empty());
  suspects.Read(Files({"b"}));
  EXPECT_EQ(suspects.BatchSize(Files({"b", "c", "d"})), 1u);
  EXPECT_EQ(suspects.BatchSize(Files({"c", "d"})), 1u);
  suspects.Read(Files({"c"}));
  EXPECT_TRUE(suspects.empty());
  EXPECT_EQ(suspects.BatchSize(Files({"d", "e"})), 2u);
}

TEST(CrashSuspectsTest, OneCrashAloneIsCountedInTheNextMark) {
  CrashSuspects suspects({Mark("b", 1)}, true);
  const CrashSuspects::Reading reading = suspects.BeforeReading(Files({"b"}), 9, 500, false);
  ASSERT_EQ(reading.marks.size(), 1u);
  EXPECT_EQ(reading.marks[0].alone_crashes, 1);
  EXPECT_TRUE(reading.set_aside.empty()) << "one crash may be another thread's: read it again";
}

TEST(CrashSuspectsTest, StopsFromOutsideAreNeverCounted) {
  // Killed (no fault recorded) while reading b alone, after it had crashed once alone: b is
  // still read alone, with the count it had.
  CrashSuspects suspects({Mark("b", 1, 1)}, false);
  EXPECT_EQ(suspects.BatchSize(Files({"b", "c"})), 1u);
  const CrashSuspects::Reading reading = suspects.BeforeReading(Files({"b"}), 9, 500, false);
  ASSERT_EQ(reading.marks.size(), 1u);
  EXPECT_EQ(reading.marks[0].alone_crashes, 1);
  EXPECT_TRUE(reading.set_aside.empty());
}

TEST(CrashSuspectsTest, AFileThatCrashedTheServerTwiceAloneIsSetAsideUnread) {
  CrashSuspects suspects({Mark("b", 1, 1), Mark("c", 1, 0)}, true);
  const CrashSuspects::Reading reading = suspects.BeforeReading(Files({"b"}), 9, 500, false);
  EXPECT_TRUE(reading.marks.empty());
  ASSERT_EQ(reading.set_aside.count(0), 1u);
  const std::string& why = reading.set_aside.at(0).message();
  EXPECT_NE(why.find("crashed 2 times while reading this file alone"), std::string::npos) << why;
  EXPECT_NE(why.find("RETRY"), std::string::npos);
  // Set aside counts as read: the file is no longer a suspect (a RETRY reads it afresh).
  suspects.Read(Files({"b"}));
  EXPECT_EQ(suspects.BatchSize(Files({"b", "c"})), 1u);
  EXPECT_EQ(suspects.BatchSize(Files({"a", "b", "c"})), 2u);
}

}  // namespace
}  // namespace millrace::files
