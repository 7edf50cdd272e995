// CrashSuspects: the files a file job was reading when the server stopped, and what the job does
// with them after the restart, so that a file that crashes the reader (a bug in a reader we do
// not own, or one we do) cannot keep the server down.
//
// Each task marks the files it reads before the first read (JobStore::MarkReading) and
// clears the marks when its load returns, however it returns. A mark found at start-up names a
// file that was being read when the process died. The death was a fault (common/fault_record.h:
// a crash, in our code or in a reader we do not own) or a stop from outside (a kill, the OOM
// killer, a power cut) that says nothing about the file:
// - either way, the files of a batch that was being read are read again one file per task, so
//   that the next fault names its file;
// - a file during whose read alone the process died of a fault kAloneCrashesToQuarantine times
//   is quarantined without being read again, with a reason that says so; ALTER JOB ... RETRY
//   FILE reads it again. Stops from outside are never counted: a kill -9 that lands on the same
//   file's read again and again does not set it aside.
//
// Contract
// - Built from the marks of one job found at start-up (before its first task).
// - BatchSize cuts a batch so that suspects are read alone; BeforeReading gives the marks to
//   write and the files to set aside; Read forgets suspects that were read (or set aside) and
//   did not stop the server.
// - Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "job/job_model.h"
#include "source/file_source.h"

namespace millrace::files {

class CrashSuspects {
 public:
  static constexpr int64_t kAloneCrashesToQuarantine = 2;

  // `left`: the marks found at start-up; `fault`: the previous process died of a fault.
  CrashSuspects(const std::vector<job::ReadingMark>& left, bool fault);

  bool empty() const;

  // How many of `files`, from the front, the next batch takes: all of them when none is a
  // suspect; else the files before the first suspect, or that suspect alone when it comes first.
  size_t BatchSize(const std::vector<source::FileInfo>& files) const;

  struct Reading {
    std::vector<job::ReadingMark> marks;  // to write before the first read
    // Index in `files` -> why it is not read (typed load::BadFile::kCrashedServer).
    std::map<size_t, Status> set_aside;
  };
  // `with_others`: other tasks of the job may be reading meanwhile (max_concurrent_tasks), so
  // none of `files` is read alone: the marks count one file more than `files`.
  Reading BeforeReading(const std::vector<source::FileInfo>& files, int64_t task_id, int64_t now_us,
                        bool with_others) const;

  // `files` were read, or set aside, and the server is still up.
  void Read(const std::vector<source::FileInfo>& files);

 private:
  mutable Mutex mu_;
  // Suspect key -> how many times the process died of a fault while reading it alone.
  std::map<std::string, int64_t> alone_crashes_ GUARDED_BY(mu_);
};

}  // namespace millrace::files
