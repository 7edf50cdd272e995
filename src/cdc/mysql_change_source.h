// MysqlChangeSource: the JobSource of cdc_stream("type" = "mysql", ...) and FROM MYSQL (...)
// TO DATABASE jobs — tables' snapshots in primary-key splits, then their changes from the
// server's binlog, applied to UNIQUE KEY targets exactly once.
//
// Contract (beyond job_source.h and change_stream.h)
// - The offset while streaming is {"file": "binlog.000003", "pos": "1234", "gtids": "0-1-57"}:
//   every source transaction that committed before that binlog position is applied, none after
//   it. "gtids" (the GTID position there, MariaDB's domain-server-sequence per domain) is
//   present where the server has GTIDs; a job started from a GTID position alone has only
//   "gtids" until its first transaction. During the snapshot the offset also holds "snapshot"
//   (as PgChangeSource's).
// - The first poll (empty offset) checks the binlog requirements (binlog_requirements.h) and
//   starts: "initial" takes a consistent snapshot (mysql_snapshot_reader.h) whose binlog
//   position the stream starts from, and copies the tables in splits; "latest" starts at the
//   end of the binlog now; a given position starts there. Splits read outside that snapshot
//   (after a restart, or the parallel ones) are covered by the replay: the target may be behind
//   during the snapshot, never wrong after it.
// - The stream: a BinlogStream from the offset's file and position (its GTID position when it
//   has no file), registered as replica server_id (default ServerId). A transaction runs from
//   its GTID event (or BEGIN) to its XID or COMMIT; a DDL statement is one of its own. Row
//   events become changes of the tables followed: WRITE an upsert, UPDATE an upsert (after a
//   delete of the old key when the key changed), DELETE a delete; TRUNCATE TABLE of a followed
//   table empties its target. Each TABLE_MAP describes its table as the following rows were
//   written (DescribeTableMap): a description other than the latest is a new shape, so ADD and
//   DROP COLUMN reach the targets of FROM MYSQL, and a cdc_stream SELECT is checked against it.
// - A poll hands out whole transactions (at least one, more within ChangeStream::Bounds) once the
//   server goes quiet (a heartbeat that took a while to come: the server sends one every
//   kHeartbeat while idle whether or not the job reads, so those waiting in the connection are
//   old and are read past) or kGather after the first is ready; at most kPollBudget. A poll
//   that has received nothing waits kStreamWait before it gives up on a quiet server. A read
//   ahead (change_source.h) reads on past both until the task asks for its batch.
//   With no change for the job, an offset-only batch moves it to the latest position between
//   transactions every ChangeStream::kQuietCommitInterval.
// - A binlog position the server no longer has (its file purged) fails the poll with
//   FAILED_PRECONDITION naming the position: the job pauses saying so. A paused job's file is
//   looked for every paused_check (WhilePaused), so JobRuntimeMsg says so before a RESUME. A broken
//   connection is reopened once from the job's offset, then the poll fails UNAVAILABLE (the task
//   retries).
// - Nothing is made on the server, so Committed has nothing to tell it; Drop drops what an
//   unfinished snapshot left in the embedded database (ChangeStream::DropSnapshotState).
// - The next batch is read ahead while the task applies one (change_source.h).
// - Thread-safety: Poll, Committed, TurnEnded and Drop are called by one thread at a time;
//   Describe from any thread.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cdc/cdc_params.h"
#include "cdc/change_source.h"
#include "cdc/change_stream.h"
#include "cdc/mysql_snapshot_reader.h"
#include "job/job_source.h"
#include "mysql/binlog_stream.h"

namespace millrace::cdc {

// A position in the binlog, with the GTID position there.
struct BinlogWhere {
  mysql::BinlogPosition position;
  std::map<uint32_t, std::string> gtids;  // domain -> "domain-server-sequence"
};

struct MysqlChangeSourceConfig {
  MysqlSourceSpec spec;
  std::vector<TableBinding> tables;  // at least one; the snapshot copies them in this order
  Clock* clock = nullptr;            // not owned
  engine::Database* db = nullptr;    // not owned; checks the SELECT after a schema change
  std::string database;              // the job's session database (the SELECT's names)
};

class MysqlChangeSource final : public ChangeSource<BinlogWhere> {
 public:
  explicit MysqlChangeSource(MysqlChangeSourceConfig config);
  ~MysqlChangeSource() override;

  std::string Describe() const override;
  // The database, the tables and the server_id given.
  std::string FixedUpstream() const override;
  // A note when the binlog file of the paused job's offset is no longer on the server (a
  // RESUME would fail; the job must be made again), on a connection of its own.
  std::string WhilePaused(const job::JobRecord& job) override;
  // count(*) of each table, on a connection of its own.
  Result<std::vector<job::UpstreamTableRows>> CountRows() const override;

  // The replica id of a job that gives no server_id.
  static uint32_t ServerId(const job::JobRecord& job);

  // How often an idle server sends a heartbeat.
  static constexpr std::chrono::milliseconds kHeartbeat{100};
  // How long a poll that has received no transaction waits on a quiet stream for one.
  static constexpr std::chrono::milliseconds kStreamWait{200};
  // How long a poll gathers transactions after the first is ready.
  static constexpr std::chrono::milliseconds kGather{100};
  // The longest a poll reads the stream.
  static constexpr std::chrono::seconds kPollBudget{1};

 private:
  using Where = BinlogWhere;

  // ChangeSource's steps (change_source.h).
  ChangeStream& changes() override { return stream_; }
  void Confirm(const job::Offset& offset) override {}
  Status DropUpstream(const job::JobRecord& job) override;
  Result<job::Polled> Start(const job::JobRecord& job, const job::BatchLimits& limits) override;
  Result<Where> PositionIn(const job::Offset& offset) const override { return WhereOf(offset); }
  Result<job::Polled> SnapshotSplit(const job::JobRecord& job, const Where& at,
                                    const nlohmann::json& position) override;
  Result<job::Polled> Stream(const job::JobRecord& job, const Where& at,
                             const job::BatchLimits& limits) override;
  // A binlog position purged from the server: CANNOT_RESUME, the job must be made again.
  Status StreamFailed(const Where& at, const Status& error) override;
  // Takes the event's rows into the open transaction (moved, not copied).
  Status Receive(mysql::StreamEvent& event);
  // The transaction being received ends at `after`.
  void EndTransaction(const mysql::BinlogPosition& after);
  // The binding of a table of the stream, if the job follows it.
  std::optional<size_t> Binding(const std::string& schema, const std::string& name) const;
  Status Mapped(size_t b, const mysql::BinlogTable& table);
  void CloseStream() override;

  static Result<Where> WhereOf(const job::Offset& offset);
  static StreamPosition PositionOf(const Where& where);
  static std::string GtidText(const std::map<uint32_t, std::string>& gtids);

  const MysqlSourceSpec spec_;
  ChangeStream stream_;
  MysqlSnapshotReader reader_;

  // Owned by the job's task thread.
  std::unique_ptr<mysql::BinlogStream> binlog_;
  std::optional<SourceTransaction> open_;  // a transaction being received
  std::optional<std::string> open_gtid_;   // its GTID, "domain-server-sequence"
  uint32_t open_domain_ = 0;
  bool open_standalone_ = false;  // a DDL statement: the next QUERY event ends it
  Where passed_;                  // the latest position between transactions received
  std::vector<bool> mapped_;      // per table: a TABLE_MAP seen on this connection
};

}  // namespace millrace::cdc
