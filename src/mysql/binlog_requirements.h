// What a MySQL or MariaDB server must offer before Millrace can follow its binlog, checked at
// CREATE JOB with an error each that names the setting or privilege and how to get it.
//
// Contract
// - CheckBinlogSource is FAILED_PRECONDITION when log_bin is OFF, binlog_format is not ROW,
//   binlog_row_image is not FULL, binlog_row_metadata is not FULL (without it TABLE_MAP events
//   carry no column names, and Millrace would need a DDL parser to follow columns), or
//   MariaDB's log_bin_compress is ON (compressed events are not read);
//   PERMISSION_DENIED when the user lacks REPLICATION SLAVE, or REPLICATION CLIENT (MariaDB
//   10.5+: BINLOG MONITOR), read from SHOW GRANTS (ALL PRIVILEGES ON *.* holds both). Other
//   errors are the server's.
// - Thread-safety: uses the given connection.
#pragma once

#include "common/status.h"
#include "mysql/mysql_connection.h"

namespace millrace::mysql {

Status CheckBinlogSource(MysqlConnection& conn);

}  // namespace millrace::mysql
