#include "job/job_sql.h"

#include <algorithm>

#include "common/logging.h"
#include "job/job_statement.h"
#include "sql/statement_support.h"

namespace millrace::job {
namespace {

class JobStatementHandler final : public sql::StatementHandler {
 public:
  explicit JobStatementHandler(JobService* service) : service_(service) {}

  Result<sql::StatementResult> Execute(const sql::StatementContext& ctx) override {
    const std::string database = ctx.session.database().value_or("");
    MR_ASSIGN_OR_RETURN(std::string message,
                        service_->Execute(ctx.sql, database, ctx.session.info()));
    MR_LOG(kDebug) << message;
    return sql::StatementResult();
  }

  // The statement with the S3() call's secrets masked (job_statement.h, MaskSecrets); one that
  // does not parse is shown by its first words only.
  std::string ForLog(std::string_view sql, const std::vector<sql::Token>& tokens) const override {
    Result<JobStatement> parsed = ParseJobStatement(sql);
    std::string insert_sql;
    if (parsed.ok()) {
      if (auto* create = std::get_if<CreateJobStatement>(&*parsed)) insert_sql = create->insert_sql;
      if (auto* alter = std::get_if<AlterJobStatement>(&*parsed)) insert_sql = alter->insert_sql;
    }
    const size_t at = insert_sql.empty() ? std::string_view::npos : sql.find(insert_sql);
    if (parsed.ok() && insert_sql.empty()) return std::string(sql);
    Result<InsertAnalysis> analysis = AnalyzeInsert(insert_sql);
    if (at == std::string_view::npos || !analysis.ok()) {
      const size_t shown = std::min<size_t>(tokens.size(), 3);
      return std::string(sql.substr(0, shown == 0 ? 0 : tokens[shown - 1].end)) +
             " ... (not shown: it does not parse)";
    }
    return std::string(sql.substr(0, at)) + service_->MaskSecrets(insert_sql, *analysis) +
           std::string(sql.substr(at + insert_sql.size()));
  }

 private:
  JobService* service_;
};

// SHOW CREATE JOB name: one row (Job, Create Job).
class ShowCreateJobHandler final : public sql::StatementHandler {
 public:
  explicit ShowCreateJobHandler(JobService* service) : service_(service) {}

  Result<sql::StatementResult> Execute(const sql::StatementContext& ctx) override {
    sql::Cursor c(ctx, 3);
    MR_ASSIGN_OR_RETURN(std::string name, c.Identifier("a job name"));
    MR_RETURN_IF_ERROR(c.ExpectEnd());
    MR_ASSIGN_OR_RETURN(std::string create, service_->ShowCreateJob(name, ctx.session.info()));
    return ctx.session.ExecuteDuckDb(sql::ValuesTable(
        {{"Job", "VARCHAR"}, {"Create Job", "VARCHAR"}}, {{sql::Quote(name), sql::Quote(create)}}));
  }

 private:
  JobService* service_;
};

// VERIFY JOB name [LIMIT n]: the job's source compared with its ledger (job_verify.h), at
// most n files of each kind (default 100; 0: counts only).
class VerifyJobHandler final : public sql::StatementHandler {
 public:
  explicit VerifyJobHandler(JobService* service) : service_(service) {}

  Result<sql::StatementResult> Execute(const sql::StatementContext& ctx) override {
    sql::Cursor c(ctx, 2);
    MR_ASSIGN_OR_RETURN(std::string name, c.Identifier("a job name"));
    int64_t examples = 100;
    if (c.Accept("LIMIT")) {
      MR_ASSIGN_OR_RETURN(examples, c.Integer("the number of files shown of each kind"));
    }
    MR_RETURN_IF_ERROR(c.ExpectEnd());
    MR_ASSIGN_OR_RETURN(std::vector<VerifyRow> found,
                        service_->VerifyJob(name, examples, ctx.session.info()));
    std::vector<std::vector<std::string>> rows;
    for (const VerifyRow& r : found) {
      rows.push_back({sql::Quote(VerifyKindName(r.kind)),
                      r.files ? std::to_string(*r.files) : "NULL",
                      r.file.empty() ? "NULL" : sql::Quote(r.file),
                      r.detail.empty() ? "NULL" : sql::Quote(r.detail)});
    }
    return ctx.session.ExecuteDuckDb(sql::ValuesTable(
        {{"Kind", "VARCHAR"}, {"Files", "BIGINT"}, {"File", "VARCHAR"}, {"Detail", "VARCHAR"}},
        rows));
  }

 private:
  JobService* service_;
};

// EXPLAIN CREATE JOB ...: the dry run's lines (job_dry_run.h) as one result set (Section, Item,
// Detail).
class ExplainCreateJobHandler final : public sql::StatementHandler {
 public:
  explicit ExplainCreateJobHandler(JobService* service) : service_(service), create_(service) {}

  Result<sql::StatementResult> Execute(const sql::StatementContext& ctx) override {
    const std::string database = ctx.session.database().value_or("");
    MR_ASSIGN_OR_RETURN(std::vector<DryRunLine> lines,
                        service_->ExplainCreateJob(ctx.sql.substr(ctx.tokens[1].begin), database,
                                                   ctx.session.info()));
    std::vector<std::vector<std::string>> rows;
    for (const DryRunLine& line : lines)
      rows.push_back({sql::Quote(line.section), sql::Quote(line.item), sql::Quote(line.detail)});
    return ctx.session.ExecuteDuckDb(sql::ValuesTable(
        {{"Section", "VARCHAR"}, {"Item", "VARCHAR"}, {"Detail", "VARCHAR"}}, rows));
  }

  // EXPLAIN and the CREATE JOB statement as CREATE JOB's handler shows it (secrets masked).
  std::string ForLog(std::string_view sql, const std::vector<sql::Token>& tokens) const override {
    const size_t begin = tokens.size() > 1 ? tokens[1].begin : sql.size();
    const std::string_view create = sql.substr(begin);
    return std::string(sql.substr(0, begin)) +
           create_.ForLog(create, sql::SignificantTokens(create));
  }

 private:
  JobService* service_;
  const JobStatementHandler create_;
};

}  // namespace

void RegisterJobStatements(sql::Router* router, JobService* service) {
  auto handler = std::make_shared<JobStatementHandler>(service);
  for (const char* verb : {"CREATE", "PAUSE", "RESUME", "DROP", "ALTER"}) {
    router->RegisterStatement({verb, "JOB"}, handler);
  }
  router->RegisterStatement({"SHOW", "CREATE", "JOB"},
                            std::make_shared<ShowCreateJobHandler>(service));
  router->RegisterStatement({"VERIFY", "JOB"}, std::make_shared<VerifyJobHandler>(service));
  // DuckDB's EXPLAIN has no handler (it goes to DuckDB); this longer match takes only the job.
  router->RegisterStatement({"EXPLAIN", "CREATE", "JOB"},
                            std::make_shared<ExplainCreateJobHandler>(service));
}

}  // namespace millrace::job
