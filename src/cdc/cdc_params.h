// The parameters of cdc_stream(...) (Doris's change-data-capture table function), declared
// once: the parser accepts only these keys, and docs/cdc.md lists them.
//
// Contract
// - ParseFromPostgresArgs reads FROM POSTGRES (...) of the database form (the same
//   connection, offset and snapshot keys, then include_tables, exclude_tables,
//   publication_name, slot_name), ParseToDatabaseArgs its TO DATABASE db (...).
// - ParseCdcStreamArgs reads the arguments of one cdc_stream call. "type" must be "postgres";
//   "jdbc_url" (jdbc:postgresql://host[:port]/database[?...]), "user" and "table" are required;
//   "database" overrides the URL's; "driver_url" and "driver_class" are accepted and ignored
//   (Millrace speaks PostgreSQL's protocol through libpq). An unknown key or a bad value is
//   INVALID_ARGUMENT naming the key, the value and what is accepted.
// - Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
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

// cdc_stream(...)'s parameters, FROM POSTGRES (...)'s, and TO DATABASE db (...)'s. A name
// ending in '*' is a prefix.
const std::vector<CdcParamSpec>& CdcStreamParams();
const std::vector<CdcParamSpec>& FromPostgresParams();
const std::vector<CdcParamSpec>& ToDatabaseParams();

struct PgSourceSpec {
  pg::ConnectParams connect;
  std::string schema = "public";
  // cdc_stream: its one table. FROM POSTGRES: include_tables (empty: every table of the
  // schema but exclude_tables).
  std::vector<std::string> tables;
  std::vector<std::string> exclude_tables;
  bool whole_database = false;   // FROM ... TO DATABASE
  std::string publication_name;  // "" : the job's own (see PgChangeSource)
  std::string slot_name;         // "" : the job's own
  bool initial = true;  // "offset": initial reads a snapshot first; latest starts at the log
  int64_t split_size = 8096;
  int parallelism = 1;
};

// TO DATABASE db (...): the PROPERTIES of the tables the job creates (the keys without the
// "table.create.properties." prefix), and Doris's load settings.
struct TargetDatabaseSpec {
  std::map<std::string, std::string> create_properties;
  bool strict_mode = false;
  double max_filter_ratio = 0;
};

Result<PgSourceSpec> ParseCdcStreamArgs(const sql::DorisArgs& args);
Result<PgSourceSpec> ParseFromPostgresArgs(const sql::DorisArgs& args);
Result<TargetDatabaseSpec> ParseToDatabaseArgs(const sql::DorisArgs& args);

struct JdbcTarget {
  std::string host;
  int port = 5432;
  std::string database;
};
// jdbc:postgresql://host[:port][/database][?params]
Result<JdbcTarget> ParseJdbcUrl(std::string_view url);

}  // namespace millrace::cdc
