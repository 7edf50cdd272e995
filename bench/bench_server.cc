#include "bench_server.h"

#include <algorithm>
#include <thread>

#include "testing/s3rver.h"

namespace millrace::bench {
namespace {

// A Doris property or parameter value in double quotes (values here never hold quotes but JSON).
std::string Quote(const std::string& value) {
  if (value.find('"') == std::string::npos) return "\"" + value + "\"";
  return "'" + value + "'";
}

std::string KeyValueList(const KeyValues& pairs) {
  std::string out;
  for (const auto& [key, value] : pairs) {
    if (!out.empty()) out += ", ";
    out += "\"" + key + "\" = " + Quote(value);
  }
  return out;
}

// The statement every job of the scenarios is: all columns of `source` into `table`.
std::string StreamingJobSql(const std::string& name, const KeyValues& properties,
                            const std::string& table, const std::string& source) {
  std::string sql = "CREATE JOB " + name + " ON STREAMING";
  if (!properties.empty()) sql += " PROPERTIES (" + KeyValueList(properties) + ")";
  return sql + " DO INSERT INTO " + table + " SELECT * FROM " + source;
}

}  // namespace

Result<std::unique_ptr<BenchServer>> BenchServer::Start(const std::string& data_dir,
                                                        const std::vector<std::string>& args) {
  std::unique_ptr<BenchServer> s(new BenchServer());
  MR_ASSIGN_OR_RETURN(s->process_, server::ServerProcess::Start(data_dir, {.args = args}));
  std::string error;
  s->mysql_ = server::ConnectorC(s->process_->mysql_port(), "", 0, nullptr, &error);
  if (s->mysql_ == nullptr) return Status::Unavailable("cannot connect to millrace: " + error);
  return s;
}

Status BenchServer::Execute(const std::string& sql) {
  return Query(sql).status();
}

Result<Rows> BenchServer::Query(const std::string& sql) {
  MYSQL* mysql = mysql_.get();
  if (mysql_query(mysql, sql.c_str()) != 0) {
    return Status::Internal("millrace: " + std::string(mysql_error(mysql)) +
                            " (in: " + sql.substr(0, 200) + ")");
  }
  Rows rows;
  MYSQL_RES* result = mysql_store_result(mysql);
  if (result == nullptr) {
    if (mysql_field_count(mysql) != 0) {
      return Status::Internal("millrace: " + std::string(mysql_error(mysql)));
    }
    return rows;
  }
  const unsigned int columns = mysql_num_fields(result);
  while (MYSQL_ROW row = mysql_fetch_row(result)) {
    std::vector<std::string> values;
    for (unsigned int c = 0; c < columns; ++c)
      values.emplace_back(row[c] ? row[c] : "NULL");
    rows.push_back(std::move(values));
  }
  mysql_free_result(result);
  return rows;
}

Result<int64_t> BenchServer::QueryInt(const std::string& sql) {
  MR_ASSIGN_OR_RETURN(Rows rows, Query(sql));
  if (rows.empty() || rows[0].empty()) return Status::NotFound("no value from: " + sql);
  return std::stoll(rows[0][0]);
}

Status BenchServer::CheckJobRunning(const std::string& job) {
  MR_ASSIGN_OR_RETURN(
      Rows rows,
      Query("SELECT Status, ErrorMsg FROM jobs(\"type\" = \"insert\") WHERE Name = '" + job + "'"));
  if (rows.empty()) return Status::NotFound("job " + job + " does not exist");
  if (rows[0][0] == "PAUSED") {
    return Status::Aborted("job " + job + " paused: " + rows[0][1]);
  }
  return Status::Ok();
}

Result<SteadyTime> BenchServer::WaitForRows(const std::string& table, int64_t rows,
                                            const std::string& job, std::chrono::seconds timeout,
                                            std::chrono::milliseconds poll) {
  return WaitForValue("SELECT count(*) FROM " + table, rows, job, timeout, poll, nullptr,
                      /*paced=*/true);
}

Result<SteadyTime> BenchServer::WaitForValue(const std::string& sql, int64_t want,
                                             const std::string& job, std::chrono::seconds timeout,
                                             std::chrono::milliseconds poll,
                                             const std::function<Status()>& abort, bool paced) {
  const SteadyTime start = Now();
  const SteadyTime deadline = start + timeout;
  SteadyTime last_check = start;
  int64_t seen = 0;
  while (true) {
    if (abort) MR_RETURN_IF_ERROR(abort());
    MR_ASSIGN_OR_RETURN(seen, QueryInt(sql));
    const SteadyTime at = Now();
    if (seen >= want) return at;
    if (at >= deadline) break;
    if (at - last_check >= std::chrono::seconds(1)) {
      MR_RETURN_IF_ERROR(CheckJobRunning(job));
      last_check = at;
    }
    std::chrono::milliseconds wait = poll;
    const double elapsed = SecondsBetween(start, at);
    if (paced && seen > 0 && elapsed > 0) {
      const double eta = static_cast<double>(want - seen) * elapsed / static_cast<double>(seen);
      wait = std::clamp(std::chrono::milliseconds(static_cast<int64_t>(eta * 1000 / 4)), poll,
                        std::max(poll, std::chrono::milliseconds(1000)));
    }
    std::this_thread::sleep_for(wait);
  }
  return Status::DeadlineExceeded(sql + " is " + std::to_string(seen) + ", not yet " +
                                  std::to_string(want) + ", after " +
                                  std::to_string(timeout.count()) + " s");
}

uint64_t BenchServer::PeakRssBytes() const {
  return bench::PeakRssBytes(process_->pid());
}

void BenchServer::Kill() {
  mysql_.reset();
  process_.reset();  // ServerProcess's destructor sends SIGKILL and reaps the child
}

std::string CreateJobSql(const JobSpec& spec) {
  if (!spec.local_path.empty()) {
    KeyValues params = {{"file_path", spec.local_path}, {"format", spec.format}};
    params.insert(params.end(), spec.reader.begin(), spec.reader.end());
    return StreamingJobSql(spec.name, spec.properties, spec.table,
                           "local(" + KeyValueList(params) + ")");
  }
  KeyValues params = {{"uri", spec.uri}, {"format", spec.format}};
  params.insert(params.end(), spec.reader.begin(), spec.reader.end());
  const KeyValues s3 = {{"s3.endpoint", spec.endpoint},
                        {"s3.region", "us-east-1"},
                        {"s3.access_key", spec.access_key},
                        {"s3.secret_key", spec.secret_key},
                        {"use_path_style", "true"}};
  params.insert(params.end(), s3.begin(), s3.end());
  return StreamingJobSql(spec.name, spec.properties, spec.table,
                         "S3(" + KeyValueList(params) + ")");
}

std::string CreateCdcJobSql(const CdcJobSpec& spec) {
  return StreamingJobSql(spec.name, spec.properties, spec.table,
                         "cdc_stream(" + KeyValueList(spec.source) + ")");
}

}  // namespace millrace::bench
