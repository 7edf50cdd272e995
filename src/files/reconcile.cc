#include "files/reconcile.h"

#include <map>

namespace millrace::job {

Reconciliation Reconcile(const std::vector<source::FileInfo>& listed,
                         const std::vector<LedgerEntry>& ledger, const std::string& offset,
                         const std::string& floor, LateFiles late_files, int64_t job_id,
                         int64_t now_us) {
  std::map<std::string_view, const LedgerEntry*> by_key;
  for (const LedgerEntry& e : ledger)
    by_key[e.key] = &e;
  Reconciliation out;
  for (const source::FileInfo& f : listed) {
    if (f.key > offset || f.key <= floor) continue;
    auto it = by_key.find(f.key);
    if (it == by_key.end()) {
      if (late_files == LateFiles::kLoad) {
        out.late.push_back(f);
      } else {
        out.skipped.push_back(LedgerEntry{job_id, f.key, f.etag, static_cast<int64_t>(f.size),
                                          FileState::kSkipped, 0, 0, now_us,
                                          "late file (late_files = ignore)"});
      }
      continue;
    }
    const LedgerEntry& e = *it->second;
    if (e.state == FileState::kRetrying) {
      out.late.push_back(f);
    } else if (e.state == FileState::kLoaded && e.error.empty() &&
               (e.etag != f.etag || e.size != static_cast<int64_t>(f.size))) {
      LedgerEntry noted = e;
      noted.error = "changed after it was loaded (now ETag " + f.etag + ", " +
                    std::to_string(f.size) + " bytes); not reloaded";
      out.changed.push_back(std::move(noted));
    }
  }
  return out;
}

}  // namespace millrace::job
