// PgChangeSource: the JobSource of a cdc_stream("type" = "postgres", ...) job — a table's
// snapshot in primary-key splits, then its changes from a logical replication slot, applied
// to a UNIQUE KEY target exactly once.
//
// Contract (beyond job_source.h)
// - One source serves a cdc_stream(...) job (one table) or a FROM POSTGRES ... TO DATABASE job
//   (several tables, each into its own UNIQUE KEY target), through one slot and publication.
// - The offset is {"lsn": "X/Y"} while streaming: every source transaction that committed at
//   or before it is applied, none after it. During the snapshot it is {"lsn": <the slot's
//   consistent point>, "snapshot": {"table": "schema.name", "key": [its key's columns],
//   "after": [key values of the last row copied] | null}}; tables are copied one after the
//   other in the configured order (an offset without "table" is the first table's); a key that
//   differs from the table's now is FAILED_PRECONDITION (the primary key changed meanwhile).
// - The first poll of a job (empty offset) creates its publication when missing (FOR TABLE the
//   source tables; a publication named by publication_name that exists must publish them all)
//   and its slot, exporting a snapshot (offset "initial"), dropping an inactive slot of that
//   name left by a crash before the first commit. The names: publication_name and slot_name,
//   else millrace_<job id>_<create time>. Splits (snapshot_parallelism of them per batch, see
//   pg_snapshot_reader.h) are read in that snapshot while this source's replication connection
//   stays open and idle; after a restart the remaining splits are read in fresh snapshots. Either
//   way the stream replays every change after the consistent point, and upserts are idempotent: the
//   target may be behind during the snapshot, never wrong after it.
// - A batch is whole source transactions (at least one, more within ChangeStream::Bounds), or one
//   split; a poll that hands out changes asks for the next poll at once (Polled::more), so a
//   busy stream is read without waiting max_interval between batches, and the next batch is
//   read ahead while the task applies one (change_source.h). After its commit, Committed
//   confirms its LSN to the slot; nothing is ever confirmed that did not commit. A poll that finds
//   the job at another offset than it last handed out (a batch that did not commit) restarts the
//   stream at the job's offset.
// - Quiet tables: when no change is pending and the server reports a later position (its
//   keepalives, or transactions of other tables), an offset-only batch moves the job there at
//   most every ChangeStream::kQuietCommitInterval, so a quiet job never holds WAL back.
// - Schema changes: the stream's Relation messages describe each table as its changes were
//   written (DescribeRelation), which may differ from the catalog at CREATE JOB or at a
//   restart. Each change is decoded and applied with the description in force when it was
//   written (a "shape": 0 is the catalog's, later ones the stream's). FROM ... TO DATABASE
//   makes each target's columns fit the shapes a batch applies (AlterTarget, before the
//   batch's first write to it; the missing values of added columns backfilled before the
//   first change of the shape that has them), so ADD and DROP COLUMN land in the transaction
//   of the changes that follow them; the first shape of each (re)connection is checked too.
//   cdc_stream keeps its target as it is: a Relation message the job's SELECT no longer binds
//   against fails the poll with FAILED_PRECONDITION (the job pauses saying why).
// - Drop removes the slot (ending the walsender holding it) and the publication when the job
//   named it itself (a publication_name given by the user stays), and what an unfinished
//   snapshot left in the embedded database (ChangeStream::DropSnapshotState).
// - Thread-safety: Poll, Committed, TurnEnded and Drop are called by one thread at a time (the
//   job's task, or the statement dropping it after its task ended); Describe from any thread.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cdc/cdc_params.h"
#include "cdc/change_apply.h"
#include "cdc/change_batch.h"
#include "cdc/change_source.h"
#include "cdc/change_stream.h"
#include "cdc/pg_snapshot_reader.h"
#include "cdc/pg_tables.h"
#include "common/clock.h"
#include "common/thread_annotations.h"
#include "job/job_source.h"
#include "pg/lsn.h"
#include "pg/replication.h"

namespace millrace::cdc {

struct PgChangeSourceConfig {
  PgSourceSpec spec;
  std::vector<TableBinding> tables;  // at least one; the snapshot copies them in this order
  Clock* clock = nullptr;            // not owned
  engine::Database* db = nullptr;    // not owned; checks the SELECT after a schema change
  std::string database;              // the job's session database (the SELECT's names)
};

class PgChangeSource final : public ChangeSource<pg::Lsn> {
 public:
  explicit PgChangeSource(PgChangeSourceConfig config);
  ~PgChangeSource() override;

  std::string Describe() const override;
  // The database, schema, tables, and the slot and publication names given.
  std::string FixedUpstream() const override;
  // A warning when the job's slot retains more WAL than the job's cdc.wal_retention_warning
  // (on a connection of its own: a RESUME may start a task meanwhile).
  std::string WhilePaused(const job::JobRecord& job) override;
  // count(*) of each table, on a connection of its own.
  Result<std::vector<job::UpstreamTableRows>> CountRows() const override;

  // The name Millrace gives a job's slot and publication.
  static std::string DefaultName(const job::JobRecord& job);

  // How long a poll waits for the first change of a batch.
  static constexpr std::chrono::milliseconds kStreamWait{200};
  // How long a read ahead waits for more before it looks whether the task asked for it.
  static constexpr std::chrono::milliseconds kGatherWait{10};
  // The longest a poll reads the stream.
  static constexpr std::chrono::seconds kPollBudget{1};

 private:
  // ChangeSource's steps (change_source.h).
  ChangeStream& changes() override { return stream_; }
  void Confirm(const job::Offset& offset) override;
  Status DropUpstream(const job::JobRecord& job) override;
  Result<job::Polled> Start(const job::JobRecord& job, const job::BatchLimits& limits) override;
  Result<pg::Lsn> PositionIn(const job::Offset& offset) const override;
  Result<job::Polled> SnapshotSplit(const job::JobRecord& job, const pg::Lsn& lsn,
                                    const nlohmann::json& position) override;
  Result<job::Polled> Stream(const job::JobRecord& job, const pg::Lsn& lsn,
                             const job::BatchLimits& limits) override;
  Status Receive(const pg::StreamMessage& message);
  // Takes the message's rows into the open transaction (moved, not copied).
  Status Handle(pg::PgOutputMessage& message);
  Result<pg::PgConnection*> Meta();
  void CloseStream() override;
  std::string SlotName(const job::JobRecord& job) const;
  std::string PublicationName(const job::JobRecord& job) const;
  // The binding of a relation announced in the stream, or nullopt when it is not the job's.
  std::optional<size_t> Binding(uint32_t relation) const;
  // A Relation message of table `b`: a new shape when it differs from the latest (and for
  // FROM ... TO DATABASE at the first message of a connection).
  Status Announced(size_t b, const pg::RelationMessage& relation, bool first);

  const PgSourceSpec spec_;
  ChangeStream stream_;
  PgSnapshotReader reader_;  // the task's thread only

  // Owned by the job's task thread (see the contract).
  std::unique_ptr<pg::PgConnection> meta_;
  std::unique_ptr<pg::ReplicationConnection> repl_;
  std::string snapshot_;  // exported by repl_, valid while it is open and idle
  bool streaming_ = false;
  pg::Lsn confirmed_ = 0;
  pg::Lsn server_lsn_ = 0;                 // the server's latest reported position
  pg::Lsn passed_lsn_ = 0;                 // the end of the latest transaction received
  std::optional<SourceTransaction> open_;  // a transaction being received
  std::string created_slot_;               // the slot this source made (its first task may retry)
  std::map<uint32_t, size_t> relations_;   // relation id in this connection -> index in tables
  Clock::SteadyTime last_status_{};
};

}  // namespace millrace::cdc
