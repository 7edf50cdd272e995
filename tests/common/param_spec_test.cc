// ParamSpec: one reading of a value for every table of parameters, within its bounds and units,
// with the same error and the same docs row.
#include "common/param_spec.h"

#include <gtest/gtest.h>

namespace millrace {
namespace {

TEST(ParamSpecTest, ValuesAreReadWithTheirUnitsWithinTheirBounds) {
  const ParamSpec seconds{.name = "wait", .type = ParamType::kSeconds, .min = 1, .max = 7200};
  EXPECT_EQ(ParseParamValue(seconds, "90")->integer, 90);
  EXPECT_EQ(ParseParamValue(seconds, "5m")->integer, 300);
  EXPECT_EQ(ParseParamValue(seconds, "2H")->integer, 7200);
  for (const char* bad : {"0", "3h", "-1", "1.5", "m", "", "10x"}) {
    auto parsed = ParseParamValue(seconds, bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().message(), std::string("\"wait\" must be seconds from 1 to 2h "
                                                     "(\"10\", \"10s\", \"5m\", \"1h\"), got '") +
                                             bad + "'");
  }
  const ParamSpec bytes{.name = "size", .type = ParamType::kBytes, .min = 1 << 20};
  EXPECT_EQ(ParseParamValue(bytes, "512MB")->integer, int64_t{512} << 20);
  EXPECT_EQ(ParseParamValue(bytes, "1g")->integer, int64_t{1} << 30);
  EXPECT_FALSE(ParseParamValue(bytes, "1K").ok());
  // No overflow: a size past int64 is refused, not wrapped.
  EXPECT_FALSE(ParseParamValue(bytes, "9999999999T").ok());
  const ParamSpec ratio{.name = "ratio", .type = ParamType::kNumber, .min = 0, .max = 1};
  EXPECT_DOUBLE_EQ(ParseParamValue(ratio, "0.25")->number, 0.25);
  EXPECT_FALSE(ParseParamValue(ratio, "nan").ok());
  EXPECT_FALSE(ParseParamValue(ratio, "1.01").ok());
  const ParamSpec choice{.name = "mode", .type = ParamType::kChoice, .choices = {"a", "b"}};
  EXPECT_EQ(ParseParamValue(choice, "B")->text, "b");
  EXPECT_EQ(ParseParamValue(choice, "c", "MODE").status().message(),
            "\"MODE\" must be one of a, b, got 'c'");
  const ParamSpec flag{.name = "on", .type = ParamType::kBool};
  EXPECT_TRUE(ParseParamValue(flag, "TRUE")->boolean);
  EXPECT_FALSE(ParseParamValue(flag, "maybe").ok());
}

TEST(ParamSpecTest, ValuesOfACallTakeTheDefaultsAndNeedTheRequired) {
  const std::vector<ParamSpec> specs = {
      {.name = "host", .required = true},
      {.name = "port", .type = ParamType::kInt, .default_value = "80", .min = 1, .max = 65535},
      {.name = "key", .secret = true, .aliases = {"password"}},
  };
  ParamValues values;
  ASSERT_TRUE(values.Add(*FindParam(specs, "HOST"), "HOST", "h").ok());
  ASSERT_TRUE(values.Complete(specs).ok());
  EXPECT_EQ(values.Text("host"), "h");
  EXPECT_EQ(values.Int("port"), 80);
  EXPECT_FALSE(values.Given("port"));
  EXPECT_EQ(values.Int("key"), std::nullopt);
  ParamValues missing;
  EXPECT_EQ(missing.Complete(specs).message(), "\"host\" is required");
  EXPECT_TRUE(IsSecretParam(specs, "Password"));
  EXPECT_FALSE(IsSecretParam(specs, "host"));
  EXPECT_EQ(ParamsMarkdown(specs, "parameter"),
            "| parameter | default | accepted | meaning |\n| --- | --- | --- | --- |\n"
            "| `host` | (required) | text |  |\n"
            "| `port` | `80` | an integer from 1 to 65535 |  |\n"
            "| `key` (also `password`) |  | text |  |\n");
}

}  // namespace
}  // namespace millrace
