#include "common/flags.h"

#include <gtest/gtest.h>

#include <map>

#include "common/server_config.h"

namespace millrace {
namespace {

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(FlagsTest, FlagsBeatEnvironmentBeatsDefaults) {
  auto env = FakeEnv({{"MILLRACE_MYSQL_PORT", "9999"}, {"MILLRACE_HTTP_PORT", "7777"}});
  auto flags = ParseFlags({"--http-port=1234", "--data-dir", "/tmp/x"}, ServerConfig::Flags(), env);
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  auto config = ServerConfig::FromFlags(*flags, env);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->http_port, 1234);
  EXPECT_EQ(config->mysql_port, 9999);
  EXPECT_EQ(config->data_dir, "/tmp/x");
  EXPECT_EQ(config->bind_address, "127.0.0.1");
  EXPECT_EQ(config->DatabasePath(), "/tmp/x/millrace.duckdb");
}

TEST(FlagsTest, UnknownFlagAndMissingValueAreNamed) {
  auto env = FakeEnv({});
  auto unknown = ParseFlags({"--nope"}, ServerConfig::Flags(), env);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("--nope"), std::string::npos);
  auto missing = ParseFlags({"--bind"}, ServerConfig::Flags(), env);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--bind"), std::string::npos);
}

TEST(FlagsTest, BadPortIsRejected) {
  auto env = FakeEnv({});
  auto flags = ParseFlags({"--mysql-port", "70000"}, ServerConfig::Flags(), env);
  ASSERT_TRUE(flags.ok());
  auto config = ServerConfig::FromFlags(*flags, env);
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("--mysql-port"), std::string::npos);
}

TEST(FlagsTest, PasswordComesFromTheNamedEnvironmentVariable) {
  auto env = FakeEnv({{"MY_PW", "s3cr3t-pass"}});
  auto flags =
      ParseFlags({"--password-env", "MY_PW", "--bind", "0.0.0.0"}, ServerConfig::Flags(), env);
  ASSERT_TRUE(flags.ok());
  auto config = ServerConfig::FromFlags(*flags, env);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->root_password, "s3cr3t-pass");
}

TEST(FlagsTest, NonLoopbackBindWithoutPasswordIsRefused) {
  auto env = FakeEnv({});
  auto flags = ParseFlags({"--bind", "0.0.0.0"}, ServerConfig::Flags(), env);
  ASSERT_TRUE(flags.ok());
  auto config = ServerConfig::FromFlags(*flags, env);
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("0.0.0.0"), std::string::npos);
  EXPECT_NE(config.status().message().find("MILLRACE_ROOT_PASSWORD"), std::string::npos);
}

TEST(FlagsTest, PositionalBoolAndHelp) {
  std::vector<FlagSpec> specs = {{"path-style", "", "", "use path-style URLs", true},
                                 {"region", "AWS_REGION", "us-east-1", "region"}};
  auto flags = ParseFlags({"ls", "s3://b/k", "--path-style", "--help"}, specs,
                          FakeEnv({{"AWS_REGION", "eu-west-1"}}));
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->positional(), (std::vector<std::string>{"ls", "s3://b/k"}));
  EXPECT_TRUE(flags->GetBool("path-style"));
  EXPECT_EQ(flags->GetOr("region", ""), "eu-west-1");
  EXPECT_TRUE(flags->help());
  const std::string help = FlagsHelp(specs);
  EXPECT_NE(help.find("--region"), std::string::npos);
  EXPECT_NE(help.find("[env AWS_REGION]"), std::string::npos);
}

TEST(FlagsTest, RepeatableFlagsKeepEveryValue) {
  auto env = FakeEnv({{"MILLRACE_LOCAL_ROOT", "/from/env:/also/env"}});
  auto flags = ParseFlags({"--local-root", "/a", "--local-root=/b"}, ServerConfig::Flags(), env);
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  EXPECT_EQ(flags->GetAll("local-root"), (std::vector<std::string>{"/a", "/b"}));
  auto from_env = ParseFlags({}, ServerConfig::Flags(), env);
  ASSERT_TRUE(from_env.ok());
  EXPECT_EQ(from_env->GetAll("local-root"), (std::vector<std::string>{"/from/env", "/also/env"}));
  auto config = ServerConfig::FromFlags(*from_env, env);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->local_roots, (std::vector<std::string>{"/from/env", "/also/env"}));
  EXPECT_EQ(config->audit_keep, 100'000);
  EXPECT_EQ(config->InboxPath(), "./var/inbox");
}

TEST(FlagsTest, HttpLoginFlags) {
  auto env = FakeEnv({{"MILLRACE_METRICS_PUBLIC", "1"}});
  auto defaults = ParseFlags({}, ServerConfig::Flags(), FakeEnv({}));
  ASSERT_TRUE(defaults.ok());
  auto config = ServerConfig::FromFlags(*defaults, FakeEnv({}));
  ASSERT_TRUE(config.ok());
  EXPECT_FALSE(config->metrics_public);
  EXPECT_EQ(config->http_session_idle_seconds, 1800);
  auto flags = ParseFlags({"--http-session-idle", "600"}, ServerConfig::Flags(), env);
  ASSERT_TRUE(flags.ok());
  config = ServerConfig::FromFlags(*flags, env);
  ASSERT_TRUE(config.ok());
  EXPECT_TRUE(config->metrics_public);
  EXPECT_EQ(config->http_session_idle_seconds, 600);
  auto too_short = ParseFlags({"--http-session-idle", "5"}, ServerConfig::Flags(), env);
  ASSERT_TRUE(too_short.ok());
  EXPECT_FALSE(ServerConfig::FromFlags(*too_short, env).ok());
}

TEST(FlagsTest, ObjectStorePricesAreDecimalNumbers) {
  auto defaults = ParseFlags({}, ServerConfig::Flags(), FakeEnv({}));
  ASSERT_TRUE(defaults.ok());
  auto config = ServerConfig::FromFlags(*defaults, FakeEnv({}));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->s3_list_price_per_1000, 0.005);  // AWS S3 Standard
  EXPECT_EQ(config->s3_get_price_per_1000, 0.0004);
  auto env = FakeEnv({{"MILLRACE_S3_GET_PRICE_PER_1000", "1e-3"}});
  auto flags = ParseFlags({"--s3-list-price-per-1000=0.0054"}, ServerConfig::Flags(), env);
  ASSERT_TRUE(flags.ok());
  config = ServerConfig::FromFlags(*flags, env);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->s3_list_price_per_1000, 0.0054);
  EXPECT_EQ(config->s3_get_price_per_1000, 0.001);
  for (const char* bad : {"-1", "cheap", "0.1x", "nan", ""}) {
    auto parsed = ParseFlags({"--s3-list-price-per-1000", bad}, ServerConfig::Flags(), env);
    if (!parsed.ok()) continue;  // an empty value may be refused by the parser already
    auto refused = ServerConfig::FromFlags(*parsed, env);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.status().message().find("--s3-list-price-per-1000"), std::string::npos)
        << refused.status().message();
  }
}

}  // namespace
}  // namespace millrace
