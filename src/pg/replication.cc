#include "pg/replication.h"

#include <libpq-fe.h>
#include <poll.h>

#include <chrono>

namespace millrace::pg {
namespace {

uint64_t ReadU64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void PutU64(std::string* out, uint64_t v) {
  for (int i = 7; i >= 0; --i)
    out->push_back(static_cast<char>((v >> (i * 8)) & 0xff));
}

// Microseconds since 2000-01-01, PostgreSQL's epoch.
int64_t PgNowMicros() {
  using namespace std::chrono;
  constexpr int64_t kUnixToPg = 946684800LL * 1000000;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count() - kUnixToPg;
}

}  // namespace

Result<std::unique_ptr<ReplicationConnection>> ReplicationConnection::Connect(
    ConnectParams params) {
  params.replication = true;
  MR_ASSIGN_OR_RETURN(auto conn, PgConnection::Connect(params));
  return std::unique_ptr<ReplicationConnection>(new ReplicationConnection(std::move(conn)));
}

Result<CreatedSlot> ReplicationConnection::CreateSlot(const std::string& slot,
                                                      bool export_snapshot) {
  MR_ASSIGN_OR_RETURN(Rows rows, conn_->Query("CREATE_REPLICATION_SLOT " + conn_->Identifier(slot) +
                                              " LOGICAL pgoutput (SNAPSHOT '" +
                                              (export_snapshot ? "export" : "nothing") + "')"));
  // slot_name, consistent_point, snapshot_name, output_plugin
  if (rows.rows.size() != 1 || rows.rows[0].size() < 3 || !rows.rows[0][1]) {
    return Status::Internal("CREATE_REPLICATION_SLOT answered with an unexpected row");
  }
  CreatedSlot created;
  MR_ASSIGN_OR_RETURN(created.consistent_point, ParseLsn(*rows.rows[0][1]));
  created.snapshot = rows.rows[0][2].value_or("");
  return created;
}

Status ReplicationConnection::Start(const std::string& slot, const std::string& publication,
                                    Lsn from) {
  const std::string sql = "START_REPLICATION SLOT " + conn_->Identifier(slot) + " LOGICAL " +
                          FormatLsn(from) + " (proto_version '1', publication_names " +
                          conn_->Literal(conn_->Identifier(publication)) + ")";
  PGresult* result = PQexec(conn_->raw(), sql.c_str());
  if (result == nullptr) return conn_->ConnectionError("START_REPLICATION failed");
  const ExecStatusType status = PQresultStatus(result);
  if (status == PGRES_COPY_BOTH) {
    PQclear(result);
    return Status::Ok();
  }
  Status error = StatusFromResult(result).WithContext("START_REPLICATION");
  PQclear(result);
  return error;
}

Result<std::optional<StreamMessage>> ReplicationConnection::Next(
    std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  PGconn* conn = conn_->raw();
  held_.reset();
  bool consumed_at_deadline = false;
  for (;;) {
    char* buffer = nullptr;
    const int n = PQgetCopyData(conn, &buffer, /*async=*/1);
    if (n > 0) {
      std::string_view msg(buffer, static_cast<size_t>(n));
      StreamMessage out;
      Status bad;
      if (msg[0] == 'w' && msg.size() >= 25) {
        out.kind = StreamMessage::Kind::kData;
        out.wal_start = ReadU64(msg.data() + 1);
        out.wal_end = ReadU64(msg.data() + 9);
        out.data = msg.substr(25);
      } else if (msg[0] == 'k' && msg.size() >= 18) {
        out.kind = StreamMessage::Kind::kKeepalive;
        out.wal_end = ReadU64(msg.data() + 1);
        out.reply_requested = msg[17] != 0;
      } else {
        bad = Status::DataLoss("the replication stream sent an unknown message '" +
                               std::string(1, msg[0]) + "'");
      }
      held_.reset(buffer);
      if (!bad.ok()) return bad;
      return std::optional<StreamMessage>(std::move(out));
    }
    if (n == -1) {
      PGresult* result = PQgetResult(conn);
      std::string message = result ? PQresultErrorMessage(result) : "";
      if (result) PQclear(result);
      while (!message.empty() && message.back() == '\n')
        message.pop_back();
      return Status::Unavailable("PostgreSQL ended the replication stream" +
                                 (message.empty() ? std::string() : ": " + message));
    }
    if (n == -2) return conn_->ConnectionError("replication stream broke");
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      // What the socket already holds counts as arrived, even with no time to wait.
      if (!consumed_at_deadline) {
        consumed_at_deadline = true;
        if (PQconsumeInput(conn) == 0) return conn_->ConnectionError("replication stream broke");
        continue;
      }
      return std::optional<StreamMessage>();
    }
    pollfd fd{PQsocket(conn), POLLIN, 0};
    const int wait_ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
    if (poll(&fd, 1, wait_ms) < 0 && errno != EINTR) {
      return Status::Unavailable("waiting for the replication stream failed");
    }
    if (PQconsumeInput(conn) == 0) return conn_->ConnectionError("replication stream broke");
  }
}

void ReplicationConnection::FreeCopyData::operator()(char* buffer) const {
  PQfreemem(buffer);
}

Status ReplicationConnection::SendStatus(Lsn flushed, bool reply) {
  std::string msg = "r";
  PutU64(&msg, flushed);  // written
  PutU64(&msg, flushed);  // flushed
  PutU64(&msg, flushed);  // applied
  PutU64(&msg, static_cast<uint64_t>(PgNowMicros()));
  msg.push_back(reply ? 1 : 0);
  PGconn* conn = conn_->raw();
  if (PQputCopyData(conn, msg.data(), static_cast<int>(msg.size())) != 1 || PQflush(conn) != 0) {
    return conn_->ConnectionError("sending the standby status failed");
  }
  return Status::Ok();
}

}  // namespace millrace::pg
