#include "job/sink.h"

namespace millrace::job {
Status UseDatabase(engine::Connection& conn, const std::string& database) {
  return conn.Execute("SET schema = " + engine::QuoteLiteral(database.empty() ? "main" : database));
}

}  // namespace millrace::job
