#include "mysql/binlog_requirements.h"

#include <map>

#include "common/strings.h"

namespace millrace::mysql {

Status CheckBinlogSource(MysqlConnection& conn) {
  MR_ASSIGN_OR_RETURN(
      Rows variables,
      conn.Query("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('log_bin', 'binlog_format', "
                 "'binlog_row_image', 'binlog_row_metadata', 'log_bin_compress')"));
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
           Needed{"log_bin_compress", "OFF", "compressed events are not read (MariaDB)"},
       }) {
    auto it = values.find(needed.name);
    // A setting the server does not have (MySQL has no log_bin_compress) cannot be in the way.
    if (it == values.end() && std::string_view(needed.value) == "OFF") continue;
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
    // "GRANT <privilege>, <privilege> ON *.* TO ...": the binlog's privileges are global.
    const std::string grant = ToUpper(row[0].value_or(""));
    const size_t on = grant.find(" ON *.* ");
    if (grant.rfind("GRANT ", 0) != 0 || on == std::string::npos) continue;
    const std::string list = grant.substr(6, on - 6);
    size_t begin = 0;
    while (begin <= list.size()) {
      size_t comma = list.find(',', begin);
      if (comma == std::string::npos) comma = list.size();
      const std::string privilege(Trim(std::string_view(list).substr(begin, comma - begin)));
      const bool all = privilege == "ALL PRIVILEGES" || privilege == "ALL";
      slave =
          slave || all || privilege == "REPLICATION SLAVE" || privilege == "REPLICATION REPLICA";
      client = client || all || privilege == "REPLICATION CLIENT" || privilege == "BINLOG MONITOR";
      begin = comma + 1;
    }
  }
  if (slave && client) return Status::Ok();
  return Status::PermissionDenied(
      server + ": user " + conn.params().user + " may not read the binlog: it needs " +
      (slave ? std::string() : "REPLICATION SLAVE") + (slave || client ? "" : " and ") +
      (client ? std::string() : "REPLICATION CLIENT (BINLOG MONITOR on MariaDB)") +
      " (GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO ...)");
}

}  // namespace millrace::mysql
