// Fault record: whether the previous process of this server died of a fault (SIGSEGV, SIGBUS,
// SIGILL, SIGFPE, SIGABRT) or was stopped from outside (SIGKILL, the OOM killer, a power cut).
// A file job needs the difference: a file whose read crashes the process is set aside after a
// few such deaths, while a kill, however often it lands during a read, says nothing about the
// file (files/crash_suspects.h).
//
// Contract
// - TakeFaultRecord(path) reads and removes the record at `path`: the name of the signal the
//   previous process died of, or "" when it left none (it stopped cleanly, or was killed, which
//   nothing can record).
// - InstallFaultRecorder(path) opens `path` now; from then on a fault on any thread appends its
//   signal's name to it (one write(2), async-signal-safe) and the process dies of that signal as
//   it would have without the recorder (default action: a core dump where ulimit allows).
//   Process-wide: a later call replaces the path. It also calls ProtectThisThread.
// - A stack overflow can be recorded only on a thread with an alternate signal stack
//   (ProtectThisThread, for threads Millrace starts); on other threads (the engine's own) the
//   kernel kills the process unrecorded, which then counts as a kill.
#pragma once

#include <string>

#include "common/result.h"

namespace millrace {

Result<std::string> TakeFaultRecord(const std::string& path);
Status InstallFaultRecorder(const std::string& path);
// Gives the calling thread an alternate signal stack (once), so that a fault from a stack
// overflow on it is recorded.
void ProtectThisThread();

}  // namespace millrace
