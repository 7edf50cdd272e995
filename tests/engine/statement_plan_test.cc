#include "engine/statement_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "engine/engine_test_util.h"
#include "testing/temp_dir.h"

namespace millrace::engine {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;

class StatementPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = OpenOrDie({});
    conn_ = ConnectOrDie(*db_);
    ASSERT_TRUE(conn_
                    ->Execute("CREATE SCHEMA s; CREATE TABLE s.t (a INTEGER, b VARCHAR); "
                              "CREATE TABLE s.u (a INTEGER); "
                              "CREATE VIEW s.v AS SELECT a FROM s.t WHERE a > 0")
                    .ok());
  }

  PlanFacts Plan(const std::string& sql) {
    auto plan = PlanStatement(*conn_, sql);
    EXPECT_TRUE(plan.ok()) << sql << ": " << plan.status().ToString();
    return plan.ok() ? *plan : PlanFacts();
  }

  std::unique_ptr<Database> db_;
  std::unique_ptr<Connection> conn_;
};

TEST_F(StatementPlanTest, ParseSelectNamesRelationsAsWrittenWithoutBinding) {
  auto parsed = ParseSelect(*conn_,
                            "WITH c AS (SELECT * FROM s.u) SELECT lower(b), count(*) FROM s.v, c, "
                            "'/no/such/file.csv', read_text('/etc/passwd') GROUP BY ALL");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_TRUE(parsed->has_value());
  const ParsedFacts& facts = **parsed;
  EXPECT_THAT(facts.relations, Contains(RelationName{"s", "v"}));
  EXPECT_THAT(facts.relations, Contains(RelationName{"s", "u"}));
  EXPECT_THAT(facts.relations, Contains(RelationName{"", "c"}));
  // A file name in FROM is a relation to DuckDB's parser: the caller finds it in no catalog.
  EXPECT_THAT(facts.relations, Contains(RelationName{"", "/no/such/file.csv"}));
  EXPECT_THAT(facts.cte_names, ElementsAre("c"));
  EXPECT_THAT(facts.table_functions, ElementsAre("read_text"));
  EXPECT_THAT(facts.functions, Contains("lower"));
  EXPECT_THAT(facts.functions, Contains("count_star"));
}

TEST_F(StatementPlanTest, ShowsInsideAQueryAreReportedAsWhatTheyRead) {
  auto parsed =
      ParseSelect(*conn_, "SELECT * FROM (SHOW ALL TABLES), (SUMMARIZE s.u), (DESCRIBE s.t)");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_TRUE(parsed->has_value());
  EXPECT_THAT((*parsed)->table_functions, ElementsAre("show_describe"));
  EXPECT_THAT((*parsed)->relations, Contains(RelationName{"s", "u"}));
  EXPECT_THAT((*parsed)->relations, Contains(RelationName{"s", "t"}));
}

TEST_F(StatementPlanTest, UpsertsAreMergesOfTheirTable) {
  ASSERT_TRUE(conn_->Execute("CREATE TABLE s.pk (id INTEGER PRIMARY KEY, n INTEGER)").ok());
  for (const char* sql :
       {"INSERT INTO s.pk VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n",
        "INSERT INTO s.pk VALUES (1, 1) ON CONFLICT DO NOTHING",
        "INSERT OR REPLACE INTO s.pk VALUES (1, 1)"}) {
    const PlanFacts plan = Plan(sql);
    ASSERT_TRUE(plan.target.has_value()) << sql;
    EXPECT_EQ(plan.target->operation, "MERGE") << sql;
    EXPECT_TRUE(plan.target->writes_rows());
    EXPECT_EQ(plan.target->object, (RelationName{"s", "pk"}));
  }
}

TEST_F(StatementPlanTest, ParseSelectIsNulloptForOtherStatements) {
  for (const char* sql : {"INSERT INTO s.u VALUES (1)", "COPY s.t TO '/tmp/x.csv'",
                          "ATTACH '/tmp/x.db'", "SET threads = 1"}) {
    auto parsed = ParseSelect(*conn_, sql);
    ASSERT_TRUE(parsed.ok()) << sql;
    EXPECT_FALSE(parsed->has_value()) << sql;
  }
}

TEST_F(StatementPlanTest, RenameRelationsRewritesEveryNameTheQueryReads) {
  ASSERT_TRUE(conn_
                  ->Execute("CREATE SCHEMA r; CREATE TABLE r.t (a INTEGER); "
                            "INSERT INTO r.t VALUES (7); INSERT INTO s.t VALUES (1, 'x')")
                  .ok());
  std::vector<std::string> seen;
  auto to_r = [&](WrittenRelation* relation) {
    seen.push_back(relation->catalog + "." + relation->schema + "." + relation->name);
    if (relation->schema != "s" || relation->name != "t") return false;
    relation->schema = "r";
    return true;
  };
  auto renamed =
      RenameRelations(*conn_,
                      "SELECT count(*), (SELECT max(a) FROM s.t) FROM s.t JOIN s.u USING (a) "
                      "WHERE a IN (SELECT a FROM s.t)",
                      to_r);
  ASSERT_TRUE(renamed.ok()) << renamed.status().ToString();
  ASSERT_TRUE(renamed->has_value());
  EXPECT_EQ(std::count(seen.begin(), seen.end(), "..u"), 0);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), ".s.t"), 3);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), ".s.u"), 1);
  EXPECT_EQ(**renamed,
            "SELECT count_star(), (SELECT max(a) FROM r.t) FROM r.t INNER JOIN s.u USING (a) "
            "WHERE (a = ANY(SELECT a FROM r.t))");
  auto rows = conn_->Query("SELECT (SELECT max(a) FROM s.t), * FROM (" + **renamed + ")");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();

  // Nothing to rename, or not a query: nullopt, and the caller runs what it had.
  auto same = RenameRelations(*conn_, "SELECT * FROM s.u", to_r);
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(same->has_value());
  auto insert = RenameRelations(*conn_, "INSERT INTO s.t SELECT * FROM s.t", to_r);
  ASSERT_TRUE(insert.ok());
  EXPECT_FALSE(insert->has_value());
}

TEST_F(StatementPlanTest, PlanSeesThroughViewsAndNamesWhatIsWritten) {
  PlanFacts insert = Plan("INSERT INTO s.u SELECT a + 1 FROM s.v");
  EXPECT_EQ(insert.root, "LOGICAL_INSERT");
  ASSERT_TRUE(insert.target.has_value());
  EXPECT_EQ(insert.target->operation, "INSERT");
  EXPECT_EQ(insert.target->object, (RelationName{"s", "u"}));
  EXPECT_THAT(insert.scans, ElementsAre(RelationName{"s", "t"}));
  EXPECT_THAT(insert.functions, Contains("+"));

  PlanFacts update = Plan("UPDATE s.u SET a = 1 WHERE a IN (SELECT a FROM s.t)");
  EXPECT_EQ(update.target->operation, "UPDATE");
  EXPECT_THAT(update.scans, Contains(RelationName{"s", "t"}));
  EXPECT_THAT(update.scans, Contains(RelationName{"s", "u"}));

  PlanFacts ctas = Plan("CREATE TABLE s.w AS SELECT * FROM range(3)");
  EXPECT_EQ(ctas.target->operation, "CREATE");
  EXPECT_EQ(ctas.target->kind, "TABLE");
  EXPECT_EQ(ctas.target->object, (RelationName{"s", "w"}));
  EXPECT_THAT(ctas.table_functions, ElementsAre("range"));
}

TEST_F(StatementPlanTest, PlanOfDdlNamesItsObject) {
  PlanFacts drop = Plan("DROP TABLE s.t");
  EXPECT_EQ(drop.target->operation, "DROP");
  EXPECT_EQ(drop.target->kind, "TABLE");
  EXPECT_EQ(drop.target->object, (RelationName{"s", "t"}));
  PlanFacts drop_schema = Plan("DROP SCHEMA s CASCADE");
  EXPECT_EQ(drop_schema.target->kind, "SCHEMA");
  EXPECT_EQ(drop_schema.target->object.schema, "s");
  PlanFacts alter = Plan("ALTER TABLE s.t ADD COLUMN c INTEGER");
  EXPECT_EQ(alter.target->operation, "ALTER");
  EXPECT_EQ(alter.target->kind, "TABLE");
  EXPECT_EQ(alter.target->object, (RelationName{"s", "t"}));
  PlanFacts view = Plan("CREATE VIEW s.x AS SELECT * FROM s.u, read_csv('/etc/passwd')");
  EXPECT_EQ(view.target->kind, "VIEW");
  EXPECT_EQ(view.target->object, (RelationName{"s", "x"}));
  // The view's query is carried unbound: its names come from its parse tree.
  EXPECT_THAT(view.parsed.relations, Contains(RelationName{"s", "u"}));
  EXPECT_THAT(view.parsed.table_functions, ElementsAre("read_csv"));
  PlanFacts index = Plan("CREATE INDEX i ON s.t (a)");
  EXPECT_EQ(index.target->kind, "INDEX");
  EXPECT_EQ(index.target->object, (RelationName{"s", "t"}));
  EXPECT_EQ(Plan("CREATE SCHEMA z").target->kind, "SCHEMA");
}

TEST_F(StatementPlanTest, PlanOfForbiddenStatementsShowsWhatTheyAre) {
  EXPECT_EQ(Plan("COPY s.t TO '/tmp/x.csv'").root, "LOGICAL_COPY_TO_FILE");
  EXPECT_EQ(Plan("INSTALL httpfs").root, "LOGICAL_LOAD");
  EXPECT_EQ(Plan("SET threads = 1").root, "LOGICAL_SET");
  EXPECT_THAT(Plan("FORCE CHECKPOINT").table_functions, ElementsAre("force_checkpoint"));
}

TEST_F(StatementPlanTest, UnserializablePlansAreNotSupported) {
  auto plan = PlanStatement(*conn_, "EXPLAIN SELECT 1");
  EXPECT_EQ(plan.status().code(), StatusCode::kNotSupported) << plan.status().ToString();
  auto two = PlanStatement(*conn_, "SELECT 1; SELECT 2");
  EXPECT_EQ(two.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(StatementPlanTest, PrepareOneRefusesSeveralStatementsAndReportsTheKind) {
  auto one = conn_->PrepareOne("COPY s.t TO '/tmp/never.csv'");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ((*one)->kind(), StatementKind::kCopy);
  EXPECT_EQ(StatementKindName(StatementKind::kAttach), "ATTACH");
  auto two = conn_->PrepareOne("SELECT 1; DROP TABLE s.t");
  EXPECT_EQ(two.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(two.status().message().find("found 2"), std::string::npos);
  // Nothing ran.
  EXPECT_EQ(QueryValue(*conn_, "SELECT count(*) FROM s.t"), "0");
}

// The careful load numbers records with row_number() OVER () while the server runs with
// preserve_insertion_order off (files/batch_loader.h): the numbers must follow the file.
TEST(RowOrderTest, RowNumberFollowsAParallelCsvReadWithInsertionOrderOff) {
  millrace::testing::TempDir dir;
  const std::string csv = dir.Join("seq.csv");
  {
    std::ofstream out(csv);
    out << "a,b\n";
    for (int i = 0; i < 400'000; ++i)
      out << i << ",x" << (i % 97) << "\n";
  }
  auto db = OpenOrDie({.threads = 4, .preserve_insertion_order = false});
  auto conn = ConnectOrDie(*db);
  EXPECT_EQ(QueryValue(*conn,
                       "SELECT count(*) FROM (SELECT row_number() OVER () AS rn, a FROM "
                       "read_csv('" +
                           csv + "')) WHERE rn <> a + 1"),
            "0");
}

}  // namespace
}  // namespace millrace::engine
