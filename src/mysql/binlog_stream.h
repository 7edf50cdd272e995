// BinlogStream: a MySQL or MariaDB server's binary log, followed from a position as a replica
// follows it (COM_BINLOG_DUMP through Connector/C's replication API), as typed events whose row
// images are decoded by binlog_rows.h.
//
// Contract
// - Open connects (its own connection: a dumping connection runs no statements), tells the
//   server the session takes checksummed events (@master_binlog_checksum) and MariaDB's GTID
//   events (@mariadb_slave_capability = 4), asks for a heartbeat every `heartbeat` while the log
//   is idle, and starts the dump as replica `server_id` at `start`: a MariaDB GTID position
//   ("domain-server-sequence[,...]": @slave_connect_state; the log resumes after those
//   transactions) when given, else the file and byte position. Checksums are verified by
//   Connector/C (MARIADB_RPL_VERIFY_CHECKSUM); a mismatch fails Next with DATA_LOSS.
// - Next blocks until an event arrives: a heartbeat at the latest `heartbeat` after the last
//   one while the log is idle. Every event carries the position after it (the file, and the
//   byte offset of the next event). Only a position between transactions is a place to resume
//   from: after an XID, a COMMIT or ROLLBACK statement, a standalone statement, a heartbeat or a
//   rotation (resuming inside a transaction would lose its TABLE_MAPs).
// - `follow` (null: every table) says which tables' events are decoded; the TABLE_MAP and row
//   events of others are skipped undecoded, so a table the job does not read (a type Millrace
//   does not decode, compressed rows) cannot stop it. Row events come decoded with the
//   TABLE_MAP event that preceded them in the same transaction; one naming a table id no
//   TABLE_MAP announced is DATA_LOSS.
// - An XA transaction (MariaDB's GTID flags FL_PREPARED_XA / FL_COMPLETED_XA) is
//   NOT_SUPPORTED: its rows and its outcome come in two event groups.
// - server_id must not be 0 (the server would end the dump at the end of the log) and must be
//   unique among the server's replicas (it ends other dumps of the same id). A GTID start is
//   MariaDB's; on MySQL it is NOT_SUPPORTED.
// - Errors: UNAVAILABLE when the connection breaks; OUT_OF_RANGE with the server's message when
//   it cannot send from the position (a purged binlog file: errno 1236, its detail kept); other
//   server errors as mysql_connection.h maps them.
// - Thread-safety: one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "common/result.h"
#include "mysql/binlog_rows.h"
#include "mysql/mysql_connection.h"

typedef struct st_mariadb_rpl MARIADB_RPL;

namespace millrace::mysql {

struct BinlogPosition {
  std::string file;
  uint64_t position = 4;

  friend bool operator==(const BinlogPosition&, const BinlogPosition&) = default;
};

struct BinlogStart {
  std::string gtid;  // MariaDB's "domain-server-sequence[,...]"; "" : use `position`
  BinlogPosition position;
};

// A transaction begins (MariaDB's GTID event; `standalone`: a statement outside BEGIN ...
// COMMIT, such as DDL, which the next QUERY event holds whole).
struct GtidEvent {
  uint32_t domain = 0;
  uint32_t server = 0;
  uint64_t sequence = 0;
  bool standalone = false;
  std::string Text() const;  // "domain-server-sequence"
};
struct TableMapEvent {
  BinlogTable table;
};
struct RowsEvent {
  RowsKind kind = RowsKind::kWrite;
  // The stream's, valid until the next TABLE_MAP of its id or the next transaction's GTID.
  const BinlogTable* table = nullptr;
  std::vector<RowChange> rows;
};
// A transaction of transactional tables commits.
struct XidEvent {};
// A statement: "BEGIN", "COMMIT" (non-transactional tables), or DDL.
struct QueryEvent {
  std::string schema;
  std::string statement;
};
// The log moves to another file.
struct RotateEvent {
  BinlogPosition next;
};
struct HeartbeatEvent {};

struct StreamEvent {
  std::variant<GtidEvent, TableMapEvent, RowsEvent, XidEvent, QueryEvent, RotateEvent,
               HeartbeatEvent>
      event;
  BinlogPosition after;  // where the next event starts
};

class BinlogStream {
 public:
  using TableFilter = std::function<bool(const std::string& schema, const std::string& table)>;
  static Result<std::unique_ptr<BinlogStream>> Open(const ConnectParams& params, uint32_t server_id,
                                                    const BinlogStart& start,
                                                    std::chrono::milliseconds heartbeat,
                                                    TableFilter follow = nullptr);
  ~BinlogStream();
  BinlogStream(const BinlogStream&) = delete;
  BinlogStream& operator=(const BinlogStream&) = delete;

  Result<StreamEvent> Next();

 private:
  BinlogStream(std::unique_ptr<MysqlConnection> conn, MARIADB_RPL* rpl, BinlogPosition position,
               TableFilter follow)
      : conn_(std::move(conn)),
        rpl_(rpl),
        position_(std::move(position)),
        follow_(std::move(follow)) {}
  Status Failed(std::string_view what) const;

  std::unique_ptr<MysqlConnection> conn_;
  MARIADB_RPL* rpl_;  // owned
  BinlogPosition position_;
  const TableFilter follow_;
  bool mariadb_ = true;                     // from the FORMAT_DESCRIPTION event
  bool checksum_ = false;                   // events end with a CRC32 (binlog_checksum)
  std::map<uint64_t, BinlogTable> tables_;  // by table id, from this transaction's TABLE_MAPs
  std::set<uint64_t> skipped_;              // table ids of tables not followed
};

}  // namespace millrace::mysql
