// ReplicationConnection: PostgreSQL's logical replication protocol over libpq — create and drop
// slots, stream a slot's changes (pgoutput) and confirm how far they are safe.
//
// Contract
// - CreateSlot runs CREATE_REPLICATION_SLOT name LOGICAL pgoutput, with (SNAPSHOT 'export')
//   when asked: the snapshot it names can then be imported (SET TRANSACTION SNAPSHOT) by other
//   connections, and lives only while this connection stays open and runs nothing else. Its
//   consistent point is where streaming starts: every change committed after it, and none
//   before it, is in the stream.
// - Start runs START_REPLICATION SLOT ... LOGICAL from `from` with pgoutput protocol version 1
//   and the given publications. The server begins at the later of `from` and the slot's
//   confirmed position.
// - Next waits up to `timeout` for the next message: XLogData (one pgoutput message, see
//   pgoutput.h) or a primary keepalive. nullopt when none came in time; UNAVAILABLE when the
//   connection broke or the server ended the stream. A message's data is libpq's buffer, not a
//   copy: it is valid until the next call of Next.
// - SendStatus sends a standby status update: the server may recycle WAL up to `flushed` and
//   reports it as the slot's confirmed_flush_lsn. `reply` asks the server to answer at once
//   with a keepalive (which carries its current send position).
// - Thread-safety: one thread at a time.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "pg/lsn.h"
#include "pg/pg_connection.h"

namespace millrace::pg {

struct CreatedSlot {
  Lsn consistent_point = 0;
  std::string snapshot;  // "" when no snapshot was exported
};

struct StreamMessage {
  enum class Kind { kData, kKeepalive };
  Kind kind = Kind::kData;
  Lsn wal_start = 0;             // kData: where the message's WAL starts
  Lsn wal_end = 0;               // the server's send position
  bool reply_requested = false;  // kKeepalive: answer soon, or the server drops us
  // kData: the pgoutput message, held by the connection until its next Next() (or its end)
  std::string_view data;
};

class ReplicationConnection {
 public:
  // `params.replication` is set by Connect.
  static Result<std::unique_ptr<ReplicationConnection>> Connect(ConnectParams params);

  Result<CreatedSlot> CreateSlot(const std::string& slot, bool export_snapshot);
  Status Start(const std::string& slot, const std::string& publication, Lsn from);
  Result<std::optional<StreamMessage>> Next(std::chrono::milliseconds timeout);
  Status SendStatus(Lsn flushed, bool reply);

  PgConnection& connection() { return *conn_; }

 private:
  struct FreeCopyData {
    void operator()(char* buffer) const;
  };
  explicit ReplicationConnection(std::unique_ptr<PgConnection> conn) : conn_(std::move(conn)) {}
  std::unique_ptr<PgConnection> conn_;
  std::unique_ptr<char, FreeCopyData> held_;  // the last message's buffer (StreamMessage::data)
};

}  // namespace millrace::pg
