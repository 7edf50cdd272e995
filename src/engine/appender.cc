#include "engine/appender.h"

#include <duckdb.h>

#include "engine/duckdb_status.h"

namespace millrace::engine {
namespace {

duckdb_appender AsAppender(void* p) {
  return static_cast<duckdb_appender>(p);
}

}  // namespace

Result<std::unique_ptr<Appender>> Appender::Open(Connection& conn, const std::string& catalog,
                                                 const std::string& schema,
                                                 const std::string& table) {
  duckdb_appender appender = nullptr;
  const duckdb_state state =
      duckdb_appender_create_ext(static_cast<duckdb_connection>(conn.conn_), catalog.c_str(),
                                 schema.c_str(), table.c_str(), &appender);
  if (state == DuckDBError) {
    Status error = StatusFromDuckDBMessage(appender != nullptr ? duckdb_appender_error(appender)
                                                               : "cannot append");
    if (appender != nullptr) duckdb_appender_destroy(&appender);
    return error.WithContext("appending to " + schema + "." + table);
  }
  return std::unique_ptr<Appender>(new Appender(appender));
}

Appender::~Appender() {
  duckdb_appender appender = AsAppender(appender_);
  if (appender != nullptr) duckdb_appender_destroy(&appender);
}

Status Appender::Check(int state, const char* what) {
  if (state != DuckDBError) return Status::Ok();
  duckdb_error_data error = duckdb_appender_error_data(AsAppender(appender_));
  Status status =
      StatusFromDuckDB(duckdb_error_data_error_type(error), duckdb_error_data_message(error));
  duckdb_destroy_error_data(&error);
  return status.WithContext(what);
}

Status Appender::AppendString(std::string_view value) {
  return Check(duckdb_append_varchar_length(AsAppender(appender_), value.data(), value.size()),
               "appending a value");
}

Status Appender::AppendNull() {
  return Check(duckdb_append_null(AsAppender(appender_)), "appending NULL");
}

Status Appender::AppendInt64(int64_t value) {
  return Check(duckdb_append_int64(AsAppender(appender_), value), "appending a value");
}

Status Appender::AppendBool(bool value) {
  return Check(duckdb_append_bool(AsAppender(appender_), value), "appending a value");
}

Status Appender::EndRow() {
  return Check(duckdb_appender_end_row(AsAppender(appender_)), "ending a row");
}

Status Appender::Flush() {
  return Check(duckdb_appender_flush(AsAppender(appender_)), "flushing appended rows");
}

}  // namespace millrace::engine
