#include "cdc/staged_run.h"

#include <charconv>
#include <memory>
#include <numeric>
#include <unordered_map>

#include "common/thread_annotations.h"
#include "engine/table_function.h"

namespace millrace::cdc {
namespace {

constexpr char kFunction[] = "__millrace_cdc_run";

// The published runs, by token.
class Runs {
 public:
  static Runs& Get() {
    static Runs* runs = new Runs();  // never destroyed: scans may run at exit
    return *runs;
  }
  uint64_t Add(const StagedRun* run, uint64_t connection) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    const uint64_t token = ++last_;
    runs_[token] = {run, connection};
    return token;
  }
  void Remove(uint64_t token) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    runs_.erase(token);
  }
  Result<const StagedRun*> Find(const engine::TableFunctionArgs& args) EXCLUDES(mu_) {
    const std::string token = args.Get("run").value_or("");
    uint64_t key = 0;  // no run has token 0
    std::from_chars(token.data(), token.data() + token.size(), key);
    MutexLock lock(&mu_);
    auto it = runs_.find(key);
    if (it == runs_.end() || it->second.connection != args.connection_id()) {
      return Status::FailedPrecondition(std::string(kFunction) + ": no staged run '" + token +
                                        "' on this connection");
    }
    return it->second.run;
  }

 private:
  struct Entry {
    const StagedRun* run;
    uint64_t connection;
  };
  Mutex mu_;
  uint64_t last_ GUARDED_BY(mu_) = 0;
  std::unordered_map<uint64_t, Entry> runs_ GUARDED_BY(mu_);
};

// Writes row `row` of `run` as row `n` of `out` (c0..cN-1, __seq, __del, __keep).
void WriteRow(const StagedRun& run, engine::OutputChunk& out, size_t n, size_t row) {
  const size_t columns = run.columns();
  for (size_t c = 0; c < columns; ++c) {
    const std::optional<std::string_view> v = run.value(row, c);
    if (v) {
      out.SetString(c, n, *v);
    } else {
      out.SetNull(c, n);
    }
  }
  out.SetInt64(columns, n, run.seq(row));
  out.SetBool(columns + 1, n, run.del(row));
  const std::string& keep = run.keep(row);
  if (keep.empty()) {
    out.SetNull(columns + 2, n);
  } else {
    out.SetString(columns + 2, n, keep);
  }
}

class RunFunction final : public engine::TableFunction {
 public:
  std::string name() const override { return kFunction; }
  std::vector<std::string> parameter_names() const override { return {"run"}; }
  Result<std::vector<engine::ColumnDef>> Bind(const engine::TableFunctionArgs& args) override {
    MR_ASSIGN_OR_RETURN(const StagedRun* run, Runs::Get().Find(args));
    std::vector<engine::ColumnDef> columns;
    for (size_t i = 0; i < run->columns(); ++i)
      columns.push_back({StagedRun::Column(i), engine::TypeId::kVarchar});
    columns.push_back({"__seq", engine::TypeId::kBigInt});
    columns.push_back({"__del", engine::TypeId::kBoolean});
    columns.push_back({"__keep", engine::TypeId::kVarchar});
    return columns;
  }
  Result<std::unique_ptr<engine::TableScan>> Scan(const engine::TableFunctionArgs& args) override {
    MR_ASSIGN_OR_RETURN(const StagedRun* run, Runs::Get().Find(args));
    // The run outlives the statement (StagedRun::Publish): the scan holds its row numbers.
    std::vector<size_t> rows(run->rows());
    std::iota(rows.begin(), rows.end(), size_t{0});
    auto write = [run](engine::OutputChunk& out, size_t n, size_t row) {
      WriteRow(*run, out, n, row);
    };
    return std::unique_ptr<engine::TableScan>(
        std::make_unique<engine::VectorScan<size_t, decltype(write)>>(std::move(rows), write));
  }
};

}  // namespace

Status RegisterStagedRuns(engine::Database& db) {
  return db.RegisterTableFunction(std::make_shared<RunFunction>(),
                                  engine::FunctionVisibility::kInternal);
}

StagedRun::~StagedRun() {
  if (token_ != 0) Runs::Get().Remove(token_);
}

void StagedRun::EndRow(int64_t seq, bool del, std::string keep) {
  seq_.push_back(seq);
  del_.push_back(del ? 1 : 0);
  keep_.push_back(std::move(keep));
}

void StagedRun::Publish(const engine::Connection& conn) {
  if (token_ == 0) token_ = Runs::Get().Add(this, conn.id());
}

std::string StagedRun::FromItem() const {
  return std::string(kFunction) + "(run := '" + std::to_string(token_) + "')";
}

}  // namespace millrace::cdc
