#include "mysql/binlog_stream.h"

// mariadb_rpl.h uses mysql.h's types without including it.
// clang-format off
#include <mysql.h>
#include <mariadb_rpl.h>
// clang-format on

#include <algorithm>
#include <cstring>

#include "common/strings.h"

namespace millrace::mysql {
namespace {

constexpr size_t kHeaderSize = 19;
constexpr size_t kChecksumSize = 4;
constexpr uint8_t kGtidStandalone = 1;  // FL_STANDALONE of MariaDB's GTID event
// FL_PREPARED_XA and FL_COMPLETED_XA: an XA transaction's rows come in a group that ends in
// XA PREPARE, and its XA COMMIT or ROLLBACK in another group.
constexpr uint8_t kGtidXa = 64 | 128;

uint32_t Little4(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

bool IsRowsEvent(int type) {
  return (type >= WRITE_ROWS_EVENT_V1 && type <= DELETE_ROWS_EVENT_V1) ||
         (type >= WRITE_ROWS_EVENT && type <= DELETE_ROWS_EVENT) ||
         (type >= WRITE_ROWS_COMPRESSED_EVENT_V1 && type <= DELETE_ROWS_COMPRESSED_EVENT);
}

std::string Text(const MARIADB_STRING& s) {
  return s.str == nullptr ? std::string() : std::string(s.str, s.length);
}

using EventPtr = std::unique_ptr<MARIADB_RPL_EVENT, decltype(&mariadb_free_rpl_event)>;

// A ROTATE event's file name: the bytes after its header and 8-byte position, less the
// checksum when the log has one.
Result<std::string> RotateFileName(const MARIADB_RPL_EVENT& event, bool checksum) {
  const unsigned char* header = event.raw_data + event.raw_data_ofs;
  const size_t available = event.raw_data_size - event.raw_data_ofs;
  const size_t length = std::min<size_t>(Little4(header + 9), available);
  const size_t trailer = checksum ? kChecksumSize : 0;
  if (length < kHeaderSize + 8 + trailer) {
    return Status::DataLoss("a ROTATE event of " + std::to_string(length) + " bytes");
  }
  return std::string(reinterpret_cast<const char*>(header) + kHeaderSize + 8,
                     length - kHeaderSize - 8 - trailer);
}

}  // namespace

std::string GtidEvent::Text() const {
  return std::to_string(domain) + "-" + std::to_string(server) + "-" + std::to_string(sequence);
}

Result<std::unique_ptr<BinlogStream>> BinlogStream::Open(const ConnectParams& params,
                                                         uint32_t server_id,
                                                         const BinlogStart& start,
                                                         std::chrono::milliseconds heartbeat,
                                                         TableFilter follow) {
  if (server_id == 0) {
    return Status::InvalidArgument("a binlog dump needs a server_id other than 0");
  }
  ConnectParams dump = params;
  // A dead server sends no heartbeat: reads give up after a few missed ones.
  dump.read_timeout = std::max<std::chrono::seconds>(
      std::chrono::seconds(5),
      std::chrono::duration_cast<std::chrono::seconds>(heartbeat * 3) + std::chrono::seconds(1));
  MR_ASSIGN_OR_RETURN(std::unique_ptr<MysqlConnection> conn, MysqlConnection::Connect(dump));
  const char* version = mysql_get_server_info(conn->raw());
  if (!start.gtid.empty() && (version == nullptr || std::strstr(version, "MariaDB") == nullptr)) {
    return Status::NotSupported("MySQL server " + Describe(params) +
                                " is not MariaDB: a GTID start position is MariaDB's "
                                "(MySQL's GTID sets are not supported yet); give a file and "
                                "position");
  }
  // The dump sends checksummed events only to a client that says it can take them, and GTID
  // events only to one that claims MariaDB 10's capability (4).
  std::string setup =
      "SET @master_binlog_checksum = @@global.binlog_checksum, @mariadb_slave_capability = 4, "
      "@master_heartbeat_period = " +
      std::to_string(std::chrono::nanoseconds(heartbeat).count());
  if (!start.gtid.empty()) {
    setup += ", @slave_connect_state = " + conn->Literal(start.gtid) +
             ", @slave_gtid_strict_mode = 0, @slave_gtid_ignore_duplicates = 0";
  }
  MR_RETURN_IF_ERROR(conn->Execute(setup));
  // Every event the dump sends, the artificial ones before the first FORMAT_DESCRIPTION too,
  // carries a checksum when the log has them.
  MR_ASSIGN_OR_RETURN(Rows checksum, conn->Query("SELECT @@global.binlog_checksum"));
  const bool has_checksum =
      !checksum.rows.empty() && ToUpper(checksum.rows[0][0].value_or("NONE")) != "NONE";
  MARIADB_RPL* rpl = mariadb_rpl_init(conn->raw());
  if (rpl == nullptr) return conn->LastError("cannot start the binlog dump");
  std::unique_ptr<BinlogStream> stream(
      new BinlogStream(std::move(conn), rpl, start.position, std::move(follow)));
  stream->checksum_ = has_checksum;
  // With a GTID position the server finds the file itself: the dump names none.
  const std::string file = start.gtid.empty() ? start.position.file : std::string();
  const unsigned long position = start.gtid.empty() ? start.position.position : 4;
  mariadb_rpl_optionsv(rpl, MARIADB_RPL_FILENAME, file.c_str(), file.size());
  mariadb_rpl_optionsv(rpl, MARIADB_RPL_START, position);
  mariadb_rpl_optionsv(rpl, MARIADB_RPL_SERVER_ID, static_cast<unsigned int>(server_id));
  mariadb_rpl_optionsv(rpl, MARIADB_RPL_FLAGS, 0u);
  mariadb_rpl_optionsv(rpl, MARIADB_RPL_VERIFY_CHECKSUM, 1u);
  if (mariadb_rpl_open(rpl) != 0) return stream->Failed("cannot start the binlog dump");
  return stream;
}

BinlogStream::~BinlogStream() {
  mariadb_rpl_close(rpl_);
}

Status BinlogStream::Failed(std::string_view what) const {
  Status failed = conn_->LastError(what);
  if (failed.code() == StatusCode::kInternal && mariadb_rpl_errno(rpl_) != 0) {
    // Connector/C's own replication errors (a checksum that does not match, a malformed
    // packet) have no server errno.
    return Status::DataLoss("MySQL " + Describe(conn_->params()) + ": " + std::string(what) + ": " +
                            mariadb_rpl_error(rpl_));
  }
  return failed;
}

Result<StreamEvent> BinlogStream::Next() {
  while (true) {
    EventPtr event(mariadb_rpl_fetch(rpl_, nullptr), &mariadb_free_rpl_event);
    if (event == nullptr) {
      if (mysql_errno(conn_->raw()) == 0 && mariadb_rpl_errno(rpl_) == 0) {
        return Status::Unavailable("MySQL " + Describe(conn_->params()) +
                                   " ended the binlog dump at " + position_.file + ":" +
                                   std::to_string(position_.position));
      }
      return Failed("reading the binlog at " + position_.file + ":" +
                    std::to_string(position_.position));
    }
    const int type = event->event_type;
    // Artificial events (the first ROTATE and FORMAT_DESCRIPTION of a dump) have no position.
    if (event->next_event_pos != 0) position_.position = event->next_event_pos;
    StreamEvent out;
    if (type == ROTATE_EVENT) {
      // The name is read from the packet: Connector/C 3.3 garbles the name of the artificial
      // ROTATE the server sends after a switch (it cuts the checksum off twice).
      MR_ASSIGN_OR_RETURN(std::string file, RotateFileName(*event, checksum_));
      position_ = {std::move(file), event->event.rotate.position};
      out.event = RotateEvent{position_};
      out.after = position_;
      return out;
    }
    out.after = position_;
    if (type == FORMAT_DESCRIPTION_EVENT) {
      const char* version = event->event.format_description.server_version;
      mariadb_ = version != nullptr && std::strstr(version, "MariaDB") != nullptr;
      continue;
    }
    if (type == HEARTBEAT_LOG_EVENT) {
      out.event = HeartbeatEvent{};
      return out;
    }
    if (type == GTID_EVENT && (event->event.gtid.flags & kGtidXa) != 0) {
      return Status::NotSupported(
          "MySQL " + Describe(conn_->params()) + ": an XA transaction at " + position_.file + ":" +
          std::to_string(position_.position) +
          " (its rows commit in a later event group, which change data capture does not follow "
          "yet)");
    }
    if (type == GTID_EVENT) {
      // A transaction's statements each announce their tables again: ids of earlier ones (new
      // after an ALTER or a table-cache eviction) are no longer needed.
      tables_.clear();
      skipped_.clear();
      out.event =
          GtidEvent{event->event.gtid.domain_id, event->server_id, event->event.gtid.sequence_nr,
                    (event->event.gtid.flags & kGtidStandalone) != 0};
      return out;
    }
    if (type == XID_EVENT) {
      out.event = XidEvent{};
      return out;
    }
    if (type == QUERY_EVENT) {
      out.event = QueryEvent{Text(event->event.query.database), Text(event->event.query.statement)};
      return out;
    }
    if (type != TABLE_MAP_EVENT && !IsRowsEvent(type)) continue;  // GTID lists, annotations, ...

    // The event's body, cut from the packet as the server sent it: an OK byte, then the event
    // (header, body, checksum).
    const unsigned char* header = event->raw_data + event->raw_data_ofs;
    const size_t available = event->raw_data_size - event->raw_data_ofs;
    const size_t length = Little4(header + 9);
    const size_t trailer = checksum_ ? kChecksumSize : 0;
    if (length > available || length < kHeaderSize + trailer) {
      return Status::DataLoss("binlog event of " + std::to_string(length) + " bytes in a " +
                              std::to_string(available) + "-byte packet at " + position_.file +
                              ":" + std::to_string(position_.position));
    }
    const std::string_view body(reinterpret_cast<const char*>(header) + kHeaderSize,
                                length - kHeaderSize - trailer);
    if (type == TABLE_MAP_EVENT) {
      MR_ASSIGN_OR_RETURN(TableMapBytes bytes, SplitTableMapEvent(body, mariadb_));
      if (follow_ && !follow_(bytes.schema, bytes.name)) {
        skipped_.insert(bytes.table_id);
        continue;
      }
      MR_ASSIGN_OR_RETURN(BinlogTable table, DecodeTableMap(bytes));
      const uint64_t id = table.table_id;
      tables_[id] = table;
      out.event = TableMapEvent{std::move(table)};
      return out;
    }
    if (follow_ && body.size() >= 6) {
      // The table id leads the rows event: a table not followed is skipped undecoded (even
      // compressed rows, which SplitRowsEvent refuses).
      uint64_t id = 0;
      for (int i = 5; i >= 0; --i)
        id = id << 8 | static_cast<unsigned char>(body[i]);
      if (skipped_.contains(id)) continue;
    }
    MR_ASSIGN_OR_RETURN(RowsBytes bytes, SplitRowsEvent(static_cast<uint8_t>(type), body));
    auto table = tables_.find(bytes.table_id);
    if (table == tables_.end()) {
      return Status::DataLoss("a rows event at " + position_.file + ":" +
                              std::to_string(position_.position) + " names table id " +
                              std::to_string(bytes.table_id) + ", which no TABLE_MAP announced");
    }
    MR_ASSIGN_OR_RETURN(std::vector<RowChange> rows, DecodeRows(table->second, bytes));
    out.event = RowsEvent{bytes.kind, &table->second, std::move(rows)};
    return out;
  }
}

}  // namespace millrace::mysql
