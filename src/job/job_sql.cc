#include "job/job_sql.h"

#include "common/logging.h"

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

 private:
  JobService* service_;
};

}  // namespace

void RegisterJobStatements(sql::Router* router, JobService* service) {
  auto handler = std::make_shared<JobStatementHandler>(service);
  for (const char* verb : {"CREATE", "PAUSE", "RESUME", "DROP", "ALTER"}) {
    router->RegisterStatement({verb, "JOB"}, handler);
  }
}

}  // namespace millrace::job
