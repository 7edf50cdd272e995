// The parameters of cdc_stream(...) (Doris's change-data-capture table function), declared
// once: the parser accepts only these keys, and docs/cdc.md lists them.
//
// Contract
// - ParseCdcStreamArgs reads the arguments of one cdc_stream call. "type" must be "postgres";
//   "jdbc_url" (jdbc:postgresql://host[:port]/database[?...]), "user" and "table" are required;
//   "database" overrides the URL's; "driver_url" and "driver_class" are accepted and ignored
//   (Millrace speaks PostgreSQL's protocol through libpq). An unknown key or a bad value is
//   INVALID_ARGUMENT naming the key, the value and what is accepted.
// - Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "pg/pg_connection.h"
#include "sql/doris_table_functions.h"

namespace millrace::cdc {

struct CdcParamSpec {
  std::string_view name;
  std::string_view default_value;  // "" when none
  std::string_view description;
  bool required = false;
  bool secret = false;
};

const std::vector<CdcParamSpec>& CdcStreamParams();

struct PgSourceSpec {
  pg::ConnectParams connect;
  std::string schema = "public";
  std::string table;
  bool initial = true;  // "offset": initial reads a snapshot first; latest starts at the log
  int64_t split_size = 8096;
  int parallelism = 1;
};

Result<PgSourceSpec> ParseCdcStreamArgs(const sql::DorisArgs& args);

struct JdbcTarget {
  std::string host;
  int port = 5432;
  std::string database;
};
// jdbc:postgresql://host[:port][/database][?params]
Result<JdbcTarget> ParseJdbcUrl(std::string_view url);

}  // namespace millrace::cdc
