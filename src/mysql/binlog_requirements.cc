#include "mysql/binlog_requirements.h"

#include <map>

#include "common/strings.h"

namespace millrace::mysql {

Status CheckBinlogSource(MysqlConnection& conn) {
  MR_ASSIGN_OR_RETURN(
      Rows variables,
      conn.Query("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('log_bin', 'binlog_format', "
                 "'binlog_row_image', 'binlog_row_metadata')"));
  std::map<std::string, std::string> values;
  for (const Row& row : variables.rows)
    values[row[0].value_or("")] = ToUpper(row[1].value_or(""));
  const std::string server = "MySQL server " + Describe(conn.params());
  struct Needed {
    const char* name;
    const char* value;
    const char* why;
  };
  for (const Needed& needed : {
           Needed{"log_bin", "ON",
                  "the binary log is what the job reads (start the server "
                  "with --log-bin)"},
           Needed{"binlog_format", "ROW", "changes are read as rows"},
           Needed{"binlog_row_image", "FULL", "updates and deletes need every column"},
           Needed{"binlog_row_metadata", "FULL", "TABLE_MAP events then carry the column names"},
       }) {
    auto it = values.find(needed.name);
    const std::string value = it == values.end() ? "(not set)" : it->second;
    if (value == needed.value) continue;
    return Status::FailedPrecondition(server + " has " + needed.name + " = " + value +
                                      "; change data capture needs " + needed.name + " = " +
                                      needed.value + ": " + needed.why +
                                      " (SET GLOBAL or the server's configuration)");
  }
  MR_ASSIGN_OR_RETURN(Rows grants, conn.Query("SHOW GRANTS"));
  bool slave = false;
  bool client = false;
  for (const Row& row : grants.rows) {
    const std::string grant = ToUpper(row[0].value_or(""));
    if (grant.find(" ON *.*") == std::string::npos) continue;  // binlog privileges are global
    const bool all = grant.find("GRANT ALL PRIVILEGES") != std::string::npos;
    slave = slave || all || grant.find("REPLICATION SLAVE") != std::string::npos ||
            grant.find("REPLICATION REPLICA") != std::string::npos;
    client = client || all || grant.find("REPLICATION CLIENT") != std::string::npos ||
             grant.find("BINLOG MONITOR") != std::string::npos;
  }
  if (slave && client) return Status::Ok();
  return Status::PermissionDenied(
      server + ": user " + conn.params().user + " may not read the binlog: it needs " +
      (slave ? std::string() : "REPLICATION SLAVE") + (slave || client ? "" : " and ") +
      (client ? std::string() : "REPLICATION CLIENT (BINLOG MONITOR on MariaDB)") +
      " (GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO ...)");
}

}  // namespace millrace::mysql
