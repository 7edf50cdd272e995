#include "common/logging.h"

#include <gtest/gtest.h>

#include <vector>

namespace millrace {
namespace {

class CaptureSink final : public LogSink {
 public:
  explicit CaptureSink(std::vector<std::string>* lines) : lines_(lines) {}
  void Write(std::string_view line) override { lines_->emplace_back(line); }

 private:
  std::vector<std::string>* lines_;
};

class LoggingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Logger::Default().SetSink(std::make_unique<CaptureSink>(&lines_));
    Logger::Default().SetLevel(LogLevel::kInfo);
  }
  void TearDown() override {
    Logger::Default().SetSink(nullptr);
    Logger::Default().SetLevel(LogLevel::kInfo);
  }
  std::vector<std::string> lines_;
};

TEST_F(LoggingTest, LevelsFilter) {
  MR_LOG(kDebug) << "hidden";
  MR_LOG(kInfo) << "shown " << 42;
  MR_LOG(kError) << "bad";
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_NE(lines_[0].find(" INFO shown 42"), std::string::npos);
  EXPECT_NE(lines_[1].find(" ERROR bad"), std::string::npos);
  Logger::Default().SetLevel(LogLevel::kDebug);
  MR_LOG(kDebug) << "now shown";
  EXPECT_EQ(lines_.size(), 3u);
}

TEST_F(LoggingTest, SecretsAreNeverPrinted) {
  const std::string secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  Logger::Default().AddSecret(secret);
  MR_LOG(kWarning) << "request failed with key " << secret << " and again " << secret;
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0].find(secret), std::string::npos);
  EXPECT_NE(lines_[0].find("with key **** and again ****"), std::string::npos);
  EXPECT_EQ(Logger::Default().Redact("x" + secret + "y"), "x****y");
}

TEST_F(LoggingTest, ShortSecretsAreIgnored) {
  Logger::Default().AddSecret("ab");
  MR_LOG(kInfo) << "table ab";
  EXPECT_NE(lines_[0].find("table ab"), std::string::npos);
}

TEST(LogLevelTest, Parse) {
  EXPECT_EQ(*ParseLogLevel("DEBUG"), LogLevel::kDebug);
  EXPECT_EQ(*ParseLogLevel("warn"), LogLevel::kWarning);
  EXPECT_FALSE(ParseLogLevel("loud").ok());
}

}  // namespace
}  // namespace millrace
