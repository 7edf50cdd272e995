#include "cdc/change_stream.h"

#include <limits>
#include <utility>

#include "common/logging.h"
#include "common/strings.h"
#include "job/sink.h"

namespace millrace::cdc {
namespace {

using job::Offset;
using nlohmann::json;

constexpr char kTablesPart[] = "tables";

int64_t TupleBytes(const change::Tuple& tuple) {
  int64_t bytes = 0;
  for (const change::TupleValue& v : tuple)
    bytes += static_cast<int64_t>(v.text.size());
  return bytes;
}

int64_t TransactionBytes(const SourceTransaction& transaction) {
  int64_t bytes = 0;
  for (const Change& c : transaction.changes)
    bytes += TupleBytes(c.row);
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

ChangeStream::ChangeStream(ChangeStreamConfig config)
    : config_(std::move(config)), active_(config_.tables.size(), true) {
  for (const TableBinding& b : config_.tables)
    shapes_.push_back({std::make_shared<const SourceTable>(b.table)});
}

std::string ChangeStream::TableList() const {
  std::string tables;
  for (const TableBinding& b : config_.tables)
    tables += (tables.empty() ? "" : ", ") + b.table.Display();
  return tables;
}

Result<std::vector<job::UpstreamTableRows>> ChangeStream::CountRows(
    const std::function<Result<std::string>(const SourceTable&)>& count) const {
  std::vector<job::UpstreamTableRows> out;
  for (const TableBinding& b : config_.tables) {
    MR_ASSIGN_OR_RETURN(std::string text, count(b.table));
    const std::optional<int64_t> rows = ParseInt64(text);
    if (!rows) {
      return Status::Internal("count(*) of " + b.table.Display() + " is not a number: " + text);
    }
    out.push_back(
        job::UpstreamTableRows{b.table.Display(), *rows, b.target.def.database, b.target.def.name});
  }
  return out;
}

void ChangeStream::StartOver() {
  active_.assign(config_.tables.size(), true);
  make_targets_ = true;
}

size_t ChangeStream::NextActive(size_t from) const {
  while (from < config_.tables.size() && !active_[from])
    ++from;
  return from;
}

Offset ChangeStream::BatchOffset(const Offset& position) const {
  if (!config_.whole_database) return position;
  json tables = json::array();
  for (size_t b = 0; b < config_.tables.size(); ++b) {
    if (active_[b]) tables.push_back(config_.tables[b].table.Display());
  }
  return position.With(kTablesPart, tables);
}

Status ChangeStream::FollowOffsetTables(const Offset& offset) {
  if (!offset.parts().contains(kTablesPart)) return Status::Ok();  // one table, or no list yet
  const json& listed = offset.parts()[kTablesPart];
  std::vector<bool> active(config_.tables.size(), false);
  for (const json& name : listed) {
    size_t b = 0;
    while (b < config_.tables.size() && config_.tables[b].table.Display() != name)
      ++b;
    if (b == config_.tables.size()) {
      return Status::FailedPrecondition("the job follows " + name.get<std::string>() +
                                        ", which is no longer among the tables its " +
                                        config_.form + " names; recreate the job");
    }
    active[b] = true;
  }
  for (size_t b = 0; b < config_.tables.size(); ++b) {
    if (!active[b] && active_[b]) {
      MR_LOG(kWarning) << config_.form << " " << TableList() << ": "
                       << config_.tables[b].table.Display()
                       << " appeared after the job started and is not followed (recreate the "
                          "job to follow it)";
    }
  }
  active_ = std::move(active);
  return Status::Ok();
}

Status ChangeStream::AddShape(size_t b, SourceTable shape) {
  const TableBinding& binding = config_.tables[b];
  if (!config_.whole_database) {
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
      MR_ASSIGN_OR_RETURN(std::vector<std::string> was, SelectColumns(*conn, Latest(b), &before));
      if (was != *now) {
        bound = Status::FailedPrecondition("it would now fill the target's columns from " +
                                           Join(*now) + " instead of " + Join(was));
      }
    }
    if (!bound.ok()) {
      std::string columns;
      for (const SourceColumn& c : shape.columns)
        columns += (columns.empty() ? "" : ", ") + c.name + " " + c.type_name;
      return Status::FailedPrecondition(
          "the columns of " + shape.Display() + " changed (now: " + columns +
          ") and the job's SELECT no longer fits them: " + bound.message() +
          "; ALTER JOB with a SELECT that does, or recreate the job");
    }
  }
  MR_LOG(kInfo) << config_.form << ": " << shape.Display() << " now has " << shape.columns.size()
                << " columns";
  shapes_[b].push_back(std::make_shared<const SourceTable>(std::move(shape)));
  return Status::Ok();
}

Result<SnapshotCursor> ChangeStream::SnapshotAt(const json& position) const {
  SnapshotCursor cursor;
  if (position.is_object() && position.contains("table")) {
    const std::string name = position.value("table", "");
    while (cursor.table < config_.tables.size() &&
           config_.tables[cursor.table].table.Display() != name)
      ++cursor.table;
    if (cursor.table == config_.tables.size()) {
      return Status::FailedPrecondition("the job's snapshot was copying " + name +
                                        ", which is no longer one of its tables");
    }
  }
  const json after = position.is_object() ? position.value("after", json()) : json();
  const SourceTable& table = config_.tables[cursor.table].table;
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
  if (after.is_array()) {
    for (const json& v : after)
      cursor.after.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  }
  return cursor;
}

job::Polled ChangeStream::SnapshotBatch(const job::JobRecord& job, const SnapshotCursor& cursor,
                                        std::vector<change::Tuple> rows, int64_t bytes, bool done,
                                        const StreamPosition& at, const Offset& newest) {
  const SourceTable& table = config_.tables[cursor.table].table;
  std::vector<Change> changes;
  changes.reserve(rows.size());
  for (change::Tuple& row : rows)
    changes.push_back(Change{Change::Kind::kUpsert, std::move(row), {}, cursor.table, 0});

  Offset end = BatchOffset(at.offset);
  json key_names = json::array();
  json last_key = json::array();
  for (size_t k : table.key) {
    key_names.push_back(table.columns[k].name);
    if (!changes.empty()) last_key.push_back(changes.back().row[k].text);
  }
  if (!done) {
    end = end.With(kSnapshotPart,
                   json{{"table", table.Display()}, {"key", key_names}, {"after", last_key}});
  } else if (size_t next = NextActive(cursor.table + 1); next < config_.tables.size()) {
    // The next table, from its first row.
    end = end.With(kSnapshotPart,
                   json{{"table", config_.tables[next].table.Display()}, {"after", nullptr}});
  }
  json after = json(nullptr);
  if (!cursor.after.empty()) after = cursor.after;
  const std::string first =
      changes.empty() ? "" : "snapshot " + table.Display() + " after " + after.dump();
  const std::string last = changes.empty() ? "" : "snapshot key " + last_key.dump();
  job::Polled polled;
  polled.batch = MakeBatch(job.current_offset, end, first, last, std::move(changes), bytes,
                           SnapshotSync{cursor.table, cursor.after.empty(), done});
  polled.more = true;
  polled.end_offset = newest;
  handed_ = at.order;
  return polled;
}

void ChangeStream::Reset() {
  ready_.clear();
  ready_count_ = 0;
  ready_bytes_ = 0;
  handed_.reset();
}

void ChangeStream::Restarted(uint64_t order) {
  handed_ = order;
  last_batch_ = config_.clock->SteadyNow();
}

void ChangeStream::Received(SourceTransaction transaction) {
  // Transactions at or below the job's offset were applied before (a restart replays them).
  if (transaction.end.order <= handed_.value_or(0) || transaction.changes.empty()) return;
  const int64_t bytes = TransactionBytes(transaction);
  ready_count_ += static_cast<int64_t>(transaction.changes.size());
  ready_bytes_ += bytes;
  ready_.push_back(Ready{std::move(transaction), bytes});
}

std::optional<Status> ChangeStream::TakeDeferred() {
  std::optional<Status> failure = std::move(deferred_);
  deferred_.reset();
  return failure;
}

job::BatchLimits ChangeStream::Bounds(const job::BatchLimits& limits) {
  job::BatchLimits bounds = limits;
  if (!limits.items_given) bounds.max_items = std::numeric_limits<int64_t>::max();
  if (!limits.bytes_given) bounds.max_bytes = kDefaultBatchBytes;
  return bounds;
}

bool ChangeStream::Full(const job::BatchLimits& limits) const {
  const job::BatchLimits bounds = Bounds(limits);
  return ready_count_ >= bounds.max_items || ready_bytes_ >= bounds.max_bytes;
}

std::vector<SourceTransaction> ChangeStream::TakeReady(const job::BatchLimits& bounds,
                                                       int64_t* bytes) {
  std::vector<SourceTransaction> taken;
  int64_t items = 0;
  int64_t taken_bytes = 0;
  while (!ready_.empty()) {
    Ready& next = ready_.front();
    const auto next_items = static_cast<int64_t>(next.transaction.changes.size());
    if (!taken.empty() &&
        (items + next_items > bounds.max_items || taken_bytes + next.bytes > bounds.max_bytes)) {
      break;
    }
    items += next_items;
    taken_bytes += next.bytes;
    ready_count_ -= next_items;
    ready_bytes_ -= next.bytes;
    taken.push_back(std::move(next.transaction));
    ready_.pop_front();
  }
  *bytes += taken_bytes;
  return taken;
}

job::Polled ChangeStream::TakeBatch(const job::JobRecord& job, const StreamPosition& at,
                                    const job::BatchLimits& limits,
                                    const std::optional<StreamPosition>& quiet,
                                    const Offset& newest, int64_t lag_bytes) {
  const auto now = config_.clock->SteadyNow();
  job::Polled polled;
  if (!ready_.empty()) {
    std::vector<Change> changes;
    int64_t bytes = 0;
    StreamPosition end = at;
    std::vector<SourceTransaction> taken = TakeReady(Bounds(limits), &bytes);
    size_t count = 0;
    for (const SourceTransaction& t : taken)
      count += t.changes.size();
    changes.reserve(count);
    for (SourceTransaction& t : taken) {
      for (Change& c : t.changes)
        changes.push_back(std::move(c));
      end = std::move(t.end);
    }
    polled.batch = MakeBatch(job.current_offset, BatchOffset(end.offset), at.label, end.label,
                             std::move(changes), bytes);
    // Changes are flowing: the next poll comes at once and waits on the stream for more,
    // instead of after max_interval; an idle stream is polled every max_interval.
    polled.more = true;
    handed_ = end.order;
    last_batch_ = now;
  } else if (quiet && quiet->order > at.order && now - last_batch_ >= kQuietCommitInterval) {
    polled.batch = MakeBatch(job.current_offset, BatchOffset(quiet->offset), "", "", {}, 0);
    handed_ = quiet->order;
    last_batch_ = now;
  }
  polled.end_offset = newest;
  polled.lag_bytes = lag_bytes;
  polled.lag_items = ready_count_ + (polled.batch ? polled.batch->items() : 0);
  return polled;
}

Status ChangeStream::DropSnapshotState(int64_t job_id) const {
  MR_ASSIGN_OR_RETURN(auto conn, config_.db->Connect());
  for (size_t b = 0; b < config_.tables.size(); ++b)
    MR_RETURN_IF_ERROR(conn->Execute("DROP TABLE IF EXISTS " + ChangeBatch::SeenTable(job_id, b)));
  return Status::Ok();
}

std::unique_ptr<job::SourceBatch> ChangeStream::MakeBatch(Offset start, Offset end,
                                                          std::string first, std::string last,
                                                          std::vector<Change> changes,
                                                          int64_t bytes,
                                                          std::optional<SnapshotSync> snapshot) {
  auto batch = std::make_unique<ChangeBatch>(
      std::move(start), std::move(end), std::move(first), std::move(last), std::move(changes),
      bytes, &config_.tables, shapes_, config_.whole_database, make_targets_, snapshot);
  make_targets_ = false;
  return batch;
}

}  // namespace millrace::cdc
