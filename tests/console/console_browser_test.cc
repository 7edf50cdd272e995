// The web console in a real browser (tests/console/console_browser.js): Debian's chromium,
// headless, driven by playwright-core from npm, against the real `millrace serve`. The
// screenshots of each page land in <build>/tests/console/screenshots.
#include <gtest/gtest.h>

#include <filesystem>

#include "server/mysql_test_util.h"
#include "testing/server_process.h"
#include "testing/test_paths.h"

namespace millrace::console {
namespace {

class ConsoleBrowserTest : public server::SharedServerTest {
 protected:
  static void SetUpTestSuite() { StartServer({{"--threads", "2"}, {}}); }
  static void TearDownTestSuite() { StopServer(); }
};

TEST_F(ConsoleBrowserTest, LogInWatchAJobPauseResumeRetryAndBeRefused) {
  const std::string shots = testing::BinaryPath("tests/console/screenshots");
  std::filesystem::remove_all(shots);
  auto run =
      testing::RunProcess({"node", testing::SourcePath("tests/console/console_browser.js"),
                           testing::NpmPath(""), std::to_string(server().mysql_port()),
                           std::to_string(server().http_port()), data_dir() + "/inbox", shots},
                          {}, std::chrono::seconds(300));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->exit_code, 0) << testing::ProcessFailure("node console_browser.js", *run)
                               << "\nserver log:\n"
                               << server().Log();
  EXPECT_EQ(testing::WithoutTrailingNewline(run->out), "ok");
  for (const char* page : {"01-jobs-empty", "02-jobs", "03-job", "04-job-paused",
                           "05-job-quarantined", "06-job-refused", "07-audit"}) {
    const std::string file = shots + "/" + page + ".png";
    EXPECT_TRUE(std::filesystem::exists(file) && std::filesystem::file_size(file) > 1000) << file;
  }
}

}  // namespace
}  // namespace millrace::console
