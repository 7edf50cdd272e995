// Reconciliation of a file job: which files at or below the offset still need loading.
//
// A listing keyed after the offset finds new files in O(new files); a file that appears with a
// name below the offset (a late file) is found only by listing what is below it and comparing
// with the ledger. That comparison is this pure function; the file source lists and records
// (file_job_source.h).
//
// Contract
// - Input: files listed in key order, the job's ledger, its offset key and its floor (keys at
//   or below the floor are never late: the job was told to start after it). Listed files
//   above the offset or at/below the floor are ignored.
// - late: files the ledger lacks (late_files = load) and files marked RETRYING, in key order.
// - skipped: files the ledger lacks when late_files = ignore, as SKIPPED ledger entries.
// - changed: LOADED files whose ETag or size differ from the ledger's, as their ledger entry
//   with a note in `error`; they are reported, not reloaded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "job/job_model.h"
#include "job/job_properties.h"
#include "source/file_source.h"

namespace millrace::files {

struct Reconciliation {
  std::vector<source::FileInfo> late;
  std::vector<job::LedgerEntry> skipped;
  std::vector<job::LedgerEntry> changed;
};

Reconciliation Reconcile(const std::vector<source::FileInfo>& listed,
                         const std::vector<job::LedgerEntry>& ledger, const std::string& offset,
                         const std::string& floor, job::LateFiles late_files, int64_t job_id,
                         int64_t now_us);

}  // namespace millrace::files
