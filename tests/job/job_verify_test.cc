// VERIFY JOB (job_verify.h): the comparison of a listing with a ledger on its own, page by page;
// and a job over a local directory with one file of each kind, verified while paused and
// after it resumed, without VERIFY changing what the job does.
#include "job/job_verify.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "job/job_test_util.h"
#include "testing/test_paths.h"

namespace millrace::job {
namespace {

// "KIND files file": what a row says, without its detail ("-" for an empty field).
std::vector<std::string> Shapes(const std::vector<VerifyRow>& rows) {
  std::vector<std::string> out;
  for (const VerifyRow& r : rows) {
    out.push_back(std::string(VerifyKindName(r.kind)) + " " +
                  (r.files ? std::to_string(*r.files) : "-") + " " +
                  (r.file.empty() ? "-" : r.file));
  }
  return out;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const VerifyRow* Find(const std::vector<VerifyRow>& rows, VerifyKind kind,
                      const std::string& file) {
  for (const VerifyRow& r : rows) {
    if (r.kind == kind && r.file == file) return &r;
  }
  return nullptr;
}

source::FileInfo Listed(const std::string& key, const std::string& etag, uint64_t size = 1) {
  return source::FileInfo{key, etag, size, {}};
}

LedgerEntry Entry(const std::string& key, const std::string& etag, FileState state,
                  const std::string& error = "") {
  LedgerEntry e;
  e.key = key;
  e.etag = etag;
  e.size = 1;
  e.state = state;
  e.task_id = 1;
  e.rows = 1;
  e.error = error;
  return e;
}

// Serves `files` as a source would: after a key, in pages of `page`, stopping before `held`
// (a file still being written) when it is set.
FileComparison Over(const JobRecord* job, const std::vector<source::FileInfo>* files,
                    const std::vector<LedgerEntry>* ledger, size_t page,
                    const std::string& held = "") {
  FileComparison c;
  c.job = job;
  c.source = "/in/*.csv";
  c.examples = 100;
  c.list = [=](const std::string& after) -> Result<source::Listing> {
    source::Listing listing;
    for (const source::FileInfo& f : *files) {
      if (f.key <= after) continue;
      if (!held.empty() && f.key >= held) {
        ++listing.unsettled_files;
        continue;
      }
      if (listing.files.size() == page) {
        listing.more = true;
        break;
      }
      listing.files.push_back(f);
    }
    return listing;
  };
  c.ledger = [=](const std::string& after) -> Result<std::vector<LedgerEntry>> {
    std::vector<LedgerEntry> out;
    for (const LedgerEntry& e : *ledger) {
      if (e.key > after && out.size() < page) out.push_back(e);
    }
    return out;
  };
  return c;
}

TEST(CompareFilesTest, EachFileUnderOneKindAcrossPageBoundaries) {
  JobRecord job;
  job.name = "j";
  job.current_offset = Offset::FileName("/in/f.csv");
  job.reconcile_floor = "/in/0.csv";
  const std::vector<source::FileInfo> files = {
      Listed("/in/0.csv", "z"),  Listed("/in/a.csv", "1"), Listed("/in/a1.csv", "9"),
      Listed("/in/b.csv", "2x"), Listed("/in/d.csv", "4"), Listed("/in/e.csv", "5"),
      Listed("/in/f.csv", "6"),  Listed("/in/g.csv", "7"), Listed("/in/h.csv", "8")};
  const std::vector<LedgerEntry> ledger = {
      Entry("/in/a.csv", "1", FileState::kLoaded),
      Entry("/in/b.csv", "2", FileState::kLoaded),
      Entry("/in/c.csv", "3", FileState::kLoaded),
      Entry("/in/d.csv", "4", FileState::kQuarantined, "wrong columns"),
      Entry("/in/e.csv", "5", FileState::kRetrying, "retry requested"),
      Entry("/in/e0.csv", "5", FileState::kSkipped, "late file (late_files = ignore)"),
      Entry("/in/f.csv", "6", FileState::kLoaded)};
  // Pages of 1, 2 and 100 (one page) give the same answer.
  for (size_t page : {1, 2, 100}) {
    SCOPED_TRACE(page);
    auto rows = CompareFiles(Over(&job, &files, &ledger, page));
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    EXPECT_EQ(
        Shapes(*rows),
        (std::vector<std::string>{
            "SOURCE 9 /in/*.csv", "LOADED 2 -", "CHANGED 1 -", "CHANGED - /in/b.csv",
            "VANISHED 2 -", "VANISHED - /in/c.csv", "VANISHED - /in/e0.csv", "MISSING 1 -",
            "MISSING - /in/a1.csv", "QUARANTINED 1 -", "QUARANTINED - /in/d.csv", "RETRYING 1 -",
            "RETRYING - /in/e.csv", "SKIPPED 0 -", "PENDING 2 -", "BEFORE_START 1 -"}));
    EXPECT_EQ(rows->front().detail,
              "offset '/in/f.csv', started after '/in/0.csv'; 7 ledger entries");
    EXPECT_EQ(Find(*rows, VerifyKind::kChanged, "/in/b.csv")->detail,
              "loaded by task 1 as ETag 2, 1 bytes; the source has ETag 2x, 1 bytes now");
    EXPECT_EQ(Find(*rows, VerifyKind::kVanished, "/in/e0.csv")->detail,
              "SKIPPED in the ledger (task 1, 1 rows, ETag 5, 1 bytes)");
    EXPECT_EQ(Find(*rows, VerifyKind::kQuarantined, "/in/d.csv")->detail, "wrong columns");
  }
}

TEST(CompareFilesTest, ALimitKeepsCountsAndAHeldBackListingLeavesTheRestUnchecked) {
  JobRecord job;
  job.name = "j";
  job.current_offset = Offset::FileName("/in/d.csv");
  const std::vector<source::FileInfo> files = {Listed("/in/a.csv", "1"), Listed("/in/b.csv", "2"),
                                               Listed("/in/c.csv", "3"), Listed("/in/d.csv", "4")};
  const std::vector<LedgerEntry> ledger = {
      Entry("/in/a.csv", "1", FileState::kLoaded), Entry("/in/b.csv", "1", FileState::kLoaded),
      Entry("/in/c.csv", "1", FileState::kLoaded), Entry("/in/d.csv", "4", FileState::kLoaded)};
  // c.csv is being written: the listing stops before it, so c and d are not compared (not
  // VANISHED).
  FileComparison c = Over(&job, &files, &ledger, 1, "/in/c.csv");
  c.examples = 0;
  auto rows = CompareFiles(c);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(Shapes(*rows), (std::vector<std::string>{
                               "SOURCE 2 /in/*.csv", "LOADED 1 -", "CHANGED 1 -", "VANISHED 0 -",
                               "MISSING 0 -", "QUARANTINED 0 -", "RETRYING 0 -", "SKIPPED 0 -",
                               "PENDING 0 -", "BEFORE_START 0 -", "UNCHECKED 2 -"}));
  EXPECT_TRUE(Contains(rows->back().detail, "ledger entries after '/in/b.csv' not compared"))
      << rows->back().detail;
}

class JobVerifyTest : public LocalJobTest {
 protected:
  std::string Path(const std::string& name) { return in_ + "/" + name; }
  std::vector<VerifyRow> Verify(const std::string& job, int64_t examples = 100) {
    auto rows = harness_.service().VerifyJob(job, examples);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : std::vector<VerifyRow>{};
  }
  int64_t Count(const std::vector<VerifyRow>& rows, VerifyKind kind) {
    for (const VerifyRow& r : rows) {
      if (r.kind == kind && r.file.empty()) return r.files.value_or(-1);
    }
    return -1;
  }
};

TEST_F(JobVerifyTest, ReportsOneFileOfEachKindAndChangesNothing) {
  WriteFile(Path("0.csv"), "0,before\n");  // the job starts after it
  WriteFile(Path("a.csv"), "1,one\n");
  WriteFile(Path("b.csv"), "2,two\n");
  WriteFile(Path("c.csv"), "3,three\n");
  std::filesystem::copy_file(testing::SourcePath("tests/job/corpus/wrong_columns.csv"),
                             Path("d.csv"));
  WriteFile(Path("e.csv"), "5,five\n");
  harness_.Tick();
  ASSERT_TRUE(harness_
                  .Run("CREATE JOB v ON STREAMING PROPERTIES (\"max_interval\" = \"1\", "
                       "\"on_error\" = \"skip_file\", \"offset\" = '{\"fileName\":\"" +
                       Path("0.csv") +
                       "\"}') DO INSERT INTO t SELECT c1, c2 FROM local(\"file_path\" = \"" + in_ +
                       "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")")
                  .ok());
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.Value("SELECT count(*) FROM t") == "4"; }));
  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'v'").ok());

  // After the job passed them: a late file below the offset, a loaded file rewritten, one
  // deleted, and a new file after the offset.
  WriteFile(Path("a1.csv"), "11,late\n");
  WriteFile(Path("b.csv"), "2,two, rewritten\n");
  std::filesystem::remove(Path("c.csv"));
  WriteFile(Path("f.csv"), "6,six\n");
  harness_.Tick();

  const auto rows = Verify("v");
  EXPECT_EQ(
      Shapes(rows),
      (std::vector<std::string>{
          "SOURCE 7 " + in_ + "/*.csv", "LOADED 2 -", "CHANGED 1 -", "CHANGED - " + Path("b.csv"),
          "VANISHED 1 -", "VANISHED - " + Path("c.csv"), "MISSING 1 -",
          "MISSING - " + Path("a1.csv"), "QUARANTINED 1 -", "QUARANTINED - " + Path("d.csv"),
          "RETRYING 0 -", "SKIPPED 0 -", "PENDING 1 -", "BEFORE_START 1 -"}));
  ASSERT_EQ(rows.size(), 14u);
  EXPECT_EQ(rows[0].detail, "offset '" + Path("e.csv") + "', started after '" + Path("0.csv") +
                                "'; 5 ledger entries");
  const std::string changed = rows[3].detail;
  EXPECT_TRUE(Contains(changed, ", 6 bytes; the source has ETag ")) << changed;
  EXPECT_TRUE(Contains(changed, ", 17 bytes now")) << changed;
  EXPECT_TRUE(Contains(rows[5].detail, "LOADED in the ledger (task 1, 1 rows, ETag "))
      << rows[5].detail;
  EXPECT_TRUE(Contains(rows[6].detail, "late files; the next reconciliation loads them"))
      << rows[6].detail;
  EXPECT_FALSE(rows[9].detail.empty());  // the quarantined file's error

  // LIMIT 0: the same counts, no file rows.
  const auto counts = Verify("v", 0);
  for (const VerifyRow& r : counts) {
    if (r.kind != VerifyKind::kSource) EXPECT_EQ(r.file, "") << VerifyKindName(r.kind);
  }
  EXPECT_EQ(Count(counts, VerifyKind::kChanged), 1);
  EXPECT_EQ(Count(counts, VerifyKind::kMissing), 1);

  // Nothing was written: the ledger and the job are as they were.
  EXPECT_EQ(harness_.QueryExpanded("SELECT count(*) FROM job_files(\"job\" = \"v\")"),
            (std::vector<std::vector<std::string>>{{"5"}}));
  EXPECT_EQ(harness_.JobColumn("v", "Status"), "PAUSED");

  // Resumed, the job loads the late file and the new one (VERIFY told the truth about them);
  // a VERIFY of the running job then finds them loaded and leaves it running.
  ASSERT_TRUE(harness_.Run("RESUME JOB WHERE jobname = 'v'").ok());
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.Value("SELECT count(*) FROM t") == "6"; }));
  const auto after = Verify("v");
  EXPECT_EQ(Count(after, VerifyKind::kLoaded), 4);
  EXPECT_EQ(Count(after, VerifyKind::kMissing), 0);
  EXPECT_EQ(Count(after, VerifyKind::kPending), 0);
  EXPECT_EQ(Count(after, VerifyKind::kChanged), 1);  // changed files are not reloaded
  EXPECT_EQ(Count(after, VerifyKind::kVanished), 1);
  EXPECT_EQ(harness_.JobColumn("v", "Status"), "RUNNING");
  WriteFile(Path("g.csv"), "7,seven\n");
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.Value("SELECT count(*) FROM t") == "7"; }));
}

TEST_F(JobVerifyTest, AnUnknownJobIsNotFound) {
  auto rows = harness_.service().VerifyJob("nope");
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(rows.status().message(), "job nope does not exist");
}

}  // namespace
}  // namespace millrace::job
