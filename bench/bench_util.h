// Benchmark support: timing, summaries over runs, the result table and the machine description.
//
// Contract
// - A Summary is the median, min and max of one figure over the runs of this invocation; the
//   table puts each figure beside its baseline measured in the same invocation.
// - Figure::Evaluate decides pass/fail against the figure's target from the medians; a figure
//   without a target reports "-".
// - The benchmark is not production code: it reads the real clock directly (it measures it).
// - MeasureVisibility paces writes on a writer thread while the calling thread polls for them;
//   each write's latency runs from its return to the end of the first poll that saw it.
// - Thread-safety: free functions are thread-compatible; Stopwatch is not shared. A Background
//   is owned by the thread that started it.
#pragma once

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"

namespace millrace::bench {

using SteadyTime = std::chrono::steady_clock::time_point;
inline SteadyTime Now() {
  return std::chrono::steady_clock::now();
}
inline double SecondsBetween(SteadyTime from, SteadyTime to) {
  return std::chrono::duration<double>(to - from).count();
}
inline double SecondsSince(SteadyTime from) {
  return SecondsBetween(from, Now());
}

struct Summary {
  double median = 0;
  double min = 0;
  double max = 0;
  int runs = 0;
};
Summary Summarize(std::vector<double> values);
// Each run's value / its baseline (runs in the same order, a baseline 0 skipped), summarized:
// for figures whose every run measures both back to back (see Figure::run_ratios).
Summary SummarizeRunRatios(const std::vector<double>& values, const std::vector<double>& baselines);

// Nearest-rank percentile (p in [0, 100]) of `values`; 0 when empty.
double Percentile(std::vector<double> values, double p);

// The latency percentiles of one run.
struct Latencies {
  double p50 = 0;
  double p99 = 0;
  double max = 0;
  size_t worst = 0;  // the index of the slowest sample
};
Latencies SummarizeLatencies(const std::vector<double>& seconds);

// What a figure is held to.
struct Target {
  enum class Kind {
    kNone,
    kRatioAtLeast,  // value / baseline >= threshold
    kValueAtMost,   // value <= threshold
    kRatioAtMost,   // value / baseline <= threshold (costs: CPU per GB)
  };
  Kind kind = Kind::kNone;
  double threshold = 0;
  std::string text;  // as printed, e.g. "ratio >= 0.8"

  // value / baseline held to `threshold`, printed "ratio >= 0.8" / "ratio <= 1.1".
  static Target RatioAtLeast(double threshold);
  static Target RatioAtMost(double threshold);
};

struct Figure {
  std::string name;  // "CSV throughput"
  std::string unit;  // "MB/s"
  Summary value;
  std::optional<Summary> baseline;
  std::string baseline_what;  // what the baseline is
  Target target;
  std::string note;  // scaling or caveats, shown under the table
  // Each run's own value / baseline, when every run measured the two back to back: Ratio() is
  // then their median, printed with their range. The machine's speed drifts by more than 10%
  // between runs (the same DuckDB INSERT has taken 5.2 and 8.1 core-s a minute apart); a run's
  // two measurements see about the same machine, where the ratio of two medians may set one
  // run's value against another run's baseline.
  std::optional<Summary> run_ratios;

  std::optional<double> Ratio() const;
  // nullopt when the figure has no target.
  std::optional<bool> Passed() const;
};

// "<name> p50", "<name> p99" (held to `p99_target`) and "<name> max" in seconds: the
// percentiles of each run, then their median, min and max over the runs.
std::vector<Figure> LatencyFigures(const std::string& name, const std::vector<Latencies>& runs,
                                   const Target& p99_target, const std::string& note);

// "12.3 (11.9-12.8)" with the unit's precision.
std::string FormatSummary(const Summary& s);
// The table as fixed-width text for the terminal.
std::string RenderText(const std::vector<Figure>& figures);
// The table as Markdown.
std::string RenderMarkdown(const std::vector<Figure>& figures);

// The machine the run happened on: nproc, memory, CPU model, disk, kernel, load average.
struct MachineInfo {
  int cpus = 0;
  uint64_t memory_bytes = 0;
  std::string cpu_model;
  std::string disk;  // device, size and filesystem holding the temporary directory
  std::string kernel;
  std::string load_average;  // /proc/loadavg's first three fields
};
MachineInfo DescribeMachine(const std::string& data_path);
std::string LoadAverage();

// Peak resident set (VmHWM) of a process, in bytes; 0 when it cannot be read.
uint64_t PeakRssBytes(int pid);
// CPU time (user + system, all threads) a process has used so far, in seconds; 0 when it cannot
// be read. CpuSecondsSelf is this process's.
double CpuSeconds(int pid);
double CpuSecondsSelf();
// CpuSeconds of `pid` and of its children running now (a PostgreSQL server's backends).
double CpuSecondsWithChildren(int pid);

// Runs fn(0..count-1) on `threads` threads; returns the first error (the others stop early).
Status ParallelFor(size_t count, int threads, const std::function<Status(size_t)>& fn);

// Runs `fn` on a thread of its own. Failure() is its error as soon as it has failed (OK while
// it runs or once it succeeded), so a wait elsewhere can stop early; Join waits and returns its
// Status. The destructor joins.
class Background {
 public:
  explicit Background(std::function<Status()> fn);
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  Status Failure() const;
  Status Join();

 private:
  Status status_;  // written by the thread before done_ is set
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// `writes` writes, write(i) starting `period` after write(i-1) started, on a writer thread;
// meanwhile the calling thread calls `poll` every `poll_every`, which reports each write it can
// see through seen(i) (any number of times). Returns each write's latency in seconds, from
// write(i) returning to the end of the first poll that saw it. Fails with the first error of
// either side, or DEADLINE_EXCEEDED when some write was still unseen `grace` after the last
// was due.
struct VisibilityProbe {
  int writes = 0;
  std::chrono::milliseconds period{200};
  std::chrono::milliseconds poll_every{5};
  std::chrono::seconds grace{60};
  std::function<Status(int)> write;
  std::function<Status(const std::function<void(int)>& seen)> poll;
};
Result<std::vector<double>> MeasureVisibility(const VisibilityProbe& probe);

// Splits the CPUs this process may run on between an object store and its client until Undo,
// as if the store ran on a machine of its own: every thread of `store_pid` on the first half of
// them (at least one), every thread of `client_pid` and the calling thread on the rest (threads
// started later inherit their starter's CPUs). Undo gives all three those CPUs back and says
// whether it could; the destructor undoes a split not undone, reporting a failure on stderr.
// Apply fails with FAILED_PRECONDITION where this process may run on one CPU only.
class CpuSplit {
 public:
  static Result<std::unique_ptr<CpuSplit>> Apply(int store_pid, int client_pid);
  Status Undo();
  ~CpuSplit();
  CpuSplit(const CpuSplit&) = delete;
  CpuSplit& operator=(const CpuSplit&) = delete;

 private:
  CpuSplit(int store_pid, int client_pid, const cpu_set_t& all)
      : store_pid_(store_pid), client_pid_(client_pid), all_(all) {}
  const int store_pid_;
  const int client_pid_;
  const cpu_set_t all_;  // the CPUs this process could run on before the split
  bool undone_ = false;
};

// "1.23 GiB", "456 MiB" (powers of 1024).
std::string HumanBytes(uint64_t bytes);

}  // namespace millrace::bench
