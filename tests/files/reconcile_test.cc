// Reconciliation as a pure function: (listing, ledger, offset) -> (late, skipped, changed).
#include "files/reconcile.h"

#include <gtest/gtest.h>

namespace millrace::files {
namespace {

source::FileInfo File(const std::string& key, const std::string& etag = "e", uint64_t size = 10) {
  return source::FileInfo{key, etag, size, {}};
}

job::LedgerEntry Entry(const std::string& key, job::FileState state, const std::string& etag = "e",
                       int64_t size = 10) {
  return job::LedgerEntry{7, key, etag, size, state, 1, 3, 100, ""};
}

std::vector<std::string> Keys(const std::vector<source::FileInfo>& files) {
  std::vector<std::string> keys;
  for (const auto& f : files)
    keys.push_back(f.key);
  return keys;
}

TEST(ReconcileTest, FilesTheLedgerLacksBelowTheOffsetAreLate) {
  const Reconciliation r =
      Reconcile({File("a"), File("b"), File("c"), File("d")}, {Entry("b", job::FileState::kLoaded)},
                "c", "", job::LateFiles::kLoad, 7, 500);
  // d is above the offset: new, not late. b is loaded.
  EXPECT_EQ(Keys(r.late), (std::vector<std::string>{"a", "c"}));
  EXPECT_TRUE(r.skipped.empty());
  EXPECT_TRUE(r.changed.empty());
}

TEST(ReconcileTest, TheFloorIsNeverReconciled) {
  const Reconciliation r =
      Reconcile({File("a"), File("b"), File("c")}, {}, "c", "b", job::LateFiles::kLoad, 7, 500);
  EXPECT_EQ(Keys(r.late), (std::vector<std::string>{"c"}));
}

TEST(ReconcileTest, IgnoredLateFilesBecomeSkippedEntries) {
  const Reconciliation r =
      Reconcile({File("a", "x", 42), File("b")}, {Entry("b", job::FileState::kLoaded)}, "b", "",
                job::LateFiles::kIgnore, 7, 500);
  EXPECT_TRUE(r.late.empty());
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0].key, "a");
  EXPECT_EQ(r.skipped[0].etag, "x");
  EXPECT_EQ(r.skipped[0].size, 42);
  EXPECT_EQ(r.skipped[0].state, job::FileState::kSkipped);
  EXPECT_EQ(r.skipped[0].job_id, 7);
  EXPECT_EQ(r.skipped[0].load_time_us, 500);
  EXPECT_EQ(r.skipped[0].error, "late file (late_files = ignore)");
}

TEST(ReconcileTest, RetryingFilesAreLateWhateverThePolicy) {
  for (job::LateFiles policy : {job::LateFiles::kLoad, job::LateFiles::kIgnore}) {
    const Reconciliation r =
        Reconcile({File("a")}, {Entry("a", job::FileState::kRetrying)}, "z", "", policy, 7, 500);
    EXPECT_EQ(Keys(r.late), (std::vector<std::string>{"a"}));
    EXPECT_TRUE(r.skipped.empty());
  }
}

TEST(ReconcileTest, QuarantinedAndSkippedFilesStayAsTheyAre) {
  const Reconciliation r =
      Reconcile({File("a", "new"), File("b", "new")},
                {Entry("a", job::FileState::kQuarantined), Entry("b", job::FileState::kSkipped)},
                "z", "", job::LateFiles::kLoad, 7, 500);
  EXPECT_TRUE(r.late.empty());
  EXPECT_TRUE(r.skipped.empty());
  EXPECT_TRUE(r.changed.empty());
}

TEST(ReconcileTest, ALoadedFileThatChangedIsReportedOnceNotReloaded) {
  job::LedgerEntry noted = Entry("b", job::FileState::kLoaded);
  noted.error = "changed after it was loaded (earlier)";
  const Reconciliation r =
      Reconcile({File("a", "e2", 10), File("b", "e2", 10), File("c", "e", 11), File("d")},
                {Entry("a", job::FileState::kLoaded), noted, Entry("c", job::FileState::kLoaded),
                 Entry("d", job::FileState::kLoaded)},
                "d", "", job::LateFiles::kLoad, 7, 500);
  EXPECT_TRUE(r.late.empty());
  // a: new ETag; c: new size; b was reported already; d is unchanged.
  ASSERT_EQ(r.changed.size(), 2u);
  EXPECT_EQ(r.changed[0].key, "a");
  EXPECT_EQ(r.changed[0].state, job::FileState::kLoaded);
  EXPECT_EQ(r.changed[0].rows, 3);  // the entry is kept, with a note
  EXPECT_EQ(r.changed[0].error,
            "changed after it was loaded (now ETag e2, 10 bytes); not reloaded");
  EXPECT_EQ(r.changed[1].key, "c");
  EXPECT_EQ(r.changed[1].error, "changed after it was loaded (now ETag e, 11 bytes); not reloaded");
}

TEST(ReconcileTest, NothingBelowAnEmptyOffset) {
  const Reconciliation r = Reconcile({File("a")}, {}, "", "", job::LateFiles::kLoad, 7, 500);
  EXPECT_TRUE(r.late.empty());
}

}  // namespace
}  // namespace millrace::files
