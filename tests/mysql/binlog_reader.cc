#include "binlog_reader.h"

// mariadb_rpl.h uses mysql.h's types without including it.
// clang-format off
#include <mysql.h>
#include <mariadb_rpl.h>
// clang-format on

#include <cstring>
#include <memory>

namespace millrace::mysql::testing {
namespace {

constexpr size_t kHeaderSize = 19;
constexpr size_t kChecksumSize = 4;

bool Kept(uint8_t type) {
  return type == TABLE_MAP_EVENT || (type >= WRITE_ROWS_EVENT_V1 && type <= DELETE_ROWS_EVENT_V1) ||
         (type >= WRITE_ROWS_EVENT && type <= DELETE_ROWS_EVENT);
}

uint32_t Little4(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace

Result<BinlogRead> ReadBinlog(const ServerAddress& server, const BinlogPosition& from) {
  std::unique_ptr<MYSQL, decltype(&mysql_close)> connection(mysql_init(nullptr), &mysql_close);
  if (!connection) return Status::Unavailable("mysql_init failed");
  MYSQL* m = connection.get();
  auto failed = [&](const std::string& what) {
    return Status::Unavailable(what + ": " + mysql_error(m));
  };
  if (!mysql_real_connect(m, server.host.c_str(), server.user.c_str(), server.password.c_str(),
                          nullptr, static_cast<unsigned>(server.port), nullptr, 0))
    return failed("connect");
  // The dump sends checksummed events only to a client that says it can take them, and GTID
  // events only to one that claims MariaDB 10's capability (4).
  if (mysql_query(m, "SET @master_binlog_checksum = @@global.binlog_checksum") ||
      mysql_query(m, "SET @mariadb_slave_capability = 4"))
    return failed("binlog session settings");

  std::unique_ptr<MARIADB_RPL, decltype(&mariadb_rpl_close)> rpl(mariadb_rpl_init(m),
                                                                 &mariadb_rpl_close);
  if (!rpl) return failed("mariadb_rpl_init");
  mariadb_rpl_optionsv(rpl.get(), MARIADB_RPL_FILENAME, from.file.c_str(), from.file.size());
  mariadb_rpl_optionsv(rpl.get(), MARIADB_RPL_START, static_cast<unsigned long>(from.position));
  mariadb_rpl_optionsv(rpl.get(), MARIADB_RPL_SERVER_ID, 4242u);
  mariadb_rpl_optionsv(rpl.get(), MARIADB_RPL_FLAGS,
                       static_cast<unsigned int>(MARIADB_RPL_BINLOG_DUMP_NON_BLOCK));
  if (mariadb_rpl_open(rpl.get())) return failed("binlog dump");

  BinlogRead out;
  while (MARIADB_RPL_EVENT* raw = mariadb_rpl_fetch(rpl.get(), nullptr)) {
    std::unique_ptr<MARIADB_RPL_EVENT, decltype(&mariadb_free_rpl_event)> event(
        raw, &mariadb_free_rpl_event);
    if (event->event_type == FORMAT_DESCRIPTION_EVENT &&
        std::strstr(event->event.format_description.server_version, "MariaDB") != nullptr)
      out.mariadb = true;
    if (!Kept(static_cast<uint8_t>(event->event_type))) continue;
    // The packet: an OK byte, then the event (header, body, checksum).
    const unsigned char* header = event->raw_data + event->raw_data_ofs;
    const size_t available = event->raw_data_size - event->raw_data_ofs;
    const size_t length = Little4(header + 9);
    const size_t trailer = rpl->use_checksum ? kChecksumSize : 0;
    if (length > available || length < kHeaderSize + trailer)
      return Status::Unavailable("binlog event of " + std::to_string(length) + " bytes in a " +
                                 std::to_string(available) + "-byte packet");
    out.events.push_back({static_cast<uint8_t>(event->event_type),
                          std::string(reinterpret_cast<const char*>(header) + kHeaderSize,
                                      length - kHeaderSize - trailer)});
  }
  if (mysql_errno(m) != 0) return failed("binlog read");
  return out;
}

}  // namespace millrace::mysql::testing
