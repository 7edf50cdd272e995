#include "job/file_states.h"

#include <gtest/gtest.h>

#include "load/bad_file.h"

namespace millrace::job {
namespace {

const FileRecorder kTask{7, 3, 1000};
const source::FileInfo kFile{"in/a.csv", "etag-a", 42, {}};

TEST(FileStatesTest, ATaskRecordsALoadedOrAQuarantinedFile) {
  LedgerEntry loaded = Loaded(kTask, kFile, 5);
  EXPECT_EQ(loaded.state, FileState::kLoaded);
  EXPECT_EQ(loaded.job_id, 7);
  EXPECT_EQ(loaded.task_id, 3);
  EXPECT_EQ(loaded.key, "in/a.csv");
  EXPECT_EQ(loaded.etag, "etag-a");
  EXPECT_EQ(loaded.size, 42);
  EXPECT_EQ(loaded.rows, 5);
  EXPECT_EQ(loaded.load_time_us, 1000);
  EXPECT_EQ(loaded.error, "");

  LedgerEntry bad = Quarantined(
      kTask, kFile,
      load::BadFileError(Status::InvalidArgument("nested too deep"), load::BadFile::kJsonTooDeep));
  EXPECT_EQ(bad.state, FileState::kQuarantined);
  EXPECT_EQ(bad.error, "nested too deep");
  EXPECT_EQ(bad.reason, "JSON_TOO_DEEP");
  EXPECT_EQ(bad.rows, 0);
}

TEST(FileStatesTest, OnlyAQuarantinedFileIsRetriedAndARetriedOneLoadsAgain) {
  LedgerEntry bad = Quarantined(kTask, kFile, Status::InvalidArgument("bad"));
  EXPECT_FALSE(LoadsAgain(bad));
  Result<LedgerEntry> retried = Retried(bad);
  ASSERT_TRUE(retried.ok());
  EXPECT_EQ(retried->state, FileState::kRetrying);
  EXPECT_TRUE(LoadsAgain(*retried));

  for (const LedgerEntry& other :
       {Loaded(kTask, kFile, 1), Skipped({7, 0, 1000}, kFile, "late"), *retried}) {
    Result<LedgerEntry> refused = Retried(other);
    EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition)
        << FileStateName(other.state);
  }
}

TEST(FileStatesTest, AChangedLoadedFileIsNotedOnceAndNotLoadedAgain) {
  LedgerEntry loaded = Loaded(kTask, kFile, 5);
  EXPECT_FALSE(ChangedSinceLoaded(loaded, kFile));
  const source::FileInfo rewritten{"in/a.csv", "etag-b", 43, {}};
  ASSERT_TRUE(ChangedSinceLoaded(loaded, rewritten));
  LedgerEntry noted = NotedChanged(loaded, rewritten);
  EXPECT_EQ(noted.state, FileState::kLoaded);
  EXPECT_EQ(noted.error, "changed after it was loaded (now ETag etag-b, 43 bytes); not reloaded");
  EXPECT_FALSE(ChangedSinceLoaded(noted, rewritten));  // noted already
  EXPECT_FALSE(LoadsAgain(noted));
}

}  // namespace
}  // namespace millrace::job
