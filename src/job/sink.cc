#include "job/sink.h"

namespace millrace::job {

Status UseDatabase(engine::Connection& conn, const std::string& database) {
  return conn.Execute("SET schema = " + engine::QuoteLiteral(database.empty() ? "main" : database));
}

Status SinkTransaction::EmptyTarget(const std::string& table) {
  return connection().Execute("DELETE FROM " + table);
}

Result<Sink*> JobSinkSlot::Get(const JobRecord& job) {
  MutexLock lock(&mu_);
  if (sink_ == nullptr) {
    MR_ASSIGN_OR_RETURN(sink_, make_(job));
  }
  return sink_.get();
}

}  // namespace millrace::job
