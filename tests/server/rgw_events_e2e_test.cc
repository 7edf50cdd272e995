// Against a real Ceph RADOS Gateway: RGW pushes its S3 event notifications to the real
// `millrace serve`, and they wake an S3 job whose max_interval is a minute. The gateway checks
// every signature, so the job's listings and GETs are also checked against a real SigV4 peer.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <string>

#include "server/mysql_test_util.h"
#include "testing/rgw_server.h"
#include "testing/temp_dir.h"
#include "testing/wait_for.h"

namespace millrace::server {
namespace {

using std::chrono::seconds;
using std::chrono::steady_clock;

constexpr char kSecret[] = "rgw-events-secret-0123456789";

// The number of rows of events.t, or -1 while it cannot be read.
int64_t Rows(uint16_t port) {
  auto rows = MariaDbRows(port, "SELECT COUNT(*) FROM events.t");
  if (!rows.ok() || rows->size() != 1 || (*rows)[0].size() != 1) return -1;
  return std::stoll((*rows)[0][0]);
}

// RGW pushes an ObjectCreated event to /api/s3-events for each PUT: the job (max_interval = 60,
// so only the event can explain a load within the minute) loads each new object within
// seconds, a key with a space and a plus included; an object outside the job's glob is counted
// unmatched and loads nothing.
TEST(RgwEventsTest, NotificationsFromCephRgwWakeTheJob) {
  auto rgw = testing::RgwServer::Start();
  ASSERT_TRUE(rgw.ok()) << rgw.status().ToString();
  ASSERT_TRUE((*rgw)->CreateBucket("landing").ok());

  testing::TempDir dir;
  auto server = ServerProcess::Start(dir.path(), {});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->mysql_port();

  auto topic =
      (*rgw)->CreateTopic("millrace", "http://127.0.0.1:" + std::to_string((*server)->http_port()) +
                                          "/api/s3-events?secret=" + kSecret);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  ASSERT_TRUE((*rgw)->NotifyOnCreate("landing", *topic).ok());

  const std::string job =
      "CREATE DATABASE events; CREATE TABLE events.t (id INT, name VARCHAR(20)) "
      "DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1; "
      "CREATE JOB rgw_events ON STREAMING PROPERTIES (\"max_interval\" = \"60\", "
      "\"s3.event_secret\" = \"" +
      std::string(kSecret) +
      "\") DO INSERT INTO events.t SELECT * FROM S3(\"uri\" = \"s3://landing/in/*.csv\", "
      "\"format\" = \"csv\", \"column_separator\" = \",\", \"s3.endpoint\" = \"" +
      (*rgw)->endpoint() + "\", \"s3.region\" = \"us-east-1\", \"s3.access_key\" = \"" +
      testing::RgwServer::kAccessKey + "\", \"s3.secret_key\" = \"" +
      testing::RgwServer::kSecretKey + "\", \"use_path_style\" = \"true\")";
  auto created = MariaDb(port, job);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_EQ(created->exit_code, 0) << created->err;
  // The job lists when created and then once a minute: within the minute, a new object loads
  // only when an event wakes the job.
  const auto job_created = steady_clock::now();

  ASSERT_TRUE((*rgw)->PutObject("landing", "in/a.csv", "1,alpha\n").ok());
  EXPECT_TRUE(testing::WaitFor([&] { return Rows(port) == 1; }, seconds(20))) << Rows(port);
  ASSERT_TRUE((*rgw)->PutObject("landing", "in/b c+d.csv", "2,beta\n3,gamma\n").ok());
  const auto put = steady_clock::now();
  EXPECT_TRUE(testing::WaitFor([&] { return Rows(port) == 3; }, seconds(20))) << Rows(port);
  std::cout << "PUT to rows visible: "
            << std::chrono::duration<double>(steady_clock::now() - put).count() << " s\n";
  ASSERT_TRUE((*rgw)->PutObject("landing", "other/x.csv", "9,outside\n").ok());
  // Well inside the minute after the job's first listing: no poll could have loaded them.
  EXPECT_LT(steady_clock::now() - job_created, seconds(55));

  auto names = MariaDbRows(port, "SELECT name FROM events.t ORDER BY id");
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  ASSERT_EQ(names->size(), 3u);
  EXPECT_EQ((*names)[1][0], "beta");

  auto metrics = HttpGetAsRoot((*server)->http_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status().ToString();
  EXPECT_GE(PrometheusValue(metrics->body, "millrace_events_matched_total"), 2) << metrics->body;
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        auto again = HttpGetAsRoot((*server)->http_port(), "/metrics");
        return again.ok() && PrometheusValue(again->body, "millrace_events_unmatched_total") >= 1;
      },
      seconds(20)));
  EXPECT_EQ(PrometheusValue(metrics->body, "millrace_events_rejected_total"), 0) << metrics->body;
  EXPECT_EQ(Rows(port), 3);
}

}  // namespace
}  // namespace millrace::server
