#include "engine/table_function.h"

#include <gtest/gtest.h>

#include <atomic>

#include "engine/database.h"
#include "engine/engine_test_util.h"

namespace millrace::engine {
namespace {

// numbers(upto := 'N', label := 'x'): rows (n, label_n, n is even, n/2, ts) for n in [0, N).
class NumbersFunction final : public TableFunction {
 public:
  std::string name() const override { return "numbers"; }
  std::vector<std::string> parameter_names() const override { return {"upto", "label"}; }

  Result<std::vector<ColumnDef>> Bind(const TableFunctionArgs& args) override {
    MR_RETURN_IF_ERROR(Upto(args).status());
    return std::vector<ColumnDef>{{"n", TypeId::kBigInt},
                                  {"label", TypeId::kVarchar},
                                  {"even", TypeId::kBoolean},
                                  {"half", TypeId::kDouble},
                                  {"ts", TypeId::kTimestamp}};
  }

  Result<std::unique_ptr<TableScan>> Scan(const TableFunctionArgs& args) override {
    ++scans_;
    MR_ASSIGN_OR_RETURN(int64_t upto, Upto(args));
    return std::unique_ptr<TableScan>(
        std::make_unique<Numbers>(upto, args.Get("label").value_or("n")));
  }

  int scans() const { return scans_; }

 private:
  static Result<int64_t> Upto(const TableFunctionArgs& args) {
    auto upto = args.Get("upto");
    if (!upto) return Status::InvalidArgument("numbers() needs \"upto\"");
    try {
      return std::stoll(*upto);
    } catch (const std::exception&) {
      return Status::InvalidArgument("numbers(): \"upto\" must be an integer, got '" + *upto + "'");
    }
  }

  class Numbers final : public TableScan {
   public:
    Numbers(int64_t upto, std::string label) : upto_(upto), label_(std::move(label)) {}
    Result<size_t> Fill(OutputChunk& out) override {
      size_t rows = 0;
      for (; rows < out.capacity() && next_ < upto_; ++rows, ++next_) {
        out.SetInt64(0, rows, next_);
        if (next_ % 10 == 9) {
          out.SetNull(1, rows);
        } else {
          out.SetString(1, rows, label_ + "_" + std::to_string(next_));
        }
        out.SetBool(2, rows, next_ % 2 == 0);
        out.SetDouble(3, rows, static_cast<double>(next_) / 2);
        out.SetTimestamp(4, rows, next_ * 1'000'000);
      }
      return rows;
    }

   private:
    int64_t upto_;
    std::string label_;
    int64_t next_ = 0;
  };

  std::atomic<int> scans_{0};
};

TEST(TableFunctionTest, QueriedFromSqlWithWhereOrderAndAggregates) {
  auto db = OpenOrDie({});
  auto numbers = std::make_shared<NumbersFunction>();
  ASSERT_TRUE(db->RegisterTableFunction(numbers).ok());
  auto conn = ConnectOrDie(*db);

  EXPECT_EQ(QueryRows(*conn,
                      "SELECT n, label, even, half, ts FROM numbers(upto := '5000', label := 'x') "
                      "WHERE n BETWEEN 3000 AND 3002 ORDER BY n DESC"),
            (std::vector<std::vector<std::string>>{
                {"3002", "x_3002", "true", "1501.0", "1970-01-01 00:50:02"},
                {"3001", "x_3001", "false", "1500.5", "1970-01-01 00:50:01"},
                {"3000", "x_3000", "true", "1500.0", "1970-01-01 00:50:00"}}));
  EXPECT_EQ(QueryValue(*conn, "SELECT count(*) FROM numbers(upto := '5000') WHERE label IS NULL"),
            "500");
  EXPECT_EQ(QueryValue(*conn, "SELECT sum(n) FROM numbers(upto := '5000') WHERE even"), "6247500");
  // Joins and subqueries work like on any table.
  ASSERT_TRUE(conn->Execute("CREATE TABLE t AS SELECT range AS n FROM range(10)").ok());
  EXPECT_EQ(QueryValue(*conn, "SELECT count(*) FROM t JOIN numbers(upto := '5') USING (n)"), "5");
  EXPECT_GE(numbers->scans(), 4);
}

TEST(TableFunctionTest, VisibleFromEveryConnection) {
  auto db = OpenOrDie({});
  auto early = ConnectOrDie(*db);
  ASSERT_TRUE(db->RegisterTableFunction(std::make_shared<NumbersFunction>()).ok());
  auto late = ConnectOrDie(*db);
  EXPECT_EQ(QueryValue(*early, "SELECT count(*) FROM numbers(upto := '3')"), "3");
  EXPECT_EQ(QueryValue(*late, "SELECT count(*) FROM numbers(upto := '4')"), "4");
}

TEST(TableFunctionTest, BindErrorsReachTheCallerIntact) {
  auto db = OpenOrDie({});
  ASSERT_TRUE(db->RegisterTableFunction(std::make_shared<NumbersFunction>()).ok());
  auto conn = ConnectOrDie(*db);
  Status missing = conn->Execute("SELECT * FROM numbers()");
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("numbers() needs \"upto\""), std::string::npos)
      << missing.message();
  Status bad = conn->Execute("SELECT * FROM numbers(upto := 'many')");
  EXPECT_NE(bad.message().find("got 'many'"), std::string::npos) << bad.message();
  Status unknown = conn->Execute("SELECT * FROM numbers(upto := '1', colour := 'red')");
  EXPECT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("colour"), std::string::npos) << unknown.message();
}

}  // namespace
}  // namespace millrace::engine
