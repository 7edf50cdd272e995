#include "sql/doris_table_functions.h"

#include <gtest/gtest.h>

#include <memory>

#include "engine/database.h"
#include "engine/engine_test_util.h"
#include "engine/table_function.h"

namespace millrace::sql {
namespace {

bool IsS3OrLocal(std::string_view name) {
  return name == "s3" || name == "local";
}

TEST(DorisCallTest, FindsCallsOutsideQuotesAndComments) {
  const std::string sql =
      "INSERT INTO t SELECT * FROM S3(\"uri\" = \"s3://b/k*.csv\", 'format' = 'csv', "
      "\"Skip_Lines\" = 1, \"ratio\" = -0.5) -- s3(\"no\" = \"call\")\n"
      "UNION ALL SELECT * FROM local(\"file_path\" = \"/d/*.json\") WHERE c = 's3(\"x\" = \"y\")'";
  auto calls = FindDorisCalls(sql, IsS3OrLocal);
  ASSERT_TRUE(calls.ok()) << calls.status().ToString();
  ASSERT_EQ(calls->size(), 2u);
  const DorisCall& s3 = (*calls)[0];
  EXPECT_EQ(s3.name, "s3");
  EXPECT_EQ(sql.substr(s3.begin, 3), "S3(");
  EXPECT_EQ(sql[s3.end - 1], ')');
  EXPECT_EQ(
      s3.args,
      (DorisArgs{
          {"uri", "s3://b/k*.csv"}, {"format", "csv"}, {"skip_lines", "1"}, {"ratio", "-0.5"}}));
  EXPECT_EQ((*calls)[1].name, "local");
  EXPECT_EQ((*calls)[1].args, (DorisArgs{{"file_path", "/d/*.json"}}));
}

TEST(DorisCallTest, ValuesResolveDoubledQuotesAndBackslashEscapes) {
  const std::string sql =
      R"(SELECT * FROM s3("column_separator" = "\t", "enclose" = """", "escape" = "\\", )"
      R"("line_delimiter" = "\n", "like" = "a\%"))";
  auto calls = FindDorisCalls(sql, IsS3OrLocal);
  ASSERT_TRUE(calls.ok()) << calls.status().ToString();
  ASSERT_EQ(calls->size(), 1u);
  EXPECT_EQ((*calls)[0].args.at("column_separator"), "\t");
  EXPECT_EQ((*calls)[0].args.at("enclose"), "\"");
  EXPECT_EQ((*calls)[0].args.at("escape"), "\\");
  EXPECT_EQ((*calls)[0].args.at("line_delimiter"), "\n");
  EXPECT_EQ((*calls)[0].args.at("like"), "a\\%");
}

TEST(DorisCallTest, OtherUsesOfTheNameAreLeftToDuckDb) {
  for (const char* sql : {"SELECT s3 FROM t", "SELECT x.s3(\"a\" = \"b\")",
                          "SELECT * FROM s3(uri := 'x')", "SELECT * FROM s3()"}) {
    auto calls = FindDorisCalls(sql, IsS3OrLocal);
    ASSERT_TRUE(calls.ok()) << sql;
    EXPECT_TRUE(calls->empty()) << sql;
  }
}

TEST(DorisCallTest, MalformedArgumentsNameTheFunctionAndOffset) {
  struct Case {
    const char* sql;
    const char* expected;
  };
  for (const Case& c : {
           Case{"SELECT * FROM s3(\"uri\" \"x\")", "s3(): expected '=' after \"uri\" at offset 23"},
           Case{"SELECT * FROM s3(\"uri\" = )", "s3(): expected a quoted string or a number"},
           Case{"SELECT * FROM s3(\"uri\" = \"a\", \"URI\" = \"b\")",
                "s3(): parameter \"uri\" given twice"},
           Case{"SELECT * FROM s3(\"uri\" = \"a\"", "s3(): unterminated argument list"},
           Case{"SELECT * FROM s3(\"uri\" = \"a\" \"b\")", "s3(): expected ',' or ')'"},
           Case{"SELECT * FROM local(\"file_path\" = \"/x)", "local(): expected a quoted string"},
       }) {
    auto calls = FindDorisCalls(c.sql, IsS3OrLocal);
    ASSERT_FALSE(calls.ok()) << c.sql;
    EXPECT_EQ(calls.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(calls.status().message().find(c.expected), std::string::npos)
        << c.sql << " -> " << calls.status().message();
  }
}

// A real engine table function echoing its parameters, behind NamedParameterExpander.
class EchoFunction final : public engine::TableFunction {
 public:
  std::string name() const override { return "echo"; }
  std::vector<std::string> parameter_names() const override { return {"type", "s3.region"}; }
  Result<std::vector<engine::ColumnDef>> Bind(const engine::TableFunctionArgs& args) override {
    if (!args.Get("type")) return Status::InvalidArgument("echo(): \"type\" is required");
    return std::vector<engine::ColumnDef>{{"k", engine::TypeId::kVarchar},
                                          {"v", engine::TypeId::kVarchar}};
  }
  Result<std::unique_ptr<engine::TableScan>> Scan(const engine::TableFunctionArgs& args) override {
    return std::unique_ptr<engine::TableScan>(std::make_unique<Rows>(args.values()));
  }

 private:
  class Rows final : public engine::TableScan {
   public:
    explicit Rows(std::map<std::string, std::string, std::less<>> values)
        : values_(std::move(values)) {}
    Result<size_t> Fill(engine::OutputChunk& out) override {
      size_t n = 0;
      for (; it_ != values_.end() && n < out.capacity(); ++it_, ++n) {
        out.SetString(0, n, it_->first);
        out.SetString(1, n, it_->second);
      }
      return n;
    }

   private:
    std::map<std::string, std::string, std::less<>> values_;
    std::map<std::string, std::string, std::less<>>::const_iterator it_ = values_.begin();
  };
};

// Keeps a count of live resources, to see when the caller releases them.
class CountedResources final : public StatementResources {
 public:
  explicit CountedResources(int* live) : live_(live) { ++*live_; }
  ~CountedResources() override { --*live_; }

 private:
  int* live_;
};

class ResourceExpander final : public TableFunctionExpander {
 public:
  explicit ResourceExpander(int* live) : live_(live) {}
  Result<Expansion> Expand(const DorisArgs& args) override {
    auto it = args.find("n");
    if (it == args.end()) return Status::InvalidArgument("numbers(): unknown or missing \"n\"");
    return Expansion{"range(" + it->second + ")", std::make_unique<CountedResources>(live_), ""};
  }

 private:
  int* live_;
};

TEST(TableFunctionRegistryTest, ExpandsRegisteredCallsIntoRunnableDuckDbSql) {
  auto db = engine::OpenOrDie({});
  ASSERT_TRUE(db->RegisterTableFunction(std::make_shared<EchoFunction>()).ok());
  auto conn = engine::ConnectOrDie(*db);
  int live = 0;
  TableFunctionRegistry registry;
  registry.Register("ECHO", std::make_shared<NamedParameterExpander>("echo"));
  registry.Register("numbers", std::make_shared<ResourceExpander>(&live));
  EXPECT_NE(registry.Find("Echo"), nullptr);
  EXPECT_EQ(registry.Find("nope"), nullptr);

  auto rewritten = registry.Expand(
      "SELECT e.k, e.v, (SELECT count(*) FROM Numbers(\"n\" = 5)) AS c FROM echo(\"type\" = "
      "\"insert\", \"s3.region\" = 'it''s') e ORDER BY 1");
  ASSERT_TRUE(rewritten.ok()) << rewritten.status().ToString();
  EXPECT_EQ(live, 1);
  EXPECT_EQ(
      engine::QueryRows(*conn, rewritten->sql),
      (std::vector<std::vector<std::string>>{{"s3.region", "it's", "5"}, {"type", "insert", "5"}}));
  rewritten->resources.clear();
  EXPECT_EQ(live, 0);

  auto bad = registry.Expand("SELECT * FROM numbers(\"m\" = 1)");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "numbers(): unknown or missing \"n\"");
}

}  // namespace
}  // namespace millrace::sql
