// Crash tests: the job service runs in a child process that is killed with SIGKILL at random
// moments (and at each fail point) while files keep arriving; after every restart the job
// carries on, and at the end the table holds each file's rows exactly once.
//
// The target is a plain table, a Doris UNIQUE KEY table (rows kept by key: nothing may be
// lost) and a Doris AGGREGATE KEY table whose `hits` column sums a 1 per row (a row loaded
// twice would show as 2); and the plain table loaded by four tasks at once
// (max_concurrent_tasks: batches commit out of order, the offset follows the oldest). After
// every kill the job's offset is checked against the ledger: no file at or below it is missing
// from it.
//
// MILLRACE_CRASH_FILES (default 2000 for the plain table, a fifth of it for the others) and
// MILLRACE_CRASH_SEED size and seed a run; the default keeps `make test` well under two
// minutes, e.g. MILLRACE_CRASH_FILES=20000 for a long manual run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <random>
#include <thread>

#include "job/job_test_util.h"
#include "source/file_source.h"

namespace millrace::job {
namespace {

constexpr int kRowsPerFile = 5;

// The job's target table.
enum class Target { kPlain, kUnique, kAggregate, kPlainFourTasks };

std::string TargetName(const ::testing::TestParamInfo<Target>& info) {
  switch (info.param) {
    case Target::kPlain:
      return "Plain";
    case Target::kUnique:
      return "UniqueKey";
    case Target::kAggregate:
      return "AggregateKey";
    case Target::kPlainFourTasks:
      return "PlainFourTasks";
  }
  return "";
}

// Creates table t for `target` (a Doris table with its definition, as the router makes it).
Status CreateTarget(engine::Connection& conn, Target target) {
  std::string ddl;
  switch (target) {
    case Target::kPlain:
    case Target::kPlainFourTasks:
      return conn.Execute("CREATE TABLE t (file INTEGER, line INTEGER, payload VARCHAR)");
    case Target::kUnique:
      ddl = "CREATE TABLE t (file INT, line INT, payload STRING) UNIQUE KEY(file, line)";
      break;
    case Target::kAggregate:
      ddl =
          "CREATE TABLE t (file INT, line INT, payload STRING REPLACE, hits INT SUM) "
          "AGGREGATE KEY(file, line)";
      break;
  }
  return CreateDorisTable(conn, ddl);
}

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoi(value) : fallback;
}

// Where a child reports its listings. The parent cannot look into the database while a child
// holds it, and a listing starts each task: the lines tell the parent how far a child got, so it
// can kill it at a chosen point of its work instead of after a guessed time.
std::string ListingsPath(const std::string& db_path) {
  return db_path + ".listings";
}

// Where a child counts the faults its source injected (a line each).
std::string FaultsPath(const std::string& db_path) {
  return db_path + ".faults";
}

// One line appended with one write(2) and O_APPEND: a kill -9 never leaves half a line.
void AppendLine(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  [[maybe_unused]] const ssize_t n = ::write(fd, line.data(), line.size());
  ::close(fd);
}

// The job's source, appending "<start_after>\t<last key listed>\n" to a file after each List.
// With `faults`, it also fails about one listing in 20 and one download in 50 the way an
// object store does (UNAVAILABLE), each counted in FaultsPath.
class ReportingSource final : public source::FileSource {
 public:
  ReportingSource(std::unique_ptr<source::FileSource> inner, std::string db_path, bool faults)
      : inner_(std::move(inner)), db_path_(std::move(db_path)), faults_(faults) {}

  Result<source::Listing> List(const source::ListOptions& options) override {
    if (Faulted(20)) return Status::Unavailable("injected: the store answered 503 to a listing");
    auto listing = inner_->List(options);
    if (listing.ok()) {
      AppendLine(ListingsPath(db_path_),
                 options.start_after + "\t" +
                     (listing->files.empty() ? "" : listing->files.back().key) + "\n");
    }
    return listing;
  }
  Result<source::FileInfo> Stat(const std::string& key) override { return inner_->Stat(key); }
  Status Download(const source::FileInfo& file, const std::string& local_path) override {
    if (Faulted(50)) return Status::Unavailable("injected: the connection reset mid-body");
    return inner_->Download(file, local_path);
  }
  std::string Describe() const override { return inner_->Describe(); }

 private:
  // One call in `one_in` (spread by a hash of a call counter and the process id), counted.
  bool Faulted(uint64_t one_in) {
    if (!faults_) return false;
    uint64_t x = calls_.fetch_add(1) + 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(::getpid());
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    if ((x ^ (x >> 31)) % one_in != 0) return false;
    AppendLine(FaultsPath(db_path_), "fault\n");
    return true;
  }

  std::unique_ptr<source::FileSource> inner_;
  const std::string db_path_;
  const bool faults_;
  std::atomic<uint64_t> calls_{0};
};

// Runs the job service over `db_path` until killed. On the first start it creates the table
// and the job. Never returns.
[[noreturn]] void RunChild(const std::string& db_path, const std::string& in_dir,
                           const std::string& fail_points, bool create, Target target,
                           bool faults) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
  auto points = FailPoints::Parse(fail_points);
  if (!points.ok()) _exit(3);
  auto db = engine::Database::Open({.path = db_path, .threads = 2});
  if (!db.ok()) _exit(4);
  JobServiceConfig config;
  std::unique_ptr<catalog::DuckDbCatalog> catalog;
  if (Status opened = UseDuckDbCatalog(db->get(), &catalog, &config); !opened.ok()) {
    std::fprintf(stderr, "child: %s\n", opened.ToString().c_str());
    _exit(5);
  }
  config.clock = Clock::Real();
  config.work_root = db_path + ".work";
  config.fault_record = db_path + ".fault";
  config.fail_points = &*points;
  config.tasks.retry_backoff = std::chrono::milliseconds(10);
  config.make_source =
      [local = load::DefaultSourceFactory(Clock::Real(), std::chrono::milliseconds(50)), db_path,
       faults](
          const load::FileFunctionOptions& options) -> Result<std::unique_ptr<source::FileSource>> {
    MR_ASSIGN_OR_RETURN(std::unique_ptr<source::FileSource> inner, local(options));
    return std::unique_ptr<source::FileSource>(
        std::make_unique<ReportingSource>(std::move(inner), db_path, faults));
  };
  auto service = JobService::Start(std::move(config));
  if (!service.ok()) {
    std::fprintf(stderr, "child: %s\n", service.status().ToString().c_str());
    _exit(5);
  }
  if (create) {
    auto conn = (*db)->Connect();
    if (!conn.ok() || !CreateTarget(**conn, target).ok()) _exit(6);
    auto created = (*service)->Execute(
        "CREATE JOB crash ON STREAMING PROPERTIES (\"max_interval\" = \"1\", " +
        std::string(target == Target::kPlainFourTasks
                        ? "\"s3.max_batch_files\" = \"10\", \"max_concurrent_tasks\" = \"4\""
                        : "\"s3.max_batch_files\" = \"50\"") +
        ") DO INSERT INTO t SELECT CAST(c1 AS INTEGER), CAST(c2 AS INTEGER), c3" +
        std::string(target == Target::kAggregate ? ", 1" : "") + " FROM local(\"file_path\" = \"" +
        in_dir + "/*.csv\", \"column_separator\" = \",\")");
    if (!created.ok()) {
      std::fprintf(stderr, "child: %s\n", created.status().ToString().c_str());
      _exit(7);
    }
  }
  while (true)
    pause();
}

class JobCrashTest : public ::testing::TestWithParam<Target> {
 protected:
  void SetUp() override {
    in_ = dir_.Join("in");
    std::filesystem::create_directories(in_);
  }

  // One line of the listings file.
  struct ListingLine {
    std::string start_after;
    std::string last_listed;  // "" when the listing found nothing
  };

  // Every listing the children reported, oldest first.
  std::vector<ListingLine> Listings() const {
    std::ifstream in(ListingsPath(db_path_), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<ListingLine> lines;
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
      const std::string_view line(text.data() + start, end - start);
      const size_t tab = line.find('\t');
      if (tab == std::string_view::npos) continue;
      lines.push_back({std::string(line.substr(0, tab)), std::string(line.substr(tab + 1))});
    }
    return lines;
  }

  // The listings of the current child so far.
  std::vector<ListingLine> ChildListings() const {
    std::vector<ListingLine> all = Listings();
    all.erase(all.begin(), all.begin() + std::min(all.size(), listings_before_child_));
    return all;
  }

  // True when a child's listing returned `path` or a later key, or started past it.
  bool Listed(const std::string& path) const {
    for (const ListingLine& line : Listings()) {
      if (line.last_listed >= path || line.start_after >= path) return true;
    }
    return false;
  }

  // `faults`: the child's source fails some listings and downloads (ReportingSource).
  pid_t StartChild(const std::string& fail_points, bool create, bool faults = false) {
    listings_before_child_ = Listings().size();
    const pid_t pid = fork();
    if (pid == 0) RunChild(db_path_, in_, fail_points, create, GetParam(), faults);
    return pid;
  }

  static int KillAndReap(pid_t pid) {
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
  }

  std::string DataFilePath(int file) const {
    char name[32];
    std::snprintf(name, sizeof(name), "/f%06d.csv", file);
    return in_ + name;
  }

  void WriteDataFile(int file) {
    std::string content;
    for (int line = 0; line < kRowsPerFile; ++line) {
      content += std::to_string(file) + "," + std::to_string(line) + ",p" +
                 std::to_string(file * 31 + line) + "\n";
    }
    WriteFile(DataFilePath(file), content);
  }

  // Opens the database (no child running) and checks every file's rows are there once.
  void ExpectExactlyOnce(int files) {
    auto db = engine::OpenOrDie({.path = db_path_});
    auto conn = engine::ConnectOrDie(*db);
    EXPECT_EQ(engine::QueryValue(*conn, "SELECT count(*) FROM t"),
              std::to_string(files * kRowsPerFile));
    // Per file: the right number of rows, each line once, and the right payloads.
    EXPECT_EQ(
        engine::QueryValue(*conn,
                           "SELECT count(*) FROM (SELECT file, count(*) AS n, "
                           "count(DISTINCT line) AS lines, "
                           "bool_and(payload = 'p' || (file * 31 + line)) AS payload_ok "
                           "FROM t GROUP BY file) WHERE n = " +
                               std::to_string(kRowsPerFile) + " AND lines = n AND payload_ok"),
        std::to_string(files));
    EXPECT_EQ(engine::QueryValue(*conn, "SELECT count(DISTINCT file) FROM t"),
              std::to_string(files));
    EXPECT_EQ(engine::QueryValue(*conn, "SELECT count(*) FROM __millrace.files"),
              std::to_string(files));
    // Each task id once (a task that committed before a crash is not numbered again).
    EXPECT_EQ(engine::QueryValue(*conn,
                                 "SELECT count(*) FROM (SELECT task_id FROM __millrace.tasks "
                                 "GROUP BY task_id HAVING count(*) > 1)"),
              "0");
    if (GetParam() == Target::kAggregate) {
      EXPECT_EQ(engine::QueryValue(*conn, "SELECT count(*) FROM t WHERE hits <> 1"), "0");
    }
  }

  // With no child running: every file of the first `written` at or below the job's offset is
  // in the ledger (committed), so a restart that lists after the offset misses none.
  void ExpectOffsetBehindEveryUncommittedFile(int written) {
    auto db = engine::OpenOrDie({.path = db_path_});
    auto conn = engine::ConnectOrDie(*db);
    const std::string offset = engine::QueryValue(
        *conn, "SELECT coalesce(current_offset, '') FROM __millrace.jobs WHERE name = 'crash'");
    const std::string key = offset.empty() ? "" : Offset::Parse(offset)->Text(kFileNamePart);
    std::vector<std::string> below;
    for (int f = 0; f < written && DataFilePath(f) <= key; ++f)
      below.push_back(engine::QuoteLiteral(DataFilePath(f)));
    if (below.empty()) return;
    std::string list;
    for (const std::string& k : below)
      list += (list.empty() ? "" : ", ") + k;
    EXPECT_EQ(engine::QueryValue(
                  *conn, "SELECT count(*) FROM __millrace.files WHERE key IN (" + list + ")"),
              std::to_string(below.size()))
        << "offset " << key << " passed a file that is not in the ledger";
  }

  // Waits (with the child running) until the table holds `files` files' rows.
  bool WaitUntilLoaded(int files) {
    // Read through a separate process' view is not possible while the child holds the
    // database, so the child is stopped to look — once it has listed after the last file and
    // found nothing more — and restarted when not yet done.
    const std::string last = DataFilePath(files - 1);
    for (int round = 0; round < 10; ++round) {
      WaitFor([&] {
        for (const ListingLine& line : ChildListings()) {
          if (line.start_after >= last && line.last_listed.empty()) return true;
        }
        return false;
      });
      KillAndReap(child_);
      std::string count;
      {
        auto db = engine::OpenOrDie({.path = db_path_});
        auto conn = engine::ConnectOrDie(*db);
        count = engine::QueryValue(*conn, "SELECT count(*) FROM t");
      }
      if (count == std::to_string(files * kRowsPerFile)) {
        child_ = -1;
        return true;
      }
      child_ = StartChild("", false);
    }
    return false;
  }

  void TearDown() override {
    if (child_ > 0) KillAndReap(child_);
  }

  testing::TempDir dir_;
  std::string in_;
  std::string db_path_ = dir_.Join("db.duckdb");
  pid_t child_ = -1;
  size_t listings_before_child_ = 0;  // Listings().size() when child_ started
};

TEST_P(JobCrashTest, KillNineAtRandomMomentsLosesAndDoublesNothing) {
  const int all_files = EnvInt("MILLRACE_CRASH_FILES", 2000);
  const int files = GetParam() == Target::kPlain            ? all_files
                    : GetParam() == Target::kPlainFourTasks ? all_files / 2
                                                            : all_files / 5;
  std::mt19937 rng(static_cast<unsigned>(EnvInt("MILLRACE_CRASH_SEED", 20261202)));
  std::atomic<int> written{0};
  std::thread producer([&] {
    std::mt19937 prng(7);
    int chunk = 0;
    for (int f = 0; f < files; ++f) {
      WriteDataFile(f);
      written = f + 1;
      // Files keep arriving across many kills: after a random number of them, the next wait
      // until a child has listed them.
      if (--chunk <= 0) {
        EXPECT_TRUE(WaitFor([&] { return Listed(DataFilePath(f)); })) << "file " << f;
        chunk = 20 + static_cast<int>(prng() % 61);
      }
    }
  });
  // Four tasks at once also meet object-store faults (their files arrive in order, so that the
  // offset's bound after each kill is exact: the chaos test with random arrival is JobE2ETest's).
  const bool faults = GetParam() == Target::kPlainFourTasks;
  child_ = StartChild("", true, faults);
  int kills = 0;
  while (written < files || kills < 8) {
    // A random point of the child's work: after it listed a random number of times (0: while
    // it starts up; the first child lists only once it has created the job, which later
    // children need).
    const size_t listings = rng() % 5 + (kills == 0 ? 1 : 0);
    EXPECT_TRUE(WaitFor([&] { return ChildListings().size() >= listings; }))
        << "the child stopped listing";
    KillAndReap(child_);
    ++kills;
    ExpectOffsetBehindEveryUncommittedFile(written);
    child_ = StartChild("", false, faults);
  }
  producer.join();
  ASSERT_TRUE(WaitUntilLoaded(files));
  ExpectExactlyOnce(files);
  std::ifstream counted(FaultsPath(db_path_));
  const auto injected =
      std::count(std::istreambuf_iterator<char>(counted), std::istreambuf_iterator<char>(), '\n');
  if (faults) EXPECT_GT(injected, 0);
  std::printf("killed the job service %d times while loading %d files (%ld store faults)\n", kills,
              files, static_cast<long>(injected));
}

// Each crash window of a task, hit on purpose: the process dies there, and after a restart the
// batch is loaded exactly once.
TEST_P(JobCrashTest, EveryFailPointCrashWindowRecovers) {
  int files = 0;
  bool created = false;
  for (const char* point : {"task.after_download", "task.before_commit", "task.after_commit"}) {
    for (int i = 0; i < 3; ++i)
      WriteDataFile(files++);
    child_ = StartChild(std::string(point) + "=crash", !created);
    created = true;
    int status = 0;
    // The child dies at the fail point by itself.
    ASSERT_TRUE(WaitFor([&] { return waitpid(child_, &status, WNOHANG) == child_; })) << point;
    ASSERT_TRUE(WIFEXITED(status)) << point;
    EXPECT_EQ(WEXITSTATUS(status), 137) << point;
    child_ = StartChild("", false);
    ASSERT_TRUE(WaitUntilLoaded(files)) << point;
    ExpectExactlyOnce(files);
  }
}

// A file that crashes the process whenever it is read (fail point "task.reading" on its key,
// std::abort, stands in for a reader that crashes): the server reads the crashed batch's files
// one at a time, crashes twice more on that file alone (a kill -9 in between is not counted),
// then quarantines it unread, and the job goes on.
TEST_P(JobCrashTest, AFileThatKillsTheReaderIsQuarantinedAfterRestarts) {
  constexpr int kFiles = 6;
  for (int f = 0; f < kFiles; ++f)
    WriteDataFile(f);
  const std::string killer = "task.reading/" + DataFilePath(3) + "=abort";
  // 1: the batch of six; 2 and 3: f000003 alone (the files before it load alone first).
  for (int stop = 1; stop <= 3; ++stop) {
    child_ = StartChild(killer, stop == 1);
    int status = 0;
    ASSERT_TRUE(WaitFor([&] { return waitpid(child_, &status, WNOHANG) == child_; }))
        << "stop " << stop;
    ASSERT_TRUE(WIFSIGNALED(status)) << "stop " << stop;
    EXPECT_EQ(WTERMSIG(status), SIGABRT) << "stop " << stop;
    if (stop == 2) {
      // A kill -9 meanwhile, while f000003 is read alone again, is not counted against it.
      child_ = StartChild("task.reading/" + DataFilePath(3) + "=crash", false);
      ASSERT_TRUE(WaitFor([&] { return waitpid(child_, &status, WNOHANG) == child_; }));
      ASSERT_TRUE(WIFEXITED(status));
      EXPECT_EQ(WEXITSTATUS(status), 137);
    }
  }
  // The fail point stays: were the file read again, the child would die again.
  child_ = StartChild(killer, false);
  const std::string last = DataFilePath(kFiles - 1);
  ASSERT_TRUE(WaitFor([&] {
    for (const ListingLine& line : ChildListings()) {
      if (line.start_after >= last && line.last_listed.empty()) return true;
    }
    return false;
  }));
  EXPECT_EQ(waitpid(child_, nullptr, WNOHANG), 0) << "the fourth start died too";
  KillAndReap(child_);
  child_ = -1;

  auto db = engine::OpenOrDie({.path = db_path_});
  auto conn = engine::ConnectOrDie(*db);
  // Every other file once; the killer's rows none.
  EXPECT_EQ(engine::QueryValue(*conn, "SELECT count(*) FROM t"),
            std::to_string((kFiles - 1) * kRowsPerFile));
  EXPECT_EQ(engine::QueryValue(*conn, "SELECT count(DISTINCT file) FROM t WHERE file <> 3"),
            std::to_string(kFiles - 1));
  EXPECT_EQ(engine::QueryTextRows(*conn,
                                  "SELECT state, error, reason FROM __millrace.files WHERE key = " +
                                      engine::QuoteLiteral(DataFilePath(3)))
                .value(),
            (std::vector<std::vector<std::string>>{
                {"QUARANTINED",
                 "the server crashed 2 times while reading this file alone; it is set aside so "
                 "that the job goes on (ALTER JOB ... RETRY FILE reads it again)",
                 "CRASHED_SERVER"}}));
  EXPECT_EQ(
      engine::QueryValue(*conn, "SELECT count(*) FROM __millrace.files WHERE state = 'LOADED'"),
      std::to_string(kFiles - 1));
  EXPECT_EQ(engine::QueryValue(*conn, "SELECT count(*) FROM __millrace.reading"), "0")
      << "marks are cleared after each read: "
      << engine::QueryValue(*conn,
                            "SELECT string_agg(key || ' task ' || task_id || ' of ' || "
                            "batch_files, '; ') FROM __millrace.reading");
}

INSTANTIATE_TEST_SUITE_P(Targets, JobCrashTest,
                         ::testing::Values(Target::kPlain, Target::kUnique, Target::kAggregate,
                                           Target::kPlainFourTasks),
                         TargetName);

}  // namespace
}  // namespace millrace::job
