#include "common/metrics.h"

#include <gtest/gtest.h>

namespace millrace {
namespace {

TEST(MetricsRegistryTest, RendersPrometheusText) {
  MetricsRegistry registry;
  Counter* queries = registry.AddCounter("q_total", "queries run");
  Gauge* open = registry.AddGauge("open", "open things");
  registry.AddCallbackGauge("ratio", "a computed value", [] { return 0.25; });
  queries->Add(3);
  EXPECT_EQ(registry.AddCounter("q_total", "again"), queries);  // names are unique
  open->Add(5);
  open->Add(-2);
  EXPECT_EQ(registry.RenderPrometheus(),
            "# HELP q_total queries run\n# TYPE q_total counter\nq_total 3\n"
            "# HELP open open things\n# TYPE open gauge\nopen 3\n"
            "# HELP ratio a computed value\n# TYPE ratio gauge\nratio 0.25\n");
  EXPECT_GT(ProcessResidentBytes(), 1024.0 * 1024);
}

TEST(MetricsRegistryTest, CollectorsWriteLabelledFamiliesAndHistograms) {
  MetricsRegistry registry;
  registry.AddCounter("own_total", "the registry's own")->Add(1);
  Histogram seconds({0.1, 1});
  for (double v : {0.05, 0.1, 0.5, 3.0})
    seconds.Observe(v);
  std::vector<std::string> jobs = {"a", "we\"ird\\"};
  registry.AddCollector([&](MetricsWriter& w) {
    w.Family("job_rows_total", "rows", "counter");
    for (const std::string& job : jobs)
      w.Sample("job_rows_total", {{"job", job}}, 7);
    w.Family("job_seconds", "durations", "histogram");
    w.Histogram("job_seconds", {{"job", "a"}}, seconds.Read());
  });
  EXPECT_EQ(registry.RenderPrometheus(),
            "# HELP own_total the registry's own\n# TYPE own_total counter\nown_total 1\n"
            "# HELP job_rows_total rows\n# TYPE job_rows_total counter\n"
            "job_rows_total{job=\"a\"} 7\n"
            "job_rows_total{job=\"we\\\"ird\\\\\"} 7\n"
            "# HELP job_seconds durations\n# TYPE job_seconds histogram\n"
            "job_seconds_bucket{job=\"a\",le=\"0.1\"} 2\n"
            "job_seconds_bucket{job=\"a\",le=\"1\"} 3\n"
            "job_seconds_bucket{job=\"a\",le=\"+Inf\"} 4\n"
            "job_seconds_sum{job=\"a\"} 3.6499999999999999\n"
            "job_seconds_count{job=\"a\"} 4\n");
  // The series are the collector's state at each render.
  jobs = {"a"};
  EXPECT_EQ(registry.RenderPrometheus().find("ird"), std::string::npos);
}

}  // namespace
}  // namespace millrace
