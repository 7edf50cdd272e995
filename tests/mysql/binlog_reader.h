// Test support: reads a MariaDB or MySQL server's binary log from a position to its current end
// through Connector/C's replication API, keeping the bodies of TABLE_MAP and rows events for the
// decoder. The production stream (COM_BINLOG_DUMP kept open, positions, GTIDs) is not this.
//
// Contract
// - ReadBinlog connects as `user`, asks for the binlog with the checksum the server uses and
//   MariaDB's GTID capability, from `from` with MARIADB_RPL_BINLOG_DUMP_NON_BLOCK: the server
//   sends what it has and then an EOF, where ReadBinlog returns.
// - A BinlogEvent's body is the event after its 19-byte header, without the 4-byte checksum,
//   cut from the packet Connector/C received (raw_data), not from its parsed fields.
// - `mariadb` is true when the FORMAT_DESCRIPTION event names a MariaDB server.
// - Errors: UNAVAILABLE for a connection or dump failure, with Connector/C's message.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace millrace::mysql::testing {

struct BinlogPosition {
  std::string file;
  uint64_t position = 4;
};

struct BinlogEvent {
  uint8_t type = 0;
  std::string body;
};

struct BinlogRead {
  bool mariadb = false;
  std::vector<BinlogEvent> events;  // TABLE_MAP and rows events, in binlog order
};

struct ServerAddress {
  std::string host;
  int port = 0;
  std::string user;
  std::string password;
};

Result<BinlogRead> ReadBinlog(const ServerAddress& server, const BinlogPosition& from);

}  // namespace millrace::mysql::testing
