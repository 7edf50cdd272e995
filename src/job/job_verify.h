// VERIFY JOB name [LIMIT n]: compares what a job's source holds now with what the job recorded
// (docs/jobs.md, "VERIFY JOB").
//
// A file job's source is listed once, in key order, and merged with the job's ledger read in
// key order (JobStore::LedgerPage), page by page: memory holds one page of each and the
// example rows, whatever the number of files. Each file is counted under exactly one kind:
//   LOADED       in the ledger as loaded, same ETag and size in the source
//   CHANGED      in the ledger as loaded, the source's ETag or size differs now
//   VANISHED     in the ledger (any state; the detail names it), no longer in the source
//   MISSING      in the source between the job's floor and its offset, not in the ledger
//   QUARANTINED, RETRYING, SKIPPED   in the source and in the ledger in that state
//   PENDING      in the source after the offset, not in the ledger: the next tasks load it
//   BEFORE_START in the source at or below the job's floor (the offset it was told to start
//                after), not in the ledger: not loaded by design
//   UNCHECKED    ledger entries past the point where a local file still being written stopped
//                the listing (only then): not compared
//
// Contract
// - Verify answers a SOURCE row first (Files: files listed; File: the source; Detail: the
//   offset, the floor, the ledger entries read), then per kind above (UNCHECKED only when it
//   applies) a summary row (Files: the count, File empty) followed by at most `examples` rows
//   of that kind's files in key order (Files nullopt, File the key) — except LOADED, PENDING and
//   BEFORE_START, which are counted only.
// - A change stream answers the SOURCE row (File: the source; Detail: the offset) and a
//   TABLE_ROWS row per source table (File: the table; Detail: count(*) at the source, through
//   a connection of the source's own with the job's parameters (JobSource::CountRows), and
//   count(*) of its target table). The counts are not taken at one instant: on a busy table
//   they differ by the changes in flight.
// - Read-only: it never writes the ledger or the job, and takes the job's lock only to copy
//   its record and plan (never across the listing; it may wait for a commit in progress to
//   end, as SHOW CREATE JOB does), so a running task goes on undisturbed.
//   The source is opened anew from the job's definition (a source of its own: no read ahead
//   or pending files of the job's are touched). Files a task commits while the listing runs
//   may show as PENDING or MISSING: what was true when their page was read.
// - Needs what PAUSE JOB needs (JobAccess::MayControl): it makes requests to the job's source
//   with the job's credentials. An unknown job is NOT_FOUND; a job whose definition no longer
//   builds is FAILED_PRECONDITION with the reason.
// - Thread-safety: Verify may be called concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engine/database.h"
#include "job/job_access.h"
#include "job/job_registry.h"
#include "job/job_store.h"
#include "load/file_table_function.h"
#include "source/file_source.h"

namespace millrace::job {

enum class VerifyKind {
  kSource,
  kLoaded,
  kChanged,
  kVanished,
  kMissing,
  kQuarantined,
  kRetrying,
  kSkipped,
  kPending,
  kBeforeStart,
  kUnchecked,
  kTableRows,
};
std::string_view VerifyKindName(VerifyKind kind);

// One row of the answer.
struct VerifyRow {
  VerifyKind kind = VerifyKind::kSource;
  std::optional<int64_t> files;  // summary rows: how many; file rows: nullopt
  std::string file;              // file rows: the key; summary rows: "" (NULL)
  std::string detail;

  friend bool operator==(const VerifyRow&, const VerifyRow&) = default;
};

// The file comparison on its own, over two paged readers (the listing and the ledger), for
// Verify and for tests.
struct FileComparison {
  const JobRecord* job = nullptr;  // offset, floor, late_files, name
  std::string source;              // the source as FileSource::Describe shows it
  // The listing after `after` ("" for the first page), in key order.
  std::function<Result<source::Listing>(const std::string& after)> list;
  // Ledger entries with keys after `after`, in key order; an empty page ends the ledger.
  std::function<Result<std::vector<LedgerEntry>>(const std::string& after)> ledger;
  int64_t examples = 100;
};
Result<std::vector<VerifyRow>> CompareFiles(const FileComparison& comparison);

struct JobVerifierConfig {
  JobRegistry* registry = nullptr;    // not owned
  JobStore* catalog = nullptr;        // not owned
  const JobAccess* access = nullptr;  // not owned; null: no privilege checks
  load::SourceFactory make_source;    // opens the job's files again
  engine::Database* db = nullptr;     // not owned; counts a change stream's target rows
  // Files per listing request: S3 sources list 1,000 keys per LIST, so a page is a few
  // LISTs; a local source walks its directory once per page.
  size_t s3_page = 10'000;
  size_t local_page = 100'000;
  int64_t ledger_page = 10'000;
};

class JobVerifier {
 public:
  explicit JobVerifier(JobVerifierConfig config) : config_(std::move(config)) {}

  // VERIFY JOB `name` LIMIT `examples`, as `who`.
  Result<std::vector<VerifyRow>> Verify(const std::string& name, int64_t examples,
                                        const sql::SessionInfo& who) const;

 private:
  Result<std::vector<VerifyRow>> VerifyFiles(const JobRecord& record, const JobPlan& plan,
                                             int64_t examples) const;
  Result<std::vector<VerifyRow>> VerifyTables(const JobRecord& record, const JobPlan& plan) const;

  const JobVerifierConfig config_;
};

}  // namespace millrace::job
