// The jobs' Prometheus metrics (job_metrics.h) followed through a job's life: a task that loads
// good rows, filters a bad one and quarantines a bad file; a job paused by a bad file; a manual
// pause; the age of the oldest file not loaded; and the label set as jobs come and go. (The
// object-store families are in job_s3_test.cc, against s3rver.)
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <optional>

#include "common/metrics.h"
#include "job/job_test_util.h"
#include "testing/test_paths.h"

namespace millrace::job {
namespace {

const std::string kCorpus = testing::SourcePath("tests/job/corpus/");

class JobMetricsTest : public LocalJobTest {
 protected:
  void SetUp() override {
    LocalJobTest::SetUp();
    harness_.service().RegisterMetrics(&metrics_);
  }

  // The value of the sample `series` (`name{labels}` as rendered), nullopt when absent.
  std::optional<double> Sample(const std::string& series) {
    const std::string text = "\n" + metrics_.RenderPrometheus();
    const size_t at = text.find("\n" + series + " ");
    if (at == std::string::npos) return std::nullopt;
    return std::stod(text.substr(at + series.size() + 2));
  }
  // How many samples of family `name` (exactly that name) the scrape has.
  size_t SeriesCount(const std::string& name) {
    const std::string text = "\n" + metrics_.RenderPrometheus();
    size_t count = 0;
    for (size_t at = text.find("\n" + name + "{"); at != std::string::npos;
         at = text.find("\n" + name + "{", at + 1)) {
      ++count;
    }
    return count;
  }

  void Stage(const std::string& corpus, const std::string& name) {
    std::filesystem::copy_file(kCorpus + corpus, in_ + "/" + name);
  }
  void Create(const std::string& job, const std::string& dir, const std::string& properties) {
    std::filesystem::create_directories(dir);
    auto created =
        harness_.Run("CREATE JOB " + job + " ON STREAMING PROPERTIES (\"max_interval\" = \"1\"" +
                     properties + ") DO INSERT INTO t SELECT c1, c2 FROM local(\"file_path\" = \"" +
                     dir + "/*\", \"format\" = \"csv\", \"column_separator\" = \",\")");
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  MetricsRegistry metrics_;
};

TEST_F(JobMetricsTest, EachFigureFollowsTheJobThroughSuccessABadFileAndAPause) {
  // good.csv: 2 rows; bad_rows.csv: 3 rows and 1 filtered; wrong_columns.csv: quarantined.
  Stage("good.csv", "a.csv");
  Stage("bad_rows.csv", "b.csv");
  Stage("wrong_columns.csv", "c.csv");
  harness_.Tick();
  Create("m", in_, ", \"on_error\" = \"skip_file\", \"session.insert_max_filter_ratio\" = \"0.5\"");
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.JobColumn("m", "SucceedTaskCount") == "1"; }));
  const std::string m = "{job=\"m\"}";
  EXPECT_EQ(Sample("millrace_job_state{job=\"m\",state=\"RUNNING\"}"), 1);
  EXPECT_EQ(Sample("millrace_job_files_loaded_total" + m), 2);
  EXPECT_EQ(Sample("millrace_job_rows_loaded_total" + m), 5);
  EXPECT_EQ(Sample("millrace_job_rows_filtered_total" + m), 1);
  EXPECT_EQ(Sample("millrace_job_files_quarantined" + m), 1);
  EXPECT_EQ(Sample("millrace_job_files_quarantined_by_reason{job=\"m\",reason=\"READER_ERROR\"}"),
            1);
  EXPECT_GT(Sample("millrace_job_bytes_loaded_total" + m).value_or(0), 0);
  EXPECT_EQ(Sample("millrace_job_tasks_total{job=\"m\",outcome=\"succeeded\"}"), 1);
  EXPECT_EQ(Sample("millrace_job_tasks_total{job=\"m\",outcome=\"failed\"}"), 0);
  EXPECT_EQ(Sample("millrace_job_lag{job=\"m\",unit=\"files\"}"), 0);
  EXPECT_EQ(Sample("millrace_job_lag_bytes" + m), 0);
  EXPECT_EQ(Sample("millrace_job_task_duration_seconds_count" + m), 1);
  EXPECT_EQ(Sample("millrace_job_commit_duration_seconds_count" + m), 1);
  EXPECT_EQ(Sample("millrace_job_commit_duration_seconds_bucket{job=\"m\",le=\"+Inf\"}"), 1);
  // Seconds since the last success grow with the (manual) clock.
  const double committed = Sample("millrace_job_last_success_timestamp_seconds" + m).value_or(0);
  EXPECT_GT(committed, 1.7e9);
  const double since = Sample("millrace_job_seconds_since_last_success" + m).value_or(-1);
  harness_.Tick(std::chrono::seconds(30));
  EXPECT_GE(Sample("millrace_job_seconds_since_last_success" + m).value_or(-1), since + 30);

  // A job whose bad file pauses it (on_error = pause): a failed task, state PAUSED.
  const std::string other = dir_.Join("other");
  std::filesystem::create_directories(other);
  std::filesystem::copy_file(kCorpus + "wrong_columns.csv", other + "/x.csv");
  harness_.Tick();
  Create("p", other, "");
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.JobColumn("p", "Status") == "PAUSED"; }));
  EXPECT_EQ(Sample("millrace_job_state{job=\"p\",state=\"PAUSED\"}"), 1);
  EXPECT_EQ(Sample("millrace_job_tasks_total{job=\"p\",outcome=\"failed\"}"), 1);
  EXPECT_EQ(Sample("millrace_job_task_duration_seconds_count{job=\"p\"}"), 1);
  EXPECT_EQ(Sample("millrace_job_commit_duration_seconds_count{job=\"p\"}"), 0);
  EXPECT_EQ(Sample("millrace_job_files_loaded_total{job=\"p\"}"), 0);
  // Never succeeded: seconds since its creation.
  EXPECT_EQ(Sample("millrace_job_last_success_timestamp_seconds{job=\"p\"}"), 0);
  EXPECT_GE(Sample("millrace_job_seconds_since_last_success{job=\"p\"}").value_or(-1), 0);

  // A manual pause: one state series, the new one.
  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'm'").ok());
  EXPECT_EQ(Sample("millrace_job_state{job=\"m\",state=\"PAUSED\"}"), 1);
  EXPECT_EQ(Sample("millrace_job_state{job=\"m\",state=\"RUNNING\"}"), std::nullopt);
  EXPECT_EQ(Sample("millrace_job_rows_loaded_total" + m), 5);  // counters stay
}

TEST_F(JobMetricsTest, OldestUnloadedFileAgeFollowsTheClockUntilTheFileLoads) {
  // A file last modified an hour before the (manual) clock's now, that the job lists but cannot
  // load (a row with an extra column pauses it): listed, not loaded, for as long as it waits.
  const std::string dir = dir_.Join("slow");
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kCorpus + "wrong_columns.csv", dir + "/x.csv");
  const int64_t modified_us = MicrosSinceEpoch(harness_.clock()->WallNow()) - 3600'000'000;
  const timespec at{.tv_sec = modified_us / 1'000'000, .tv_nsec = (modified_us % 1'000'000) * 1000};
  const timespec times[2] = {at, at};
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir + "/x.csv").c_str(), times, 0), 0);
  harness_.Tick();
  Create("slow", dir, "");
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.JobColumn("slow", "Status") == "PAUSED"; }));
  const std::string age = "millrace_job_oldest_unloaded_file_age_seconds{job=\"slow\"}";
  auto expected = [&] {
    return static_cast<double>(MicrosSinceEpoch(harness_.clock()->WallNow()) - modified_us) / 1e6;
  };
  EXPECT_EQ(Sample("millrace_job_lag{job=\"slow\",unit=\"files\"}"), 1);
  EXPECT_NEAR(Sample(age).value_or(-1), expected(), 1e-6);
  EXPECT_GT(expected(), 3600);
  // The age grows with the clock while the file waits (less than the automatic resume's
  // delay here, so that no task runs meanwhile).
  harness_.Tick(std::chrono::seconds(5));
  EXPECT_NEAR(Sample(age).value_or(-1), expected(), 1e-6);
  EXPECT_GT(expected(), 3605);

  // Once the file is replaced by a loadable one and loaded, nothing waits: 0 (the series stays).
  std::filesystem::remove(dir + "/x.csv");
  std::filesystem::copy_file(kCorpus + "good.csv", dir + "/y.csv");
  harness_.Tick();
  ASSERT_TRUE(harness_.Run("RESUME JOB WHERE jobname = 'slow'").ok());
  ASSERT_TRUE(
      harness_.WaitFor([&] { return harness_.JobColumn("slow", "SucceedTaskCount") == "1"; }));
  EXPECT_EQ(Sample(age), 0);
  EXPECT_EQ(Sample("millrace_job_lag{job=\"slow\",unit=\"files\"}"), 0);
  // Local files are not object-store requests: no such series for a local job.
  EXPECT_EQ(SeriesCount("millrace_job_object_store_requests_total"), 0u);
  EXPECT_EQ(Sample("millrace_job_object_store_retries_total{job=\"slow\"}"), std::nullopt);
  EXPECT_EQ(Sample("millrace_job_object_store_estimated_cost_total{job=\"slow\"}"), std::nullopt);
}

TEST_F(JobMetricsTest, TheLabelSetStaysBoundedAsJobsComeAndGo) {
  for (int round = 0; round < 3; ++round) {
    for (int k = 0; k < 5; ++k)
      Create("j" + std::to_string(round) + "_" + std::to_string(k), dir_.Join("d"), "");
    EXPECT_EQ(SeriesCount("millrace_job_state"), 5u);
    EXPECT_EQ(SeriesCount("millrace_job_tasks_total"), 15u);  // three outcomes a job
    EXPECT_EQ(SeriesCount("millrace_job_task_duration_seconds_count"), 5u);
    EXPECT_EQ(SeriesCount("millrace_job_oldest_unloaded_file_age_seconds"), 5u);
    for (int k = 0; k < 5; ++k) {
      ASSERT_TRUE(harness_
                      .Run("DROP JOB WHERE jobname = 'j" + std::to_string(round) + "_" +
                           std::to_string(k) + "'")
                      .ok());
    }
    // A dropped job's series are gone at the next scrape.
    const std::string text = metrics_.RenderPrometheus();
    EXPECT_EQ(text.find("job=\"j"), std::string::npos) << text;
    EXPECT_EQ(SeriesCount("millrace_job_files_quarantined"), 0u);
    EXPECT_EQ(SeriesCount("millrace_job_oldest_unloaded_file_age_seconds"), 0u);
  }
}

}  // namespace
}  // namespace millrace::job
