// `millrace s3 ls|cat|presign`, run as the built binary against s3rver.
#include <gtest/gtest.h>

#include <sstream>

#include "s3/s3_client.h"
#include "s3/sigv4.h"
#include "testing/s3rver.h"
#include "testing/test_paths.h"

namespace millrace::s3 {
namespace {

using millrace::testing::ProcessResult;
using millrace::testing::S3rver;

constexpr char kBucket[] = "data";

// The test machine's own AWS settings must not leak into the runs.
const std::vector<std::string> kCleanEnv = {
    "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_SESSION_TOKEN=", "AWS_ENDPOINT_URL=",
    "AWS_REGION="};

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

class S3CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = S3rver::Start({kBucket});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    auto client = S3Client::Create(server_->Config(), Clock::Real());
    ASSERT_TRUE(client.ok());
    client_ = std::move(*client);
  }

  void Put(const std::string& key, std::string_view data) {
    ASSERT_TRUE(server_->PutObject(kBucket, key, data).ok());
  }

  // Runs `millrace s3 <args>` with the server's endpoint and, unless `env` says otherwise,
  // its credentials as flags.
  ProcessResult Run(std::vector<std::string> args, bool credential_flags = true,
                    std::vector<std::string> env = {}) {
    std::vector<std::string> argv = {testing::MillraceBinary(), "s3"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--endpoint", server_->endpoint(), "--path-style"});
    if (credential_flags) {
      argv.insert(argv.end(),
                  {"--access-key", S3rver::kAccessKey, "--secret-key", S3rver::kSecretKey});
    }
    std::vector<std::string> full_env = kCleanEnv;
    full_env.insert(full_env.end(), env.begin(), env.end());
    auto result = millrace::testing::RunProcess(argv, full_env);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : ProcessResult{};
  }

  // The line ls prints for an object, from the client's own view of it.
  std::string ExpectedLine(const std::string& key) {
    auto info = client_->HeadObject(kBucket, key);
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    char size[32];
    std::snprintf(size, sizeof(size), "%10llu", static_cast<unsigned long long>(info->size));
    return FormatUtc(info->last_modified) + " " + size + " " + key;
  }

  std::unique_ptr<S3rver> server_;
  std::unique_ptr<S3Client> client_;
};

TEST_F(S3CliTest, LsPrintsLikeTheAwsCli) {
  Put("dir/a.csv", "1,2\n");
  Put("dir/b b.csv", std::string(1234, 'x'));
  Put("dir/sub/c.csv", "");
  Put("dir/notes.txt", "n");
  Put("elsewhere/d.csv", "d");

  const ProcessResult all = Run({"ls", "s3://data/dir/"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(Lines(all.out), (std::vector<std::string>{
                                ExpectedLine("dir/a.csv"), ExpectedLine("dir/b b.csv"),
                                ExpectedLine("dir/notes.txt"), ExpectedLine("dir/sub/c.csv")}));
  EXPECT_EQ(all.err, "");
  // "2026-01-02 03:04:05       1234 key": the size right-aligned in ten columns.
  EXPECT_EQ(Lines(all.out)[1].substr(19), "       1234 dir/b b.csv");

  const ProcessResult csv = Run({"ls", "s3://data/dir/*.csv"});
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(Lines(csv.out),
            (std::vector<std::string>{ExpectedLine("dir/a.csv"), ExpectedLine("dir/b b.csv")}));

  const ProcessResult deep = Run({"ls", "s3://data/**.csv"});
  EXPECT_EQ(Lines(deep.out).size(), 4u) << deep.out;

  const ProcessResult bucket = Run({"ls", "s3://data"});
  EXPECT_EQ(bucket.exit_code, 0) << bucket.err;
  EXPECT_EQ(Lines(bucket.out).size(), 5u) << bucket.out;

  const ProcessResult none = Run({"ls", "s3://data/nothing-here/"});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out, "");
}

TEST_F(S3CliTest, LsPaginatesAndTakesCredentialsFromTheEnvironment) {
  std::vector<std::pair<std::string, std::string>> objects;
  for (int i = 0; i < 1005; ++i)
    objects.emplace_back("many/" + std::to_string(100000 + i), "v");
  ASSERT_TRUE(server_->PutObjects(kBucket, objects).ok());
  const ProcessResult listed = Run({"ls", "s3://data/many/"}, /*credential_flags=*/false,
                                   {"AWS_ACCESS_KEY_ID=S3RVER", "AWS_SECRET_ACCESS_KEY=S3RVER"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  const std::vector<std::string> lines = Lines(listed.out);
  ASSERT_EQ(lines.size(), 1005u);
  EXPECT_TRUE(lines.front().ends_with(" many/100000"));
  EXPECT_TRUE(lines.back().ends_with(" many/101004"));

  // A key the server does not know is refused (so the environment's key was sent: s3rver
  // would serve an anonymous request); the message never shows the secret.
  const ProcessResult refused =
      Run({"ls", "s3://data/many/"}, false,
          {"AWS_ACCESS_KEY_ID=WRONG", "AWS_SECRET_ACCESS_KEY=secret-never-printed-5e"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.out.size(), 0u);
  EXPECT_EQ(Lines(refused.err).size(), 1u) << refused.err;
  EXPECT_NE(refused.err.find("InvalidAccessKeyId"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("secret-never-printed"), std::string::npos);
}

TEST_F(S3CliTest, CatStreamsTheObjectToStdout) {
  std::string binary;
  for (int i = 0; i < (1 << 20) + 3; ++i)
    binary += static_cast<char>((i * 131) % 256);
  Put("bin/blob", binary);
  const ProcessResult cat = Run({"cat", "s3://data/bin/blob"});
  EXPECT_EQ(cat.exit_code, 0) << cat.err;
  EXPECT_TRUE(cat.out == binary) << "got " << cat.out.size() << " bytes";

  const ProcessResult missing = Run({"cat", "s3://data/bin/none at all"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.out, "");
  ASSERT_EQ(Lines(missing.err).size(), 1u) << missing.err;
  EXPECT_TRUE(missing.err.starts_with("millrace s3 cat: ")) << missing.err;
  EXPECT_NE(missing.err.find("NoSuchKey"), std::string::npos);
  EXPECT_NE(missing.err.find("bin/none at all"), std::string::npos);
}

TEST_F(S3CliTest, PresignIsReproducibleWithAtAndFetchableWithCurl) {
  Put("p/report.csv", "x,y\n");
  const std::vector<std::string> args = {"presign", "s3://data/p/report.csv", "--expires", "600",
                                         "--at",    "20260102T030405Z"};
  const ProcessResult first = Run(args);
  const ProcessResult second = Run(args);
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, second.out);
  auto expected = client_->PresignGetObject(kBucket, "p/report.csv", std::chrono::seconds(600),
                                            ParseAmzDate("20260102T030405Z").value());
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(first.out, *expected + "\n");
  EXPECT_NE(first.out.find("X-Amz-Expires=600&"), std::string::npos);
  EXPECT_NE(first.out.find("X-Amz-Date=20260102T030405Z&"), std::string::npos);

  const ProcessResult now = Run({"presign", "s3://data/p/report.csv"});
  ASSERT_EQ(now.exit_code, 0) << now.err;
  auto fetched =
      millrace::testing::RunProcess({"curl", "-sS", "-f", now.out.substr(0, now.out.size() - 1)});
  ASSERT_TRUE(fetched.ok());
  EXPECT_EQ(fetched->exit_code, 0) << fetched->err;
  EXPECT_EQ(fetched->out, "x,y\n");

  const ProcessResult bad_at = Run({"presign", "s3://data/p/report.csv", "--at", "yesterday"});
  EXPECT_EQ(bad_at.exit_code, 1);
  EXPECT_NE(bad_at.err.find("yesterday"), std::string::npos);
  const ProcessResult bad_expiry = Run({"presign", "s3://data/p/report.csv", "--expires", "0"});
  EXPECT_EQ(bad_expiry.exit_code, 1);
  EXPECT_NE(bad_expiry.err.find("--expires"), std::string::npos);
}

TEST_F(S3CliTest, HelpAndUsageErrors) {
  const ProcessResult help = Run({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* word : {"ls", "cat", "presign", "--endpoint", "--path-style", "--access-key",
                           "--secret-key", "--session-token", "AWS_ACCESS_KEY_ID", "--at"}) {
    EXPECT_NE(help.out.find(word), std::string::npos) << word;
  }
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{},
                                             {"copy", "s3://data/k"},
                                             {"ls"},
                                             {"cat", "s3://data/"},
                                             {"cat", "/local/path"},
                                             {"ls", "s3://data/a", "s3://data/b"},
                                             {"ls", "s3://data/", "--no-such-flag"}}) {
    const ProcessResult run = Run(args);
    EXPECT_EQ(run.exit_code, 2) << ::testing::PrintToString(args);
    EXPECT_EQ(Lines(run.err).size(), 1u) << run.err;
    EXPECT_EQ(run.out, "");
  }
  auto top = millrace::testing::RunProcess({testing::MillraceBinary(), "--help"});
  ASSERT_TRUE(top.ok());
  EXPECT_NE(top->out.find("s3 "), std::string::npos);
}

}  // namespace
}  // namespace millrace::s3
