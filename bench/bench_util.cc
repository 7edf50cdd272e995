#include "bench_util.h"

#include <sched.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace millrace::bench {

namespace {

// "0.8", "1.1": the threshold as written in the issues.
std::string Threshold(double threshold) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", threshold);
  return buf;
}

}  // namespace

Target Target::RatioAtLeast(double threshold) {
  return {Kind::kRatioAtLeast, threshold, "ratio >= " + Threshold(threshold)};
}

Target Target::RatioAtMost(double threshold) {
  return {Kind::kRatioAtMost, threshold, "ratio <= " + Threshold(threshold)};
}
namespace {

std::string FormatNumber(double v) {
  const double a = std::fabs(v);
  const int decimals = a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

// The first line of `path` starting with `prefix`, with the prefix removed and trimmed.
std::string ProcField(const std::string& path, const std::string& prefix) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::string rest = line.substr(prefix.size());
    const size_t start = rest.find_first_not_of(" \t:");
    return start == std::string::npos ? "" : rest.substr(start);
  }
  return "";
}

// Columns of the table, in order.
struct Row {
  std::string figure, value, baseline, ratio, target, result;
};

std::vector<Row> Rows(const std::vector<Figure>& figures) {
  std::vector<Row> rows;
  rows.push_back(
      {"figure", "value median (min-max)", "baseline median (min-max)", "ratio", "target", "pass"});
  for (const Figure& f : figures) {
    Row row;
    row.figure = f.name;
    row.value = FormatSummary(f.value) + " " + f.unit;
    row.baseline = f.baseline ? FormatSummary(*f.baseline) + " " + f.unit : "-";
    const auto ratio = f.Ratio();
    row.ratio = f.run_ratios ? FormatSummary(*f.run_ratios) + " (runs)"
                : ratio      ? FormatNumber(*ratio)
                             : "-";
    row.target = f.target.kind == Target::Kind::kNone ? "-" : f.target.text;
    const auto passed = f.Passed();
    row.result = !passed ? "-" : *passed ? "PASS" : "FAIL";
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string> Cells(const Row& r) {
  return {r.figure, r.value, r.baseline, r.ratio, r.target, r.result};
}

// Sets the CPUs of every thread of `pid` (0: the calling thread only).
Status PinThreads(int pid, const cpu_set_t& cpus) {
  std::vector<int> tids;
  if (pid == 0) {
    tids.push_back(0);
  } else {
    std::error_code error;
    for (const auto& entry :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
      tids.push_back(std::stoi(entry.path().filename().string()));
    }
    if (error) return Status::IoError("cannot list the threads of process " + std::to_string(pid));
  }
  for (int tid : tids) {
    // A thread that ended since the listing is no longer there to pin.
    if (::sched_setaffinity(tid, sizeof(cpus), &cpus) != 0 && errno != ESRCH) {
      return Status::IoError("sched_setaffinity(" + std::to_string(tid) +
                             "): " + std::strerror(errno));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<CpuSplit>> CpuSplit::Apply(int store_pid, int client_pid) {
  cpu_set_t all;
  if (::sched_getaffinity(0, sizeof(all), &all) != 0) {
    return Status::IoError(std::string("sched_getaffinity: ") + std::strerror(errno));
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &all)) cpus.push_back(cpu);
  }
  if (cpus.size() < 2) return Status::FailedPrecondition("one CPU: nothing to split");
  cpu_set_t store;
  cpu_set_t client;
  CPU_ZERO(&store);
  CPU_ZERO(&client);
  for (size_t i = 0; i < cpus.size(); ++i)
    CPU_SET(cpus[i], i < cpus.size() / 2 ? &store : &client);
  auto split = std::unique_ptr<CpuSplit>(new CpuSplit(store_pid, client_pid, all));
  MR_RETURN_IF_ERROR(PinThreads(store_pid, store));
  MR_RETURN_IF_ERROR(PinThreads(client_pid, client));
  MR_RETURN_IF_ERROR(PinThreads(0, client));
  return split;
}

Status CpuSplit::Undo() {
  undone_ = true;
  for (int pid : {store_pid_, client_pid_, 0})
    MR_RETURN_IF_ERROR(PinThreads(pid, all_));
  return Status::Ok();
}

CpuSplit::~CpuSplit() {
  if (undone_) return;
  // A destructor cannot return the error: said, so that a run measured after it is read with it.
  if (Status s = Undo(); !s.ok()) std::fprintf(stderr, "%s\n", s.ToString().c_str());
}

Summary Summarize(std::vector<double> values) {
  Summary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  s.median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  s.min = values.front();
  s.max = values.back();
  s.runs = static_cast<int>(n);
  return s;
}

Summary SummarizeRunRatios(const std::vector<double>& values,
                           const std::vector<double>& baselines) {
  std::vector<double> ratios;
  for (size_t i = 0; i < values.size() && i < baselines.size(); ++i) {
    if (baselines[i] != 0) ratios.push_back(values[i] / baselines[i]);
  }
  return Summarize(std::move(ratios));
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return values[std::min(index, values.size() - 1)];
}

Latencies SummarizeLatencies(const std::vector<double>& seconds) {
  Latencies l;
  if (seconds.empty()) return l;
  l.p50 = Percentile(seconds, 50);
  l.p99 = Percentile(seconds, 99);
  l.worst = static_cast<size_t>(std::max_element(seconds.begin(), seconds.end()) - seconds.begin());
  l.max = seconds[l.worst];
  return l;
}

std::vector<Figure> LatencyFigures(const std::string& name, const std::vector<Latencies>& runs,
                                   const Target& p99_target, const std::string& note) {
  std::vector<double> p50, p99, max;
  for (const Latencies& l : runs) {
    p50.push_back(l.p50);
    p99.push_back(l.p99);
    max.push_back(l.max);
  }
  return {{.name = name + " p50", .unit = "s", .value = Summarize(p50), .note = note},
          {.name = name + " p99",
           .unit = "s",
           .value = Summarize(p99),
           .target = p99_target,
           .note = note},
          {.name = name + " max", .unit = "s", .value = Summarize(max), .note = note}};
}

std::optional<double> Figure::Ratio() const {
  if (run_ratios)
    return run_ratios->runs > 0 ? std::optional<double>(run_ratios->median) : std::nullopt;
  if (!baseline || baseline->median == 0) return std::nullopt;
  return value.median / baseline->median;
}

std::optional<bool> Figure::Passed() const {
  switch (target.kind) {
    case Target::Kind::kNone:
      return std::nullopt;
    case Target::Kind::kRatioAtLeast: {
      const auto ratio = Ratio();
      return ratio && *ratio >= target.threshold;
    }
    case Target::Kind::kValueAtMost:
      return value.runs > 0 && value.median <= target.threshold;
    case Target::Kind::kRatioAtMost: {
      const auto ratio = Ratio();
      return ratio && *ratio <= target.threshold;
    }
  }
  return std::nullopt;
}

std::string FormatSummary(const Summary& s) {
  if (s.runs == 0) return "n/a";
  if (s.runs == 1) return FormatNumber(s.median);
  return FormatNumber(s.median) + " (" + FormatNumber(s.min) + "-" + FormatNumber(s.max) + ")";
}

std::string RenderText(const std::vector<Figure>& figures) {
  const std::vector<Row> rows = Rows(figures);
  std::vector<size_t> widths(6, 0);
  for (const Row& r : rows) {
    const auto cells = Cells(r);
    for (size_t i = 0; i < cells.size(); ++i)
      widths[i] = std::max(widths[i], cells[i].size());
  }
  std::ostringstream out;
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto cells = Cells(rows[r]);
    for (size_t i = 0; i < cells.size(); ++i) {
      out << cells[i] << std::string(widths[i] - cells[i].size() + 2, ' ');
    }
    out << "\n";
    if (r == 0) {
      size_t total = 0;
      for (size_t w : widths)
        total += w + 2;
      out << std::string(total, '-') << "\n";
    }
  }
  return out.str();
}

std::string RenderMarkdown(const std::vector<Figure>& figures) {
  const std::vector<Row> rows = Rows(figures);
  std::ostringstream out;
  for (size_t r = 0; r < rows.size(); ++r) {
    out << "|";
    for (const std::string& cell : Cells(rows[r]))
      out << " " << cell << " |";
    out << "\n";
    if (r == 0) out << "| --- | --- | --- | --- | --- | --- |\n";
  }
  return out.str();
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

MachineInfo DescribeMachine(const std::string& data_path) {
  MachineInfo m;
  m.cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  const std::string mem = ProcField("/proc/meminfo", "MemTotal");
  m.memory_bytes = mem.empty() ? 0 : std::stoull(mem) * 1024;
  m.cpu_model = ProcField("/proc/cpuinfo", "model name");

  // The filesystem holding the data: device and type from /proc/mounts (longest mount prefix).
  std::ifstream mounts("/proc/mounts");
  std::string device, mount_point, fs_type, rest, best_device, best_type;
  size_t best = 0;
  while (mounts >> device >> mount_point >> fs_type && std::getline(mounts, rest)) {
    if (data_path.rfind(mount_point, 0) == 0 && mount_point.size() >= best) {
      best = mount_point.size();
      best_device = device;
      best_type = fs_type;
    }
  }
  struct statvfs vfs {};
  uint64_t size = 0, free_bytes = 0;
  if (::statvfs(data_path.c_str(), &vfs) == 0) {
    size = static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
    free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  }
  std::string rotational = "unknown";
  const size_t slash = best_device.rfind('/');
  if (slash != std::string::npos) {
    std::ifstream rot("/sys/block/" + best_device.substr(slash + 1) + "/queue/rotational");
    int r = -1;
    if (rot >> r) rotational = "queue/rotational = " + std::to_string(r);
  }
  m.disk = best_device + " (" + best_type + ", " + rotational + ", " + HumanBytes(size) + ", " +
           HumanBytes(free_bytes) + " free)";
  struct utsname u {};
  if (::uname(&u) == 0) m.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
  m.load_average = LoadAverage();
  return m;
}

uint64_t PeakRssBytes(int pid) {
  const std::string hwm = ProcField("/proc/" + std::to_string(pid) + "/status", "VmHWM");
  return hwm.empty() ? 0 : std::stoull(hwm) * 1024;
}

double CpuSeconds(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  // Fields after the command name, which is parenthesized and may hold spaces: utime and stime
  // are fields 14 and 15 of the line, 12 and 13 after ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  uint64_t utime = 0;
  uint64_t stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double CpuSecondsWithChildren(int pid) {
  if (pid <= 0) return 0;  // not known: /proc's entries of parent 0 are the kernel's
  double seconds = CpuSeconds(pid);
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    // "PPid:\t<pid>" in the child's status.
    const std::string parent = ProcField(entry.path().string() + "/status", "PPid");
    if (!parent.empty() && std::stoi(parent) == pid) seconds += CpuSeconds(std::stoi(name));
  }
  return seconds;
}

double CpuSecondsSelf() {
  return CpuSeconds(static_cast<int>(::getpid()));
}

Status ParallelFor(size_t count, int threads, const std::function<Status(size_t)>& fn) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<Status> results(static_cast<size_t>(threads));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      while (!failed.load()) {
        const size_t i = next.fetch_add(1);
        if (i >= count) return;
        Status status = fn(i);
        if (!status.ok()) {
          results[static_cast<size_t>(t)] = std::move(status);
          failed.store(true);
        }
      }
    });
  }
  for (std::thread& w : workers)
    w.join();
  for (const Status& status : results)
    MR_RETURN_IF_ERROR(status);
  return Status::Ok();
}

Background::Background(std::function<Status()> fn)
    : thread_([this, fn = std::move(fn)] {
        status_ = fn();
        done_.store(true);
      }) {}

Background::~Background() {
  if (thread_.joinable()) thread_.join();
}

Status Background::Failure() const {
  return done_.load() ? status_ : Status::Ok();
}

Status Background::Join() {
  if (thread_.joinable()) thread_.join();
  return status_;
}

Result<std::vector<double>> MeasureVisibility(const VisibilityProbe& probe) {
  const size_t writes = static_cast<size_t>(probe.writes);
  std::vector<SteadyTime> written(writes);
  std::vector<SteadyTime> visible(writes);
  std::vector<bool> seen(writes, false);
  std::atomic<bool> stop{false};  // the watcher gave up: the rest of the writes are moot
  const SteadyTime start = Now();
  Background writer([&]() -> Status {
    for (size_t i = 0; i < writes && !stop.load(); ++i) {
      std::this_thread::sleep_until(start + static_cast<int>(i) * probe.period);
      MR_RETURN_IF_ERROR(probe.write(static_cast<int>(i)));
      written[i] = Now();
    }
    return Status::Ok();
  });

  // Every write is tracked on its own: nothing relies on writes becoming visible in order.
  size_t seen_count = 0;
  const SteadyTime deadline = start + probe.writes * probe.period + probe.grace;
  Status poll_status;
  while (seen_count < writes && Now() < deadline && writer.Failure().ok()) {
    std::vector<int> reported;
    poll_status = probe.poll([&](int index) { reported.push_back(index); });
    // A write is visible once the query that saw it has returned.
    const SteadyTime at = Now();
    for (int index : reported) {
      const size_t i = static_cast<size_t>(index);
      if (index < 0 || i >= writes || seen[i]) continue;
      seen[i] = true;
      visible[i] = at;
      ++seen_count;
    }
    if (!poll_status.ok()) break;
    std::this_thread::sleep_for(probe.poll_every);
  }
  stop.store(true);
  MR_RETURN_IF_ERROR(writer.Join());
  MR_RETURN_IF_ERROR(poll_status);
  if (seen_count < writes) {
    return Status::DeadlineExceeded("only " + std::to_string(seen_count) + " of " +
                                    std::to_string(writes) + " writes became visible");
  }
  std::vector<double> latencies;
  for (size_t i = 0; i < writes; ++i) {
    latencies.push_back(SecondsBetween(written[i], visible[i]));
  }
  return latencies;
}

std::string HumanBytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
  return buf;
}

}  // namespace millrace::bench
