#include "files/crash_suspects.h"

#include "load/bad_file.h"

namespace millrace::files {

CrashSuspects::CrashSuspects(const std::vector<job::ReadingMark>& left, bool fault) {
  for (const job::ReadingMark& mark : left)
    alone_crashes_[mark.key] = mark.alone_crashes + (fault && mark.batch_files == 1 ? 1 : 0);
}

bool CrashSuspects::empty() const {
  MutexLock lock(&mu_);
  return alone_crashes_.empty();
}

size_t CrashSuspects::BatchSize(const std::vector<source::FileInfo>& files) const {
  MutexLock lock(&mu_);
  if (alone_crashes_.empty()) return files.size();
  for (size_t i = 0; i < files.size(); ++i) {
    if (alone_crashes_.count(files[i].key) > 0) return i == 0 ? 1 : i;
  }
  return files.size();
}

CrashSuspects::Reading CrashSuspects::BeforeReading(const std::vector<source::FileInfo>& files,
                                                    int64_t task_id, int64_t now_us,
                                                    bool with_others) const {
  MutexLock lock(&mu_);
  Reading reading;
  for (size_t i = 0; i < files.size(); ++i) {
    const auto suspect = alone_crashes_.find(files[i].key);
    const int64_t crashes = suspect == alone_crashes_.end() ? 0 : suspect->second;
    if (crashes >= kAloneCrashesToQuarantine) {
      reading.set_aside[i] = load::BadFileError(
          Status::Aborted("the server crashed " + std::to_string(crashes) +
                          " times while reading this file alone; it is set aside so that the "
                          "job goes on (ALTER JOB ... RETRY FILE reads it again)"),
          load::BadFile::kCrashedServer);
      continue;
    }
    const auto together = static_cast<int64_t>(files.size()) + (with_others ? 1 : 0);
    reading.marks.push_back(job::ReadingMark{files[i].key, task_id, together, crashes, now_us});
  }
  return reading;
}

void CrashSuspects::Read(const std::vector<source::FileInfo>& files) {
  MutexLock lock(&mu_);
  if (alone_crashes_.empty()) return;
  for (const source::FileInfo& f : files)
    alone_crashes_.erase(f.key);
}

}  // namespace millrace::files
