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
constexpr char kSnapshotPart[] = "snapshot";
constexpr char kTablesPart[] = "tables";

Offset StreamOffset(pg::Lsn lsn) {
  return Offset().With(kLsnPart, pg::FormatLsn(lsn));
}

int64_t TupleBytes(const change::Tuple& tuple) {
  int64_t bytes = 0;
  for (const change::TupleValue& v : tuple)
    bytes += static_cast<int64_t>(v.text.size());
  return bytes;
}

// The names of the job's SELECT's output columns over `source`.
Result<std::vector<std::string>> SelectColumns(engine::Connection& conn, const SourceTable& source,
                                               ApplyTarget* target) {
  MR_RETURN_IF_ERROR(CheckSelect(conn, source, target));
  MR_ASSIGN_OR_RETURN(auto result,
                      conn.Query("SELECT * FROM (" + target->select_sql + ") LIMIT 0"));
  std::vector<std::string> names;
  for (size_t i = 0; i < result->column_count(); ++i)
    names.push_back(result->column_name(i));
  return names;
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names)
    out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

size_t PgChangeSource::NextActive(size_t from) const {
  while (from < config_.tables.size() && !active_[from])
    ++from;
  return from;
}

PgChangeSource::PgChangeSource(PgChangeSourceConfig config)
    : config_(std::move(config)),
      reader_(config_.spec.connect, config_.spec.parallelism, config_.spec.split_size),
      active_(config_.tables.size(), true) {
  for (const TableBinding& b : config_.tables)
    shapes_.push_back({std::make_shared<const SourceTable>(b.table)});
}

std::unique_ptr<job::SourceBatch> PgChangeSource::MakeBatch(Offset start, Offset end,
                                                            std::string first, std::string last,
                                                            std::vector<Change> changes,
                                                            int64_t bytes) {
  auto batch = std::make_unique<ChangeBatch>(
      std::move(start), std::move(end), std::move(first), std::move(last), std::move(changes),
      bytes, &config_.tables, shapes_, config_.spec.whole_database, make_targets_);
  make_targets_ = false;
  return batch;
}

PgChangeSource::~PgChangeSource() = default;

std::string PgChangeSource::Describe() const {
  std::string tables;
  for (const TableBinding& b : config_.tables)
    tables += (tables.empty() ? "" : ", ") + b.table.Display();
  return "postgres " + pg::Describe(config_.spec.connect) +
         (config_.tables.size() == 1 ? " table " : " tables ") + tables;
}

Offset PgChangeSource::BatchOffset(pg::Lsn lsn) const {
  Offset offset = StreamOffset(lsn);
  if (!config_.spec.whole_database) return offset;
  json tables = json::array();
  for (size_t b = 0; b < config_.tables.size(); ++b) {
    if (active_[b]) tables.push_back(config_.tables[b].table.Display());
  }
  return offset.With(kTablesPart, tables);
}

Status PgChangeSource::FollowOffsetTables(const Offset& offset) {
  if (!offset.parts().contains(kTablesPart)) return Status::Ok();  // one table, or no list yet
  const json& listed = offset.parts()[kTablesPart];
  std::vector<bool> active(config_.tables.size(), false);
  for (const json& name : listed) {
    size_t b = 0;
    while (b < config_.tables.size() && config_.tables[b].table.Display() != name)
      ++b;
    if (b == config_.tables.size()) {
      return Status::FailedPrecondition(
          "the job follows " + name.get<std::string>() +
          ", which is no longer among the tables its FROM POSTGRES names; recreate the job");
    }
    active[b] = true;
  }
  for (size_t b = 0; b < config_.tables.size(); ++b) {
    if (!active[b] && active_[b]) {
      MR_LOG(kWarning) << Describe() << ": " << config_.tables[b].table.Display()
                       << " appeared after the job started and is not followed (recreate the "
                          "job to follow it)";
    }
  }
  active_ = std::move(active);
  return Status::Ok();
}

std::string PgChangeSource::FixedUpstream() const {
  const PgSourceSpec& spec = config_.spec;
  std::string tables;
  for (const TableBinding& b : config_.tables)
    tables += (tables.empty() ? "" : ", ") + b.table.Display();
  return "database " + spec.connect.database + ", tables " + tables +
         (spec.slot_name.empty() ? "" : ", slot " + spec.slot_name) +
         (spec.publication_name.empty() ? "" : ", publication " + spec.publication_name);
}

std::string PgChangeSource::WhilePaused(const job::JobRecord& job) {
  return SlotRetentionNote(config_.spec.connect, SlotName(job), !job.current_offset.empty(),
                           job.properties.wal_retention_warning_bytes);
}

std::string PgChangeSource::DefaultName(const job::JobRecord& job) {
  return "millrace_" + std::to_string(job.id) + "_" + std::to_string(job.create_time_us);
}

std::string PgChangeSource::SlotName(const job::JobRecord& job) const {
  return config_.spec.slot_name.empty() ? DefaultName(job) : config_.spec.slot_name;
}

std::string PgChangeSource::PublicationName(const job::JobRecord& job) const {
  return config_.spec.publication_name.empty() ? DefaultName(job) : config_.spec.publication_name;
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
  MR_ASSIGN_OR_RETURN(meta_, pg::PgConnection::Connect(config_.spec.connect));
  return meta_.get();
}

void PgChangeSource::CloseStream() {
  repl_.reset();
  snapshot_.clear();
  streaming_ = false;
  open_.reset();
  ready_.clear();
  ready_count_ = 0;
  handed_.reset();
  relations_.clear();
}

Result<job::Polled> PgChangeSource::Poll(const job::JobRecord& job,
                                         const job::BatchLimits& limits) {
  const Offset& offset = job.current_offset;
  if (offset.empty()) return Start(job, limits);
  MR_RETURN_IF_ERROR(FollowOffsetTables(offset));
  MR_ASSIGN_OR_RETURN(const pg::Lsn lsn, pg::ParseLsn(offset.Text(kLsnPart)));
  if (offset.parts().contains(kSnapshotPart)) {
    return SnapshotSplit(job, lsn, offset.parts()[kSnapshotPart]);
  }
  auto polled = Stream(job, lsn, limits);
  if (!polled.ok() && polled.status().code() == StatusCode::kUnavailable) {
    // A broken replication connection (a server restart, a timeout while the job was idle):
    // once more on a new one, from the job's offset.
    MR_LOG(kInfo) << Describe() << ": " << polled.status().ToString() << "; reconnecting";
    CloseStream();
    polled = Stream(job, lsn, limits);
  }
  if (!polled.ok()) CloseStream();
  return polled;
}

Result<job::Polled> PgChangeSource::Start(const job::JobRecord& job,
                                          const job::BatchLimits& limits) {
  CloseStream();
  active_.assign(config_.tables.size(), true);
  make_targets_ = true;  // the first batch makes the targets that do not exist yet
  MR_ASSIGN_OR_RETURN(pg::PgConnection * meta, Meta());
  MR_RETURN_IF_ERROR(CheckReplication(*meta));
  std::vector<const SourceTable*> tables;
  for (const TableBinding& b : config_.tables)
    tables.push_back(&b.table);
  MR_RETURN_IF_ERROR(EnsurePublication(*meta, PublicationName(job), tables));
  const std::string name = SlotName(job);
  MR_ASSIGN_OR_RETURN(const bool exists, SlotExists(*meta, name));
  if (exists) {
    // A slot of the job's own name, or one this source made for a first task that did not
    // commit, is left from before the job's first commit: nothing of it was used, so it
    // starts over. A slot named by slot_name that this process did not make may be anyone's.
    if (!config_.spec.slot_name.empty() && created_slot_ != name) {
      return Status::FailedPrecondition(
          "replication slot " + name +
          " exists: the job creates the slot slot_name names, so give a name no slot has (if it "
          "is this job's own, left by a crash before its first commit, drop it with "
          "pg_drop_replication_slot('" +
          name + "'))");
    }
    MR_RETURN_IF_ERROR(DropSlot(*meta, name, config_.clock));
  }
  MR_ASSIGN_OR_RETURN(repl_, pg::ReplicationConnection::Connect(config_.spec.connect));
  MR_ASSIGN_OR_RETURN(pg::CreatedSlot slot, repl_->CreateSlot(name, config_.spec.initial));
  created_slot_ = name;
  snapshot_ = slot.snapshot;
  MR_LOG(kInfo) << "job " << job.name << ": created replication slot " << name << " at "
                << pg::FormatLsn(slot.consistent_point);
  if (config_.spec.initial) return SnapshotSplit(job, slot.consistent_point, json::object());
  // "latest": nothing before the slot's consistent point is copied.
  job::Polled polled;
  const Offset end = BatchOffset(slot.consistent_point);
  polled.batch = MakeBatch(job.current_offset, end, "", "", {}, 0);
  polled.more = true;
  polled.end_offset = end;
  handed_ = slot.consistent_point;
  return polled;
}

Result<job::Polled> PgChangeSource::SnapshotSplit(const job::JobRecord& job, pg::Lsn lsn,
                                                  const json& position) {
  size_t index = 0;
  if (position.is_object() && position.contains("table")) {
    const std::string name = position.value("table", "");
    while (index < config_.tables.size() && config_.tables[index].table.Display() != name)
      ++index;
    if (index == config_.tables.size()) {
      return Status::FailedPrecondition("the job's snapshot was copying " + name +
                                        ", which is no longer one of its tables");
    }
  }
  const json after = position.is_object() ? position.value("after", json()) : json();
  const SourceTable& table = config_.tables[index].table;
  json key_names = json::array();
  for (size_t k : table.key)
    key_names.push_back(table.columns[k].name);
  // The key the position was taken on: another one (the primary key changed during the
  // snapshot) would read its values as this key's.
  if (after.is_array() && position.contains("key") && position["key"] != key_names) {
    return Status::FailedPrecondition("the primary key of " + table.Display() + " changed (from " +
                                      position["key"].dump() + " to " + key_names.dump() +
                                      ") while the job copied it; recreate the job");
  }
  std::vector<std::string> after_key;
  if (after.is_array()) {
    for (const json& v : after)
      after_key.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  }
  const bool exported = !snapshot_.empty() && repl_ != nullptr && !streaming_;
  MR_ASSIGN_OR_RETURN(SnapshotRead read,
                      reader_.Read(table, after_key, exported ? snapshot_ : std::string()));
  if (exported && !read.imported) {
    // Gone with its exporting connection: the rest is read in fresh snapshots (see the
    // contract).
    MR_LOG(kInfo) << Describe() << ": the exported snapshot is gone; reading the rest of "
                  << table.Display() << " in a fresh one";
    snapshot_.clear();
  }
  std::vector<Change> changes;
  changes.reserve(read.rows.size());
  for (change::Tuple& row : read.rows)
    changes.push_back(Change{Change::Kind::kUpsert, std::move(row), {}, index, 0});
  const int64_t bytes = read.bytes;
  const bool done = read.done;

  Offset end = BatchOffset(lsn);
  json last_key = json::array();
  if (!changes.empty()) {
    for (size_t k : table.key)
      last_key.push_back(changes.back().row[k].text);
  }
  if (!done) {
    end = end.With(kSnapshotPart,
                   json{{"table", table.Display()}, {"key", key_names}, {"after", last_key}});
  } else if (size_t next = NextActive(index + 1); next < config_.tables.size()) {
    // The next table, from its first row, in the same exported snapshot.
    end = end.With(kSnapshotPart,
                   json{{"table", config_.tables[next].table.Display()}, {"after", nullptr}});
  } else {
    snapshot_.clear();
  }
  const std::string first =
      changes.empty() ? "" : "snapshot " + table.Display() + " after " + after.dump();
  const std::string last = changes.empty() ? "" : "snapshot key " + last_key.dump();
  job::Polled polled;
  polled.batch = MakeBatch(job.current_offset, end, first, last, std::move(changes), bytes);
  polled.more = true;
  polled.end_offset = StreamOffset(std::max(lsn, server_lsn_));
  handed_ = lsn;
  return polled;
}

Result<job::Polled> PgChangeSource::Stream(const job::JobRecord& job, pg::Lsn lsn,
                                           const job::BatchLimits& limits) {
  if (deferred_) {
    // The failure met after the transactions the last batch handed out (Stream below).
    Status failure = std::move(*deferred_);
    deferred_.reset();
    return failure;
  }
  const auto now = config_.clock->SteadyNow();
  if (streaming_ && handed_ != lsn) {
    // The last batch handed out did not commit: its changes are read again from the slot.
    CloseStream();
  }
  if (!streaming_) {
    repl_.reset();
    snapshot_.clear();
    MR_ASSIGN_OR_RETURN(repl_, pg::ReplicationConnection::Connect(config_.spec.connect));
    MR_RETURN_IF_ERROR(repl_->Start(SlotName(job), PublicationName(job), lsn));
    streaming_ = true;
    handed_ = lsn;
    confirmed_ = std::max(confirmed_, lsn);
    // Positions describe this connection only: one reported by a closed connection may lie
    // past transactions this one has yet to send (a quiet batch there would skip them).
    passed_lsn_ = lsn;
    server_lsn_ = lsn;
    last_batch_ = now;
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
  while (ready_count_ < limits.max_items && config_.clock->SteadyNow() < deadline) {
    MR_ASSIGN_OR_RETURN(std::optional<pg::StreamMessage> message, repl_->Next(wait));
    if (!message) {
      if (!open_) break;   // nothing more now
      wait = kStreamWait;  // a transaction is arriving: wait for its end
      continue;
    }
    if (Status received = Receive(*message); !received.ok()) {
      if (ready_.empty()) return received;
      // The whole transactions before the failure go first; the failure comes back at the next
      // poll, so the job stops exactly before the change that failed (a schema change its
      // SELECT does not fit), and an ALTER JOB takes it from there.
      deferred_ = std::move(received);
      open_.reset();
      break;
    }
    // Whole transactions in hand: take what has already arrived, without waiting for more.
    wait = ready_.empty() || open_ ? kStreamWait : std::chrono::milliseconds(0);
  }

  job::Polled polled;
  if (!ready_.empty()) {
    std::vector<Change> changes;
    int64_t bytes = 0;
    pg::Lsn end = lsn;
    for (Transaction& t : TakeReady(limits.max_items)) {
      for (Change& c : t.changes) {
        bytes += TupleBytes(c.row);
        changes.push_back(std::move(c));
      }
      end = t.end;
    }
    polled.batch = MakeBatch(job.current_offset, BatchOffset(end), "lsn " + pg::FormatLsn(lsn),
                             "lsn " + pg::FormatLsn(end), std::move(changes), bytes);
    // Changes are flowing: the next poll comes at once and waits on the stream (kStreamWait)
    // for more, instead of after max_interval; an idle stream is polled every max_interval.
    polled.more = true;
    handed_ = end;
    last_batch_ = now;
  } else {
    const pg::Lsn quiet = open_ ? passed_lsn_ : std::max(passed_lsn_, server_lsn_);
    if (quiet > lsn && now - last_batch_ >= kQuietCommitInterval) {
      polled.batch = MakeBatch(job.current_offset, BatchOffset(quiet), "", "", {}, 0);
      handed_ = quiet;
      last_batch_ = now;
    }
  }
  const pg::Lsn newest = std::max({server_lsn_, passed_lsn_, lsn});
  polled.end_offset = StreamOffset(newest);
  polled.lag_bytes = static_cast<int64_t>(newest - lsn);
  polled.lag_items = ready_count_ + (polled.batch ? polled.batch->items() : 0);
  return polled;
}

std::vector<PgChangeSource::Transaction> PgChangeSource::TakeReady(int64_t max_items) {
  std::vector<Transaction> taken;
  int64_t items = 0;
  while (!ready_.empty()) {
    const Transaction& next = ready_.front();
    if (!taken.empty()) {
      if (items + static_cast<int64_t>(next.changes.size()) > max_items) break;
    }
    items += static_cast<int64_t>(next.changes.size());
    ready_count_ -= static_cast<int64_t>(next.changes.size());
    taken.push_back(std::move(ready_.front()));
    ready_.pop_front();
  }
  return taken;
}

Status PgChangeSource::Announced(size_t b, const pg::RelationMessage& relation, bool first) {
  const SourceTable& latest = *shapes_[b].back();
  bool same = relation.columns.size() == latest.columns.size();
  for (size_t i = 0; same && i < latest.columns.size(); ++i) {
    same = relation.columns[i].name == latest.columns[i].name &&
           relation.columns[i].type_oid == latest.columns[i].type_id;
  }
  // The database form checks its target against the first description of a connection (the
  // target follows the committed position, which the catalog may have left behind): a shape
  // other than the catalog's (0) is checked at every batch, so an equal one is reused.
  if (same && !(first && config_.spec.whole_database && shapes_[b].size() == 1)) {
    return Status::Ok();
  }
  MR_ASSIGN_OR_RETURN(pg::PgConnection * meta, Meta());
  const TableBinding& binding = config_.tables[b];
  MR_ASSIGN_OR_RETURN(SourceTable shape, DescribeRelation(*meta, binding.table, relation));
  if (!config_.spec.whole_database) {
    ApplyTarget target = binding.target;
    MR_ASSIGN_OR_RETURN(auto conn, config_.db->Connect());
    MR_RETURN_IF_ERROR(job::UseDatabase(*conn, config_.database));
    // Binding the SELECT over the new columns names its output too.
    auto now = SelectColumns(*conn, shape, &target);
    Status bound = now.status();
    if (now.ok()) {
      // A SELECT that still binds may map other source columns to the target's (SELECT * of
      // reordered columns): its output columns must keep their names.
      ApplyTarget before = binding.target;
      MR_ASSIGN_OR_RETURN(std::vector<std::string> was, SelectColumns(*conn, latest, &before));
      if (was != *now) {
        bound = Status::FailedPrecondition("it would now fill the target's columns from " +
                                           Join(*now) + " instead of " + Join(was));
      }
    }
    if (!bound.ok()) {
      std::string now;
      for (const SourceColumn& c : shape.columns)
        now += (now.empty() ? "" : ", ") + c.name + " " + c.type_name;
      return Status::FailedPrecondition(
          "the columns of " + shape.Display() + " changed (now: " + now +
          ") and the job's SELECT no longer fits them: " + bound.message() +
          "; ALTER JOB with a SELECT that does, or recreate the job");
    }
  }
  MR_LOG(kInfo) << Describe() << ": " << shape.Display() << " now has " << shape.columns.size()
                << " columns";
  shapes_[b].push_back(std::make_shared<const SourceTable>(std::move(shape)));
  return Status::Ok();
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

Status PgChangeSource::Handle(const pg::PgOutputMessage& message) {
  auto Shape = [&](size_t b) { return static_cast<uint32_t>(shapes_[b].size() - 1); };
  auto need_open = [&](const char* what) -> Status {
    if (open_) return Status::Ok();
    return Status::DataLoss(std::string("the replication stream sent ") + what +
                            " outside a transaction");
  };
  if (const auto* begin = std::get_if<pg::BeginMessage>(&message)) {
    open_ = Transaction{begin->final_lsn, {}};
    return Status::Ok();
  }
  if (const auto* commit = std::get_if<pg::CommitMessage>(&message)) {
    MR_RETURN_IF_ERROR(need_open("a commit"));
    Transaction t = std::move(*open_);
    open_.reset();
    t.end = commit->end_lsn;
    passed_lsn_ = std::max(passed_lsn_, t.end);
    // Transactions at or below the job's offset were applied before (a restart replays them).
    if (t.end > handed_.value_or(0) && !t.changes.empty()) {
      ready_count_ += static_cast<int64_t>(t.changes.size());
      ready_.push_back(std::move(t));
    }
    return Status::Ok();
  }
  if (const auto* relation = std::get_if<pg::RelationMessage>(&message)) {
    for (size_t b = 0; b < config_.tables.size(); ++b) {
      const SourceTable& table = config_.tables[b].table;
      if (active_[b] && table.oid == relation->oid &&
          (relation->schema != table.schema || relation->name != table.name)) {
        return Status::FailedPrecondition(
            table.Display() + " was renamed to " + relation->schema + "." + relation->name +
            "; the job follows its tables by name: recreate the job for the new name");
      }
      if (!active_[b] || relation->schema != table.schema || relation->name != table.name) {
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
  if (const auto* insert = std::get_if<pg::InsertMessage>(&message)) {
    MR_RETURN_IF_ERROR(need_open("an insert"));
    const std::optional<size_t> b = Binding(insert->relation);
    if (!b) return Status::Ok();
    open_->changes.push_back(Change{Change::Kind::kUpsert, insert->row, {}, *b, Shape(*b)});
    return Status::Ok();
  }
  if (const auto* update = std::get_if<pg::UpdateMessage>(&message)) {
    MR_RETURN_IF_ERROR(need_open("an update"));
    const std::optional<size_t> b = Binding(update->relation);
    if (!b) return Status::Ok();
    const SourceTable& table = *shapes_[*b].back();
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
    open_->changes.push_back(Change{Change::Kind::kUpsert, update->row,
                                    update->old_kind == 'O' ? update->old_row : change::Tuple(), *b,
                                    Shape(*b)});
    return Status::Ok();
  }
  if (const auto* del = std::get_if<pg::DeleteMessage>(&message)) {
    MR_RETURN_IF_ERROR(need_open("a delete"));
    const std::optional<size_t> b = Binding(del->relation);
    if (!b) return Status::Ok();
    const SourceTable& table = *shapes_[*b].back();
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

void PgChangeSource::Committed(const Offset& offset) {
  auto lsn = pg::ParseLsn(offset.Text(kLsnPart));
  if (!lsn.ok() || offset.parts().contains(kSnapshotPart)) return;
  confirmed_ = std::max(confirmed_, *lsn);
  if (!streaming_ || repl_ == nullptr) return;  // sent with the first status once streaming
  if (Status sent = repl_->SendStatus(confirmed_, /*reply=*/false); !sent.ok()) {
    // The next poll finds the connection broken and reconnects; the confirmation goes then.
    MR_LOG(kInfo) << Describe() << ": " << sent.ToString();
  }
}

Status PgChangeSource::Drop(const job::JobRecord& job) {
  CloseStream();
  reader_.Close();
  const std::string name = SlotName(job);
  auto meta = Meta();
  if (!meta.ok()) {
    return meta.status().WithContext("replication slot " + name +
                                     " was not dropped (drop it "
                                     "with pg_drop_replication_slot)");
  }
  pg::PgConnection* conn = *meta;
  Status dropped = DropSlot(*conn, name, config_.clock);
  if (dropped.ok() && config_.spec.publication_name.empty()) {
    dropped = conn->Execute("DROP PUBLICATION IF EXISTS " + conn->Identifier(PublicationName(job)));
  }
  meta_.reset();
  if (!dropped.ok()) {
    return dropped.WithContext("replication slot or publication " + name + " was not dropped");
  }
  return Status::Ok();
}

}  // namespace millrace::cdc
