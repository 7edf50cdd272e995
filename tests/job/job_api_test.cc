// The jobs API's documents (job_api.h): jobs by name, one job with its tasks, and a file ledger
// of a million entries paged by key.
#include "job/job_api.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/json.h"
#include "job/job_test_util.h"

namespace millrace::job {
namespace {

using nlohmann::json;

class JobApiTest : public LocalJobTest {
 protected:
  void Create(const std::string& name) {
    auto created = harness_.Run(
        "CREATE JOB " + name +
        " ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO INSERT INTO t SELECT c1, c2 FROM "
        "local(\"file_path\" = \"" +
        in_ + "/" + name + "_*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")");
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  json Parse(const Result<std::string>& body) {
    EXPECT_TRUE(body.ok()) << body.status().ToString();
    if (!body.ok()) return json();
    auto parsed = ParseJson(*body);
    EXPECT_TRUE(parsed.ok()) << *body;
    return parsed.ok() ? *parsed : json();
  }
  JobApiContext ctx() { return harness_.service().ApiContext(); }
};

TEST_F(JobApiTest, JobsPageByNameAndAJobShowsItsTasks) {
  WriteFile(in_ + "/b_1.csv", "1,x\n2,y\n");
  harness_.Tick();
  for (const std::string name : {"c", "a", "b"})
    Create(name);
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.JobColumn("b", "SucceedTaskCount") == "1"; }));

  json first = Parse(ApiJobs(ctx(), "root", ApiPage{"", 2}));
  ASSERT_EQ(first["jobs"].size(), 2u);
  EXPECT_EQ(first["jobs"][0]["name"], "a");
  EXPECT_EQ(first["jobs"][1]["name"], "b");
  EXPECT_EQ(first["next"], "b");
  json second = Parse(ApiJobs(ctx(), "root", ApiPage{"b", 2}));
  ASSERT_EQ(second["jobs"].size(), 1u);
  EXPECT_EQ(second["jobs"][0]["name"], "c");
  EXPECT_TRUE(second["next"].is_null());

  json b = Parse(ApiJob(ctx(), "root", "b"));
  EXPECT_EQ(b["status"], "RUNNING");
  EXPECT_EQ(b["succeedTaskCount"], 1);
  EXPECT_EQ(b["loadStatistic"]["scannedRows"], 2);
  EXPECT_EQ(b["lag"]["unit"], "files");
  ASSERT_GE(b["tasks"].size(), 1u);
  EXPECT_EQ(b["tasks"].back()["status"], "SUCCESS");
  EXPECT_EQ(Parse(ApiTasks(ctx(), "root", "b"))["tasks"], b["tasks"]);
  // The console's sparkline and next poll: the ended task's rows; due within max_interval.
  EXPECT_EQ(b["throughput"]["rows"], json::array({2}));
  ASSERT_EQ(b["throughput"]["timeUs"].size(), 1u);
  EXPECT_EQ(b["throughput"]["timeUs"][0], b["tasks"].back()["finishTimeUs"]);
  EXPECT_EQ(first["jobs"][1]["throughput"], b["throughput"]);
  ASSERT_TRUE(harness_.WaitFor(
      [&] { return Parse(ApiJob(ctx(), "root", "b"))["nextPollInSeconds"].is_number(); }));
  const double next_poll = Parse(ApiJob(ctx(), "root", "b"))["nextPollInSeconds"].get<double>();
  EXPECT_GE(next_poll, 0);
  EXPECT_LE(next_poll, 1);
  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'b'").ok());
  EXPECT_TRUE(Parse(ApiJob(ctx(), "root", "b"))["nextPollInSeconds"].is_null());
  EXPECT_EQ(ApiJob(ctx(), "root", "nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ParseApiPage("0", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseApiPage("1001", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseApiPage("12x", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseApiPage("", "k").value().limit, 100);
}

// A ledger of 1,000,000 entries (generated in SQL) read page by page: every page full but the
// last, keys in order, none missing or repeated.
TEST_F(JobApiTest, AMillionFileLedgerPagesByKey) {
  Create("big");
  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'big'").ok());
  const std::string id = harness_.JobColumn("big", "Id");
  constexpr int64_t kFiles = 1000000;
  ASSERT_TRUE(harness_.conn()
                  .Execute("INSERT INTO __millrace.files SELECT " + id +
                           ", 'k' || lpad(i::VARCHAR, 7, '0'), 'e', 10, CASE WHEN i % 1000 = 7 "
                           "THEN 'QUARANTINED' ELSE 'LOADED' END, 1, 3, 0, NULL, NULL FROM range(" +
                           std::to_string(kFiles) + ") t(i)")
                  .ok());
  std::string after;
  int64_t seen = 0;
  int pages = 0;
  std::string previous;
  while (true) {
    json page = Parse(ApiFiles(ctx(), "root", "big", ApiPage{after, 1000}, "", ""));
    const json& files = page["files"];
    ++pages;
    for (const json& f : files) {
      const std::string key = f["key"];
      ASSERT_GT(key, previous) << "page " << pages;
      previous = key;
      ++seen;
    }
    if (page["next"].is_null()) break;
    ASSERT_EQ(files.size(), 1000u) << "page " << pages;
    after = page["next"];
  }
  EXPECT_EQ(seen, kFiles);
  EXPECT_EQ(pages, 1000);
  EXPECT_EQ(previous, "k0999999");

  // The state filter and the search, paged the same way.
  json quarantined =
      Parse(ApiFiles(ctx(), "root", "big", ApiPage{"k0500000", 1000}, "QUARANTINED", ""));
  ASSERT_EQ(quarantined["files"].size(), 500u);
  EXPECT_EQ(quarantined["files"][0]["key"], "k0500007");
  EXPECT_TRUE(quarantined["next"].is_null());
  json searched = Parse(ApiFiles(ctx(), "root", "big", ApiPage{"", 10}, "", "99999"));
  ASSERT_EQ(searched["files"].size(), 10u);
  EXPECT_EQ(searched["files"][0]["key"], "k0099999");
  EXPECT_EQ(ApiFiles(ctx(), "root", "big", ApiPage{}, "LOST", "").status().code(),
            StatusCode::kInvalidArgument);
}

// Filtered rows page by (task, file, line), the file names holding slashes.
TEST_F(JobApiTest, FilteredRowsPageInTaskFileLineOrder) {
  Create("f");
  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'f'").ok());
  const std::string id = harness_.JobColumn("f", "Id");
  // 5 tasks x 2 files x 250 lines, inserted out of order.
  ASSERT_TRUE(harness_.conn()
                  .Execute("INSERT INTO __millrace.filtered_rows SELECT " + id +
                           ", t, '/in/dir/file_' || f || '.csv', l, 'c2', 'v', 'bad value', 0 "
                           "FROM range(5) a(t), range(2) b(f), range(250) c(l) ORDER BY "
                           "random()")
                  .ok());
  std::string after;
  std::vector<std::tuple<int64_t, std::string, int64_t>> seen;
  std::vector<size_t> sizes;
  while (true) {
    json page = Parse(ApiFilteredRows(ctx(), "root", "f", ApiPage{after, 1000}));
    sizes.push_back(page["rows"].size());
    for (const json& r : page["rows"])
      seen.emplace_back(r["taskId"], r["file"], r["line"]);
    if (page["next"].is_null()) break;
    after = page["next"];
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{1000, 1000, 500}));
  ASSERT_EQ(seen.size(), 2500u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end());
  EXPECT_EQ(ApiFilteredRows(ctx(), "root", "f", ApiPage{"x/1", 10}).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace millrace::job
