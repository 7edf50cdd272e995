#include "cdc/pg_change_source.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>

#include "cdc/pg_slot.h"
#include "common/logging.h"
#include "job/sink.h"
#include "pg/pgoutput.h"

namespace millrace::cdc {
namespace {

using job::Offset;
using nlohmann::json;

constexpr char kLsnPart[] = "lsn";

Offset StreamOffset(pg::Lsn lsn) {
  return Offset().With(kLsnPart, pg::FormatLsn(lsn));
}

// Where the stream stands at `lsn`.
StreamPosition At(pg::Lsn lsn) {
  return StreamPosition{lsn, StreamOffset(lsn), "lsn " + pg::FormatLsn(lsn)};
}

}  // namespace

PgChangeSource::PgChangeSource(PgChangeSourceConfig config)
    : spec_(std::move(config.spec)),
      stream_(ChangeStreamConfig{std::move(config.tables), spec_.whole_database, "FROM POSTGRES",
                                 config.clock, config.db, std::move(config.database)}),
      reader_(spec_.connect, spec_.parallelism, spec_.split_size) {}

PgChangeSource::~PgChangeSource() {
  EndReadAhead();
}

std::string PgChangeSource::Describe() const {
  return "postgres " + pg::Describe(spec_.connect) +
         (stream_.tables().size() == 1 ? " table " : " tables ") + stream_.TableList();
}

std::string PgChangeSource::FixedUpstream() const {
  const PgSourceSpec& spec = spec_;
  return "database " + spec.connect.database + ", tables " + stream_.TableList() +
         (spec.slot_name.empty() ? "" : ", slot " + spec.slot_name) +
         (spec.publication_name.empty() ? "" : ", publication " + spec.publication_name);
}

std::string PgChangeSource::WhilePaused(const job::JobRecord& job) {
  return SlotRetentionNote(spec_.connect, SlotName(job), !job.current_offset.empty(),
                           job.properties.wal_retention_warning_bytes);
}

Result<std::vector<job::UpstreamTableRows>> PgChangeSource::CountRows() const {
  MR_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Connect(spec_.connect));
  return stream_.CountRows([&](const SourceTable& table) -> Result<std::string> {
    MR_ASSIGN_OR_RETURN(pg::Rows rows,
                        conn->Query("SELECT count(*) FROM " + conn->Identifier(table.schema) + "." +
                                    conn->Identifier(table.name)));
    if (rows.rows.size() != 1 || rows.rows[0].empty() || !rows.rows[0][0]) {
      return Status::Internal("count(*) of " + table.Display() + " returned no row");
    }
    return *rows.rows[0][0];
  });
}

std::string PgChangeSource::DefaultName(const job::JobRecord& job) {
  return "millrace_" + std::to_string(job.id) + "_" + std::to_string(job.create_time_us);
}

std::string PgChangeSource::SlotName(const job::JobRecord& job) const {
  return spec_.slot_name.empty() ? DefaultName(job) : spec_.slot_name;
}

std::string PgChangeSource::PublicationName(const job::JobRecord& job) const {
  return spec_.publication_name.empty() ? DefaultName(job) : spec_.publication_name;
}

std::optional<size_t> PgChangeSource::Binding(uint32_t relation) const {
  auto it = relations_.find(relation);
  if (relation == 0 || it == relations_.end()) return std::nullopt;
  return it->second;
}

Result<pg::PgConnection*> PgChangeSource::Meta() {
  // A connection that broke is replaced; one that breaks later fails its statement, and the
  // task's retry (or the next poll) comes back here.
  if (meta_ != nullptr && meta_->healthy()) return meta_.get();
  meta_.reset();
  MR_ASSIGN_OR_RETURN(meta_, pg::PgConnection::Connect(spec_.connect));
  return meta_.get();
}

void PgChangeSource::CloseStream() {
  repl_.reset();
  snapshot_.clear();
  streaming_ = false;
  open_.reset();
  stream_.Reset();
  relations_.clear();
}

Result<pg::Lsn> PgChangeSource::PositionIn(const Offset& offset) const {
  return pg::ParseLsn(offset.Text(kLsnPart));
}

Result<job::Polled> PgChangeSource::Start(const job::JobRecord& job,
                                          const job::BatchLimits& limits) {
  CloseStream();
  stream_.StartOver();  // the first batch makes the targets that do not exist yet
  MR_ASSIGN_OR_RETURN(pg::PgConnection * meta, Meta());
  MR_RETURN_IF_ERROR(CheckReplication(*meta));
  std::vector<const SourceTable*> tables;
  for (const TableBinding& b : stream_.tables())
    tables.push_back(&b.table);
  MR_RETURN_IF_ERROR(EnsurePublication(*meta, PublicationName(job), tables));
  const std::string name = SlotName(job);
  MR_ASSIGN_OR_RETURN(const bool exists, SlotExists(*meta, name));
  if (exists) {
    // A slot of the job's own name, or one this source made for a first task that did not
    // commit, is left from before the job's first commit: nothing of it was used, so it
    // starts over. A slot named by slot_name that this process did not make may be anyone's.
    if (!spec_.slot_name.empty() && created_slot_ != name) {
      return Status::FailedPrecondition(
          "replication slot " + name +
          " exists: the job creates the slot slot_name names, so give a name no slot has (if it "
          "is this job's own, left by a crash before its first commit, drop it with "
          "pg_drop_replication_slot('" +
          name + "'))");
    }
    MR_RETURN_IF_ERROR(DropSlot(*meta, name, stream_.config().clock));
  }
  MR_ASSIGN_OR_RETURN(repl_, pg::ReplicationConnection::Connect(spec_.connect));
  MR_ASSIGN_OR_RETURN(pg::CreatedSlot slot, repl_->CreateSlot(name, spec_.initial));
  created_slot_ = name;
  snapshot_ = slot.snapshot;
  MR_LOG(kInfo) << "job " << job.name << ": created replication slot " << name << " at "
                << pg::FormatLsn(slot.consistent_point);
  if (spec_.initial) return SnapshotSplit(job, slot.consistent_point, json::object());
  // "latest": nothing before the slot's consistent point is copied.
  job::Polled polled;
  const Offset end = stream_.BatchOffset(StreamOffset(slot.consistent_point));
  polled.batch = stream_.MakeBatch(job.current_offset, end, "", "", {}, 0);
  polled.more = true;
  polled.end_offset = end;
  stream_.SetHanded(slot.consistent_point);
  return polled;
}

Result<job::Polled> PgChangeSource::SnapshotSplit(const job::JobRecord& job, const pg::Lsn& lsn,
                                                  const json& position) {
  MR_ASSIGN_OR_RETURN(const SnapshotCursor cursor, stream_.SnapshotAt(position));
  const SourceTable& table = stream_.tables()[cursor.table].table;
  const bool exported = !snapshot_.empty() && repl_ != nullptr && !streaming_;
  MR_ASSIGN_OR_RETURN(SnapshotRead read,
                      reader_.Read(table, cursor.after, exported ? snapshot_ : std::string()));
  if (exported && !read.imported) {
    // Gone with its exporting connection: the rest is read in fresh snapshots (see the
    // contract).
    MR_LOG(kInfo) << Describe() << ": the exported snapshot is gone; reading the rest of "
                  << table.Display() << " in a fresh one";
    snapshot_.clear();
  }
  job::Polled polled =
      stream_.SnapshotBatch(job, cursor, std::move(read.rows), read.bytes, read.done, At(lsn),
                            StreamOffset(std::max(lsn, server_lsn_)));
  // The exported snapshot is no longer needed once the last table is copied.
  if (!polled.batch->end().parts().contains(kSnapshotPart)) snapshot_.clear();
  return polled;
}

Result<job::Polled> PgChangeSource::Stream(const job::JobRecord& job, const pg::Lsn& lsn,
                                           const job::BatchLimits& limits) {
  if (std::optional<Status> failure = stream_.TakeDeferred()) {
    // The failure met after the transactions the last batch handed out (Stream below).
    return std::move(*failure);
  }
  const auto now = stream_.config().clock->SteadyNow();
  if (streaming_ && stream_.handed() != lsn) {
    // The last batch handed out did not commit: its changes are read again from the slot.
    CloseStream();
  }
  if (!streaming_) {
    repl_.reset();
    snapshot_.clear();
    MR_ASSIGN_OR_RETURN(repl_, pg::ReplicationConnection::Connect(spec_.connect));
    MR_RETURN_IF_ERROR(repl_->Start(SlotName(job), PublicationName(job), lsn));
    streaming_ = true;
    stream_.Restarted(lsn);
    confirmed_ = std::max(confirmed_, lsn);
    // Positions describe this connection only: one reported by a closed connection may lie
    // past transactions this one has yet to send (a quiet batch there would skip them).
    passed_lsn_ = lsn;
    server_lsn_ = lsn;
    reader_.Close();  // the snapshot is over
    MR_LOG(kInfo) << "job " << job.name << ": streaming from " << pg::FormatLsn(lsn);
  }
  if (now - last_status_ >= std::chrono::seconds(1)) {
    // Asks for a keepalive: it carries the server's position, which moves a quiet job.
    MR_RETURN_IF_ERROR(repl_->SendStatus(confirmed_, /*reply=*/true));
    last_status_ = now;
  }

  // A poll ends within kPollBudget whatever flows (other tables' changes keep the stream busy):
  // a transaction being received stays in open_ for the next poll, and PAUSE or DROP never
  // waits long for the task.
  const auto deadline = now + kPollBudget;
  std::chrono::milliseconds wait = kStreamWait;
  while (!stream_.Full(limits) && stream_.config().clock->SteadyNow() < deadline) {
    MR_ASSIGN_OR_RETURN(std::optional<pg::StreamMessage> message, repl_->Next(wait));
    if (!message && !open_ && !Gathering()) break;  // nothing more now
    if (Status received = message ? Receive(*message) : Status::Ok(); !received.ok()) {
      if (!stream_.has_ready()) return received;
      // The whole transactions before the failure go first; the failure comes back at the next
      // poll, so the job stops exactly before the change that failed (a schema change its
      // SELECT does not fit), and an ALTER JOB takes it from there.
      stream_.Defer(std::move(received));
      open_.reset();
      break;
    }
    // A transaction arriving is waited for to its end; a read ahead looks again shortly, until
    // the task asks for its batch; whole transactions in hand are taken with what has already
    // arrived, without waiting for more; with none, the poll waits for a first change.
    if (open_) {
      wait = kStreamWait;
    } else if (Gathering()) {
      wait = kGatherWait;
    } else {
      wait = stream_.has_ready() ? std::chrono::milliseconds(0) : kStreamWait;
    }
  }

  const pg::Lsn newest = std::max({server_lsn_, passed_lsn_, lsn});
  std::optional<StreamPosition> quiet;
  if (!stream_.has_ready()) quiet = At(open_ ? passed_lsn_ : std::max(passed_lsn_, server_lsn_));
  return stream_.TakeBatch(job, At(lsn), limits, quiet, StreamOffset(newest),
                           static_cast<int64_t>(newest - lsn));
}

Status PgChangeSource::Announced(size_t b, const pg::RelationMessage& relation, bool first) {
  const SourceTable& latest = stream_.Latest(b);
  bool same = relation.columns.size() == latest.columns.size();
  for (size_t i = 0; same && i < latest.columns.size(); ++i) {
    same = relation.columns[i].name == latest.columns[i].name &&
           relation.columns[i].type_oid == latest.columns[i].type_id;
  }
  // The database form checks its target against the first description of a connection (the
  // target follows the committed position, which the catalog may have left behind): a shape
  // other than the catalog's (0) is checked at every batch, so an equal one is reused.
  if (same && !(first && spec_.whole_database && stream_.OnlyCatalogShape(b))) {
    return Status::Ok();
  }
  MR_ASSIGN_OR_RETURN(pg::PgConnection * meta, Meta());
  MR_ASSIGN_OR_RETURN(SourceTable shape,
                      DescribeRelation(*meta, stream_.tables()[b].table, relation));
  return stream_.AddShape(b, std::move(shape));
}

Status PgChangeSource::Receive(const pg::StreamMessage& message) {
  server_lsn_ = std::max(server_lsn_, message.wal_end);
  if (message.kind == pg::StreamMessage::Kind::kKeepalive) {
    if (message.reply_requested) return repl_->SendStatus(confirmed_, /*reply=*/false);
    return Status::Ok();
  }
  MR_ASSIGN_OR_RETURN(pg::PgOutputMessage decoded, pg::DecodePgOutput(message.data));
  return Handle(decoded);
}

Status PgChangeSource::Handle(pg::PgOutputMessage& message) {
  auto Shape = [&](size_t b) { return stream_.Shape(b); };
  auto need_open = [&](const char* what) -> Status {
    if (open_) return Status::Ok();
    return Status::DataLoss(std::string("the replication stream sent ") + what +
                            " outside a transaction");
  };
  if (const auto* begin = std::get_if<pg::BeginMessage>(&message)) {
    open_ = SourceTransaction{At(begin->final_lsn), {}};
    return Status::Ok();
  }
  if (const auto* commit = std::get_if<pg::CommitMessage>(&message)) {
    MR_RETURN_IF_ERROR(need_open("a commit"));
    SourceTransaction t = std::move(*open_);
    open_.reset();
    t.end = At(commit->end_lsn);
    passed_lsn_ = std::max(passed_lsn_, commit->end_lsn);
    stream_.Received(std::move(t));
    return Status::Ok();
  }
  if (const auto* relation = std::get_if<pg::RelationMessage>(&message)) {
    for (size_t b = 0; b < stream_.tables().size(); ++b) {
      const SourceTable& table = stream_.tables()[b].table;
      if (stream_.active(b) && table.oid == relation->oid &&
          (relation->schema != table.schema || relation->name != table.name)) {
        return Status::FailedPrecondition(
            table.Display() + " was renamed to " + relation->schema + "." + relation->name +
            "; the job follows its tables by name: recreate the job for the new name");
      }
      if (!stream_.active(b) || relation->schema != table.schema || relation->name != table.name) {
        continue;
      }
      bool first = true;
      for (const auto& [oid, known] : relations_)
        first = first && known != b;
      MR_RETURN_IF_ERROR(Announced(b, *relation, first));
      relations_[relation->oid] = b;
    }
    return Status::Ok();
  }
  if (auto* insert = std::get_if<pg::InsertMessage>(&message)) {
    MR_RETURN_IF_ERROR(need_open("an insert"));
    const std::optional<size_t> b = Binding(insert->relation);
    if (!b) return Status::Ok();
    open_->changes.push_back(
        Change{Change::Kind::kUpsert, std::move(insert->row), {}, *b, Shape(*b)});
    return Status::Ok();
  }
  if (auto* update = std::get_if<pg::UpdateMessage>(&message)) {
    MR_RETURN_IF_ERROR(need_open("an update"));
    const std::optional<size_t> b = Binding(update->relation);
    if (!b) return Status::Ok();
    const SourceTable& table = stream_.Latest(*b);
    if (update->old_kind != 0) {
      // The key changed (or the whole old row came): the old key's row goes first.
      bool key_changed = false;
      for (size_t k : table.key) {
        key_changed = key_changed || k >= update->old_row.size() ||
                      update->old_row[k].text != update->row[k].text;
      }
      if (key_changed) {
        change::Tuple old_key(table.columns.size());
        for (size_t k : table.key) {
          if (k < update->old_row.size()) old_key[k] = update->old_row[k];
        }
        open_->changes.push_back(
            Change{Change::Kind::kDelete, std::move(old_key), {}, *b, Shape(*b)});
      }
    }
    open_->changes.push_back(Change{
        Change::Kind::kUpsert, std::move(update->row),
        update->old_kind == 'O' ? std::move(update->old_row) : change::Tuple(), *b, Shape(*b)});
    return Status::Ok();
  }
  if (const auto* del = std::get_if<pg::DeleteMessage>(&message)) {
    MR_RETURN_IF_ERROR(need_open("a delete"));
    const std::optional<size_t> b = Binding(del->relation);
    if (!b) return Status::Ok();
    const SourceTable& table = stream_.Latest(*b);
    change::Tuple key(table.columns.size());
    for (size_t k : table.key) {
      if (k < del->old_row.size()) key[k] = del->old_row[k];
    }
    open_->changes.push_back(Change{Change::Kind::kDelete, std::move(key), {}, *b, Shape(*b)});
    return Status::Ok();
  }
  if (const auto* truncate = std::get_if<pg::TruncateMessage>(&message)) {
    MR_RETURN_IF_ERROR(need_open("a truncate"));
    for (uint32_t relation : truncate->relations) {
      if (const std::optional<size_t> b = Binding(relation)) {
        open_->changes.push_back(Change{Change::Kind::kTruncate, {}, {}, *b, Shape(*b)});
      }
    }
    return Status::Ok();
  }
  return Status::Ok();  // Type, Origin, logical messages
}

void PgChangeSource::Confirm(const Offset& offset) {
  auto lsn = pg::ParseLsn(offset.Text(kLsnPart));
  if (!lsn.ok() || offset.parts().contains(kSnapshotPart)) return;
  confirmed_ = std::max(confirmed_, *lsn);
  if (!streaming_ || repl_ == nullptr) return;  // sent with the first status once streaming
  if (Status sent = repl_->SendStatus(confirmed_, /*reply=*/false); !sent.ok()) {
    // The next poll finds the connection broken and reconnects; the confirmation goes then.
    MR_LOG(kInfo) << Describe() << ": " << sent.ToString();
  }
}

Status PgChangeSource::DropUpstream(const job::JobRecord& job) {
  CloseStream();
  reader_.Close();
  MR_RETURN_IF_ERROR(stream_.DropSnapshotState(job.id));
  const std::string name = SlotName(job);
  auto meta = Meta();
  if (!meta.ok()) {
    return meta.status().WithContext("replication slot " + name +
                                     " was not dropped (drop it "
                                     "with pg_drop_replication_slot)");
  }
  pg::PgConnection* conn = *meta;
  Status dropped = DropSlot(*conn, name, stream_.config().clock);
  if (dropped.ok() && spec_.publication_name.empty()) {
    dropped = conn->Execute("DROP PUBLICATION IF EXISTS " + conn->Identifier(PublicationName(job)));
  }
  meta_.reset();
  if (!dropped.ok()) {
    return dropped.WithContext("replication slot or publication " + name + " was not dropped");
  }
  return Status::Ok();
}

}  // namespace millrace::cdc
