#include "job/job_verify.h"

#include <array>
#include <cstdint>
#include <utility>

#include "common/strings.h"
#include "job/offset.h"
#include "load/file_params.h"

namespace millrace::job {
namespace {

// The kinds a file comparison counts, in the order of the answer.
constexpr std::array kFileKinds = {
    VerifyKind::kLoaded,      VerifyKind::kChanged,  VerifyKind::kVanished, VerifyKind::kMissing,
    VerifyKind::kQuarantined, VerifyKind::kRetrying, VerifyKind::kSkipped,  VerifyKind::kPending,
    VerifyKind::kBeforeStart, VerifyKind::kUnchecked};

// Kinds whose files are counted only: nothing to act on file by file (and they may be most of
// a large job).
bool CountedOnly(VerifyKind kind) {
  return kind == VerifyKind::kLoaded || kind == VerifyKind::kPending ||
         kind == VerifyKind::kBeforeStart;
}

std::string Version(std::string_view etag, int64_t size) {
  return "ETag " + std::string(etag) + ", " + std::to_string(size) + " bytes";
}

// Counts files by kind and keeps the first `examples` of each.
class Tally {
 public:
  explicit Tally(int64_t examples) : examples_(examples) {}

  void Add(VerifyKind kind, const std::string& key, std::string detail) {
    Kind& k = kinds_[static_cast<size_t>(kind)];
    ++k.count;
    if (!CountedOnly(kind) && static_cast<int64_t>(k.rows.size()) < examples_) {
      k.rows.push_back(VerifyRow{kind, std::nullopt, key, std::move(detail)});
    }
  }
  int64_t count(VerifyKind kind) const { return kinds_[static_cast<size_t>(kind)].count; }

  // Moves out kind's summary row (with `what` it means) and its example rows.
  void AppendTo(std::vector<VerifyRow>* out, VerifyKind kind, std::string what) {
    Kind& k = kinds_[static_cast<size_t>(kind)];
    out->push_back(VerifyRow{kind, k.count, "", std::move(what)});
    for (VerifyRow& row : k.rows)
      out->push_back(std::move(row));
  }

 private:
  struct Kind {
    int64_t count = 0;
    std::vector<VerifyRow> rows;
  };
  const int64_t examples_;
  std::array<Kind, static_cast<size_t>(VerifyKind::kTableRows) + 1> kinds_;
};

// What a kind's summary row says, for job `job`.
std::string Meaning(VerifyKind kind, const JobRecord& job, const std::string& offset,
                    const std::string& stopped_after) {
  switch (kind) {
    case VerifyKind::kLoaded:
      return "loaded; the source still has the version loaded (same ETag and size)";
    case VerifyKind::kChanged:
      return "loaded, but the source's ETag or size differs now: the table holds the version "
             "loaded; changed files are not reloaded";
    case VerifyKind::kVanished:
      return "in the ledger but no longer in the source";
    case VerifyKind::kMissing:
      return "in the source at or below the offset " + Quoted(offset, '\'') +
             " and not in the ledger: " +
             (job.properties.late_files == LateFiles::kLoad
                  ? "late files; the next reconciliation loads them (late_files = load)"
                  : "late files the job does not load (late_files = ignore; the next "
                    "reconciliation records them as SKIPPED)");
    case VerifyKind::kQuarantined:
      return "set aside by on_error = skip_file; ALTER JOB " + Backquoted(job.name) +
             " RETRY FILE 'key' (or RETRY ALL) loads them again";
    case VerifyKind::kRetrying:
      return "RETRY requested; the next reconciliation loads them";
    case VerifyKind::kSkipped:
      return "late files skipped (late_files = ignore)";
    case VerifyKind::kPending:
      return "after the offset and not loaded yet: the job's next tasks load them";
    case VerifyKind::kBeforeStart:
      return "at or below the key the job was told to start after (" +
             Quoted(job.reconcile_floor, '\'') + "): not loaded, by design";
    case VerifyKind::kUnchecked:
      return "ledger entries after " + Quoted(stopped_after, '\'') +
             " not compared: a file still being written stopped the listing there; run VERIFY "
             "JOB again once it is complete";
    case VerifyKind::kSource:
    case VerifyKind::kTableRows:
      break;
  }
  return "";
}

}  // namespace

std::string_view VerifyKindName(VerifyKind kind) {
  switch (kind) {
    case VerifyKind::kSource:
      return "SOURCE";
    case VerifyKind::kLoaded:
      return "LOADED";
    case VerifyKind::kChanged:
      return "CHANGED";
    case VerifyKind::kVanished:
      return "VANISHED";
    case VerifyKind::kMissing:
      return "MISSING";
    case VerifyKind::kQuarantined:
      return "QUARANTINED";
    case VerifyKind::kRetrying:
      return "RETRYING";
    case VerifyKind::kSkipped:
      return "SKIPPED";
    case VerifyKind::kPending:
      return "PENDING";
    case VerifyKind::kBeforeStart:
      return "BEFORE_START";
    case VerifyKind::kUnchecked:
      return "UNCHECKED";
    case VerifyKind::kTableRows:
      return "TABLE_ROWS";
  }
  return "?";
}

Result<std::vector<VerifyRow>> CompareFiles(const FileComparison& in) {
  const JobRecord& job = *in.job;
  const std::string offset = job.current_offset.Text(kFileNamePart);
  const std::string& floor = job.reconcile_floor;
  Tally tally(in.examples);

  // The two readers: one page of each in memory.
  std::vector<source::FileInfo> listed;
  size_t li = 0;
  bool list_more = true;
  bool held_back = false;  // a file still being written stopped the listing
  std::string list_after;
  int64_t listed_files = 0;
  std::vector<LedgerEntry> ledger;
  size_t ei = 0;
  bool ledger_more = true;
  std::string ledger_after;
  int64_t ledger_entries = 0;

  while (true) {
    while (li == listed.size() && list_more) {
      MR_ASSIGN_OR_RETURN(source::Listing page, in.list(list_after));
      listed = std::move(page.files);
      li = 0;
      held_back = page.unsettled_files > 0;
      // A page that says more but holds nothing cannot move on (start_after stays).
      list_more = page.more && !held_back && !listed.empty();
      if (!listed.empty()) list_after = listed.back().key;
      listed_files += static_cast<int64_t>(listed.size());
    }
    while (ei == ledger.size() && ledger_more) {
      MR_ASSIGN_OR_RETURN(ledger, in.ledger(ledger_after));
      ei = 0;
      ledger_more = !ledger.empty();
      if (!ledger.empty()) ledger_after = ledger.back().key;
      ledger_entries += static_cast<int64_t>(ledger.size());
    }
    const source::FileInfo* f = li < listed.size() ? &listed[li] : nullptr;
    const LedgerEntry* e = ei < ledger.size() ? &ledger[ei] : nullptr;
    if (f == nullptr && e == nullptr) break;
    if (e == nullptr || (f != nullptr && f->key < e->key)) {
      // In the source only.
      const std::string detail = Version(f->etag, static_cast<int64_t>(f->size));
      if (!floor.empty() && f->key <= floor) {
        tally.Add(VerifyKind::kBeforeStart, f->key, detail);
      } else if (!offset.empty() && f->key <= offset) {
        tally.Add(VerifyKind::kMissing, f->key, detail);
      } else {
        tally.Add(VerifyKind::kPending, f->key, detail);
      }
      ++li;
      continue;
    }
    if (f == nullptr || e->key < f->key) {
      // In the ledger only: gone, unless the listing stopped before reaching it.
      if (held_back) {
        tally.Add(VerifyKind::kUnchecked, e->key, std::string(FileStateName(e->state)));
      } else {
        tally.Add(VerifyKind::kVanished, e->key,
                  std::string(FileStateName(e->state)) + " in the ledger (task " +
                      std::to_string(e->task_id) + ", " + std::to_string(e->rows) + " rows, " +
                      Version(e->etag, e->size) + ")");
      }
      ++ei;
      continue;
    }
    // In both.
    switch (e->state) {
      case FileState::kLoaded:
        if (e->etag == f->etag && e->size == static_cast<int64_t>(f->size)) {
          tally.Add(VerifyKind::kLoaded, e->key, "");
        } else {
          tally.Add(VerifyKind::kChanged, e->key,
                    "loaded by task " + std::to_string(e->task_id) + " as " +
                        Version(e->etag, e->size) + "; the source has " +
                        Version(f->etag, static_cast<int64_t>(f->size)) + " now");
        }
        break;
      case FileState::kQuarantined:
        tally.Add(VerifyKind::kQuarantined, e->key, e->error);
        break;
      case FileState::kRetrying:
        tally.Add(VerifyKind::kRetrying, e->key, e->error);
        break;
      case FileState::kSkipped:
        tally.Add(VerifyKind::kSkipped, e->key, e->error);
        break;
    }
    ++li;
    ++ei;
  }

  std::string source_detail = "offset " + Quoted(offset, '\'');
  if (!floor.empty()) source_detail += ", started after " + Quoted(floor, '\'');
  source_detail += "; " + std::to_string(ledger_entries) + " ledger entries";
  std::vector<VerifyRow> out;
  out.push_back(VerifyRow{VerifyKind::kSource, listed_files, in.source, source_detail});
  for (VerifyKind kind : kFileKinds) {
    if (kind == VerifyKind::kUnchecked && !held_back) continue;
    tally.AppendTo(&out, kind, Meaning(kind, job, offset, list_after));
  }
  return out;
}

Result<std::vector<VerifyRow>> JobVerifier::Verify(const std::string& name, int64_t examples,
                                                   const sql::SessionInfo& who) const {
  if (examples < 0) return Status::InvalidArgument("VERIFY JOB: LIMIT must not be negative");
  std::shared_ptr<Job> job = config_.registry->Find(name);
  if (job == nullptr) return Status::NotFound("job " + name + " does not exist");
  // A copy of the record and the plan: the listing runs without the job's lock.
  JobRecord record;
  std::shared_ptr<const JobPlan> plan;
  {
    MutexLock lock(&job->mu);
    if (config_.access != nullptr)
      MR_RETURN_IF_ERROR(config_.access->MayControl(who, job->plan.get()));
    record = job->record;
    plan = job->plan;
  }
  if (plan == nullptr) {
    return Status::FailedPrecondition(
        "job " + name + " cannot be verified: its definition does not run: " + record.error_msg);
  }
  if (plan->analysis.source == load::SourceKind::kCdcStream) return VerifyTables(record, *plan);
  return VerifyFiles(record, *plan, examples);
}

Result<std::vector<VerifyRow>> JobVerifier::VerifyFiles(const JobRecord& record,
                                                        const JobPlan& plan,
                                                        int64_t examples) const {
  MR_ASSIGN_OR_RETURN(load::FileFunctionOptions options,
                      load::ParseFileFunctionArgs(plan.analysis.source, plan.analysis.args));
  MR_ASSIGN_OR_RETURN(std::unique_ptr<source::FileSource> files, config_.make_source(options));
  const size_t page =
      plan.analysis.source == load::SourceKind::kS3 ? config_.s3_page : config_.local_page;
  FileComparison comparison;
  comparison.job = &record;
  comparison.source = files->Describe();
  comparison.examples = examples;
  comparison.list = [&](const std::string& after) {
    source::ListOptions list;
    list.start_after = after;
    list.max_files = page;
    list.max_bytes = UINT64_MAX;
    return files->List(list);
  };
  comparison.ledger = [&](const std::string& after) {
    return config_.catalog->LedgerPage(record.id, after, config_.ledger_page, std::nullopt, "");
  };
  return CompareFiles(comparison);
}

Result<std::vector<VerifyRow>> JobVerifier::VerifyTables(const JobRecord& record,
                                                         const JobPlan& plan) const {
  MR_ASSIGN_OR_RETURN(std::vector<UpstreamTableRows> tables, plan.source->CountRows());
  MR_ASSIGN_OR_RETURN(auto conn, config_.db->Connect());
  std::vector<VerifyRow> out;
  out.push_back(VerifyRow{VerifyKind::kSource, std::nullopt, plan.source->Describe(),
                          "offset " + Quoted(record.current_offset.ToJson(), '\'') + "; " +
                              std::to_string(tables.size()) + " table(s)"});
  for (const UpstreamTableRows& t : tables) {
    const std::string target = t.target_schema + "." + t.target_table;
    std::string detail = "source " + std::to_string(t.rows) + " rows; target " + target + " ";
    auto counted = engine::QueryTextRows(*conn, "SELECT count(*) FROM " +
                                                    engine::QuoteIdentifier(t.target_schema) + "." +
                                                    engine::QuoteIdentifier(t.target_table));
    std::optional<int64_t> rows;
    if (counted.ok() && counted->size() == 1) rows = ParseInt64(counted->front().front());
    if (!counted.ok()) {
      // A FROM ... TO DATABASE target is made by the job's first batch of its table.
      detail += "cannot be counted: " + counted.status().message();
    } else if (!rows) {
      return Status::Internal("count(*) of " + target + " is not a number");
    } else {
      detail += std::to_string(*rows) + " rows";
      if (*rows == t.rows) {
        detail += " (equal)";
      } else {
        detail += " (" + std::to_string(*rows > t.rows ? *rows - t.rows : t.rows - *rows) +
                  (*rows > t.rows ? " more" : " fewer") + " in the target)";
      }
    }
    out.push_back(VerifyRow{VerifyKind::kTableRows, std::nullopt, t.table, std::move(detail)});
  }
  return out;
}

}  // namespace millrace::job
