#include "cdc/mysql_source_factory.h"

#include "cdc/cdc_params.h"
#include "cdc/mysql_change_source.h"
#include "cdc/mysql_tables.h"
#include "cdc/source_factory.h"
#include "mysql/binlog_requirements.h"

namespace millrace::cdc {
namespace {

// The tables of FROM MYSQL: include_tables, or every base table of the database; less
// exclude_tables.
Result<std::vector<std::string>> ListTables(mysql::MysqlConnection& conn,
                                            const MysqlSourceSpec& spec) {
  std::vector<std::string> all;
  if (spec.tables.empty()) {
    MR_ASSIGN_OR_RETURN(mysql::Rows rows,
                        conn.Query("SELECT TABLE_NAME FROM information_schema.TABLES WHERE "
                                   "TABLE_SCHEMA = " +
                                   conn.Literal(spec.connect.database) +
                                   " AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME"));
    for (mysql::Row& row : rows.rows)
      all.push_back(row[0].value_or(""));
  }
  return ChooseTables(spec.tables, std::move(all), spec.exclude_tables, "FROM MYSQL",
                      "database " + spec.connect.database);
}

}  // namespace

Result<std::shared_ptr<job::JobSource>> MakeMysqlChangeSource(
    const job::ChangeSourceRequest& request) {
  const bool whole_database = !request.analysis.to_database.empty();
  MysqlChangeSourceConfig config;
  MR_ASSIGN_OR_RETURN(config.spec, ParseMysqlArgs(request.analysis.args, whole_database));
  MR_ASSIGN_OR_RETURN(auto conn, mysql::MysqlConnection::Connect(config.spec.connect));
  MR_RETURN_IF_ERROR(mysql::CheckBinlogSource(*conn));
  const std::string& database = config.spec.connect.database;
  MR_ASSIGN_OR_RETURN(
      config.tables,
      BindSourceTables(
          request, "FROM MYSQL", [&] { return ListTables(*conn, config.spec); },
          config.spec.tables.empty() ? std::string() : config.spec.tables.front(),
          [&](const std::string& name) { return DescribeMysqlTable(*conn, database, name); }));
  config.clock = request.clock;
  config.db = request.db;
  config.database = request.database;
  return std::shared_ptr<job::JobSource>(std::make_shared<MysqlChangeSource>(std::move(config)));
}

}  // namespace millrace::cdc
