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

}  // namespace
}  // namespace millrace
