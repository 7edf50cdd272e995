// The parameters of cdc_stream(...) (Doris's change-data-capture table function) and of
// FROM <source> (...) TO DATABASE db (...), declared once: the parser accepts only these keys and
// reads their values as declared, and docs/cdc.md and docs/cdc_mysql.md hold their tables (a
// test keeps them in sync).
//
// Contract
// - ParseFromPostgresArgs reads FROM POSTGRES (...) of the database form (the same
//   connection, offset and snapshot keys, then include_tables, exclude_tables,
//   publication_name, slot_name), ParseToDatabaseArgs its TO DATABASE db (...).
// - ParseCdcStreamArgs reads the arguments of one cdc_stream call of "type" = "postgres";
//   "jdbc_url" (jdbc:postgresql://host[:port]/database[?...]), "user" and "table" are required;
//   "database" overrides the URL's; "driver_url" and "driver_class" are accepted and ignored
//   (Millrace speaks PostgreSQL's protocol through libpq). An unknown key or a bad value is
//   INVALID_ARGUMENT naming the call, the key, the value and what is accepted.
// - ParseMysqlArgs reads either form's arguments for "type" = "mysql": "jdbc_url"
//   (jdbc:mysql://host[:port][/database]), "user", the database (the URL's or "database"),
//   "table" or include_tables/exclude_tables, "offset" (initial, latest, a binlog position as
//   {"file": "...", "pos": "..."} or file:pos, or a MariaDB GTID position), "server_id".
// - Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/param_spec.h"
#include "common/result.h"
#include "mysql/binlog_stream.h"
#include "mysql/mysql_connection.h"
#include "pg/pg_connection.h"
#include "sql/doris_table_functions.h"

namespace millrace::cdc {

// A change stream's parameters are ParamSpecs (common/param_spec.h): name, default, docs line,
// whether it is required and whether it is a secret.

enum class SourceType { kPostgres, kMysql };
// The "type" of a cdc_stream call or FROM clause; INVALID_ARGUMENT naming the types otherwise.
Result<SourceType> ParseSourceType(const sql::DorisArgs& args);

// cdc_stream(...)'s parameters, FROM <source> (...)'s, and TO DATABASE db (...)'s. A name
// ending in '*' is a prefix.
const std::vector<ParamSpec>& CdcStreamParams(SourceType type);
const std::vector<ParamSpec>& FromSourceParams(SourceType type);
const std::vector<ParamSpec>& ToDatabaseParams();
// Every table above, for masking the secrets of a job's statement (job::MaskSecrets).
std::vector<const std::vector<ParamSpec>*> ChangeStreamParamTables();
// The parameters FROM <source> (...) takes beyond cdc_stream's connection ones.
const std::vector<ParamSpec>& FromSourceOnlyParams(SourceType type);
// A table of `specs` as Markdown (for docs/cdc.md and docs/cdc_mysql.md).
std::string CdcParamsMarkdown(const std::vector<ParamSpec>& specs);

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

struct MysqlSourceSpec {
  mysql::ConnectParams connect;  // connect.database: the source database (MySQL's schema)
  // cdc_stream: its one table. FROM MYSQL: include_tables (empty: every base table of the
  // database but exclude_tables).
  std::vector<std::string> tables;
  std::vector<std::string> exclude_tables;
  bool whole_database = false;
  enum class Start { kInitial, kLatest, kPosition };
  Start start = Start::kInitial;
  mysql::BinlogStart position;  // kPosition: where the stream starts
  uint32_t server_id = 0;       // 0: the job's own (MysqlChangeSource::ServerId)
  int64_t split_size = 8096;
  int parallelism = 1;
};

Result<PgSourceSpec> ParseCdcStreamArgs(const sql::DorisArgs& args);
Result<PgSourceSpec> ParseFromPostgresArgs(const sql::DorisArgs& args);
// `whole_database`: FROM MYSQL (...), else cdc_stream(...).
Result<MysqlSourceSpec> ParseMysqlArgs(const sql::DorisArgs& args, bool whole_database);
Result<TargetDatabaseSpec> ParseToDatabaseArgs(const sql::DorisArgs& args);

struct JdbcTarget {
  std::string host;
  int port = 0;
  std::string database;
};
// jdbc:<scheme>://host[:port][/database][?params]; the port defaults to `default_port`.
Result<JdbcTarget> ParseJdbcUrl(std::string_view url, std::string_view scheme, int default_port);

}  // namespace millrace::cdc
