#include "files/reconcile.h"

#include <map>

#include "job/file_states.h"

namespace millrace::files {

Reconciliation Reconcile(const std::vector<source::FileInfo>& listed,
                         const std::vector<job::LedgerEntry>& ledger, const std::string& offset,
                         const std::string& floor, job::LateFiles late_files, int64_t job_id,
                         int64_t now_us) {
  std::map<std::string_view, const job::LedgerEntry*> by_key;
  for (const job::LedgerEntry& e : ledger)
    by_key[e.key] = &e;
  Reconciliation out;
  for (const source::FileInfo& f : listed) {
    if (f.key > offset || f.key <= floor) continue;
    auto it = by_key.find(f.key);
    if (it == by_key.end()) {
      if (late_files == job::LateFiles::kLoad) {
        out.late.push_back(f);
      } else {
        out.skipped.push_back(
            Skipped(job::FileRecorder{job_id, 0, now_us}, f, "late file (late_files = ignore)"));
      }
      continue;
    }
    const job::LedgerEntry& e = *it->second;
    if (LoadsAgain(e)) {
      out.late.push_back(f);
    } else if (ChangedSinceLoaded(e, f)) {
      out.changed.push_back(NotedChanged(e, f));
    }
  }
  return out;
}

}  // namespace millrace::files
