#include "cdc/mysql_change_source.h"

#include <charconv>
#include <utility>

#include "common/logging.h"
#include "common/strings.h"
#include "job/job_errors.h"
#include "mysql/binlog_requirements.h"
#include "sql/lexer.h"

namespace millrace::cdc {
namespace {

using job::Offset;
using nlohmann::json;

constexpr char kFilePart[] = "file";
constexpr char kPosPart[] = "pos";
constexpr char kGtidsPart[] = "gtids";

// The number a binlog file name ends with ("binlog.000003": 3).
uint64_t FileNumber(const std::string& file) {
  const size_t dot = file.rfind('.');
  uint64_t n = 0;
  if (dot != std::string::npos)
    std::from_chars(file.data() + dot + 1, file.data() + file.size(), n);
  return n;
}

// domain -> "domain-server-sequence" of a GTID position "d-s-n[,d-s-n...]".
std::map<uint32_t, std::string> ParseGtids(const std::string& text) {
  std::map<uint32_t, std::string> gtids;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t comma = text.find(',', begin);
    if (comma == std::string::npos) comma = text.size();
    const std::string gtid(Trim(std::string_view(text).substr(begin, comma - begin)));
    uint32_t domain = 0;
    std::from_chars(gtid.data(), gtid.data() + gtid.size(), domain);
    if (!gtid.empty()) gtids[domain] = gtid;
    begin = comma + 1;
  }
  return gtids;
}

// The table a TRUNCATE statement names (`schema` when it names none), or nullopt for another
// statement.
std::optional<std::pair<std::string, std::string>> TruncatedTable(const std::string& schema,
                                                                  std::string_view statement) {
  const std::vector<sql::Token> tokens = sql::SignificantTokens(statement);
  size_t i = 0;
  if (tokens.empty() || !sql::IsKeyword(statement, tokens[i++], "TRUNCATE")) return std::nullopt;
  if (i < tokens.size() && sql::IsKeyword(statement, tokens[i], "TABLE")) ++i;
  if (i >= tokens.size()) return std::nullopt;
  std::string name = sql::Unquote(statement, tokens[i]);
  if (i + 2 < tokens.size() && tokens[i + 1].Text(statement) == ".") {
    return std::make_pair(std::move(name), sql::Unquote(statement, tokens[i + 2]));
  }
  return std::make_pair(schema, std::move(name));
}

// A row with only `table`'s key values of `row`, the rest NULL (what a delete carries).
change::Tuple KeyOnly(const SourceTable& table, const change::Tuple& row) {
  change::Tuple key(table.columns.size());
  for (size_t k : table.key) {
    if (k < row.size()) key[k] = row[k];
  }
  return key;
}

bool KeyChanged(const SourceTable& table, const change::Tuple& before, const change::Tuple& after) {
  for (size_t k : table.key) {
    if (k >= before.size() || k >= after.size() || before[k].kind != after[k].kind ||
        before[k].text != after[k].text) {
      return true;
    }
  }
  return false;
}

}  // namespace

MysqlChangeSource::MysqlChangeSource(MysqlChangeSourceConfig config)
    : spec_(std::move(config.spec)),
      stream_(ChangeStreamConfig{std::move(config.tables), spec_.whole_database, "FROM MYSQL",
                                 config.clock, config.db, std::move(config.database)}),
      reader_(spec_.connect, spec_.parallelism, spec_.split_size) {}

MysqlChangeSource::~MysqlChangeSource() {
  EndReadAhead();
}

uint32_t MysqlChangeSource::ServerId(const job::JobRecord& job) {
  return static_cast<uint32_t>(1'000'000 + job.id);
}

std::string MysqlChangeSource::Describe() const {
  return "mysql " + mysql::Describe(spec_.connect) +
         (stream_.tables().size() == 1 ? " table " : " tables ") + stream_.TableList();
}

std::string MysqlChangeSource::FixedUpstream() const {
  return "database " + spec_.connect.database + ", tables " + stream_.TableList() +
         (spec_.server_id == 0 ? "" : ", server_id " + std::to_string(spec_.server_id));
}

std::string MysqlChangeSource::GtidText(const std::map<uint32_t, std::string>& gtids) {
  std::string text;
  for (const auto& [domain, gtid] : gtids)
    text += (text.empty() ? "" : ",") + gtid;
  return text;
}

Result<MysqlChangeSource::Where> MysqlChangeSource::WhereOf(const Offset& offset) {
  Where where;
  where.position.file = offset.Text(kFilePart);
  const std::string pos = offset.Text(kPosPart);
  if (!where.position.file.empty()) {
    auto [end, ec] = std::from_chars(pos.data(), pos.data() + pos.size(), where.position.position);
    if (ec != std::errc() || end != pos.data() + pos.size()) {
      return Status::DataLoss("the job's offset " + offset.ToJson() + " has no binlog position");
    }
  }
  where.gtids = ParseGtids(offset.Text(kGtidsPart));
  if (where.position.file.empty() && where.gtids.empty()) {
    return Status::DataLoss("the job's offset " + offset.ToJson() + " has no binlog position");
  }
  return where;
}

StreamPosition MysqlChangeSource::PositionOf(const Where& where) {
  StreamPosition out;
  const std::string gtids = GtidText(where.gtids);
  if (!where.position.file.empty()) {
    out.order = FileNumber(where.position.file) << 32 | (where.position.position & 0xffffffffu);
    out.offset = out.offset.With(kFilePart, where.position.file)
                     .With(kPosPart, std::to_string(where.position.position));
    out.label = "binlog " + where.position.file + ":" + std::to_string(where.position.position);
  } else {
    out.label = "gtid " + gtids;
  }
  if (!gtids.empty()) out.offset = out.offset.With(kGtidsPart, gtids);
  return out;
}

std::optional<size_t> MysqlChangeSource::Binding(const std::string& schema,
                                                 const std::string& name) const {
  for (size_t b = 0; b < stream_.tables().size(); ++b) {
    const SourceTable& table = stream_.tables()[b].table;
    if (stream_.active(b) && table.schema == schema && table.name == name) return b;
  }
  return std::nullopt;
}

void MysqlChangeSource::CloseStream() {
  binlog_.reset();
  open_.reset();
  open_gtid_.reset();
  open_standalone_ = false;
  mapped_.clear();
  stream_.Reset();
}

Status MysqlChangeSource::StreamFailed(const Where& at, const Status& error) {
  if (error.code() != StatusCode::kOutOfRange) return error;
  return job::JobError(
      job::JobErrorCode::kCannotResume,
      Status::FailedPrecondition(
          "the job's binlog position " + PositionOf(at).label + " is no longer on " +
          mysql::Describe(spec_.connect) + " (" + error.message() +
          "): its binlog was purged while the job was behind or paused; recreate the job "
          "(\"offset\" = \"initial\" copies the tables again)"));
}

Result<job::Polled> MysqlChangeSource::Start(const job::JobRecord& job,
                                             const job::BatchLimits& limits) {
  CloseStream();
  reader_.Close();
  stream_.StartOver();  // the first batch makes the targets that do not exist yet
  MR_ASSIGN_OR_RETURN(auto meta, mysql::MysqlConnection::Connect(spec_.connect));
  MR_RETURN_IF_ERROR(mysql::CheckBinlogSource(*meta));
  Where at;
  switch (spec_.start) {
    case MysqlSourceSpec::Start::kInitial: {
      MR_ASSIGN_OR_RETURN(const SnapshotPosition snapshot, reader_.Begin());
      at = Where{snapshot.position, ParseGtids(snapshot.gtid)};
      MR_LOG(kInfo) << "job " << job.name << ": snapshot at " << PositionOf(at).label;
      return SnapshotSplit(job, at, json::object());
    }
    case MysqlSourceSpec::Start::kLatest: {
      MR_ASSIGN_OR_RETURN(const SnapshotPosition end, BinlogEnd(*meta));
      at = Where{end.position, ParseGtids(end.gtid)};
      break;
    }
    case MysqlSourceSpec::Start::kPosition:
      at.gtids = ParseGtids(spec_.position.gtid);
      if (spec_.position.gtid.empty()) at.position = spec_.position.position;
      break;
  }
  // No snapshot: the job starts at `at` with an offset-only batch.
  const StreamPosition position = PositionOf(at);
  job::Polled polled;
  polled.batch =
      stream_.MakeBatch(job.current_offset, stream_.BatchOffset(position.offset), "", "", {}, 0);
  polled.more = true;
  polled.end_offset = position.offset;
  stream_.SetHanded(position.order);
  return polled;
}

Result<job::Polled> MysqlChangeSource::SnapshotSplit(const job::JobRecord& job, const Where& at,
                                                     const json& position) {
  MR_ASSIGN_OR_RETURN(const SnapshotCursor cursor, stream_.SnapshotAt(position));
  const SourceTable& table = stream_.tables()[cursor.table].table;
  MR_ASSIGN_OR_RETURN(SnapshotRead read, reader_.Read(table, cursor.after));
  const StreamPosition where = PositionOf(at);
  job::Polled polled = stream_.SnapshotBatch(job, cursor, std::move(read.rows), read.bytes,
                                             read.done, where, where.offset);
  // The last table is copied: the snapshot's transaction ends.
  if (!polled.batch->end().parts().contains(kSnapshotPart)) reader_.Close();
  return polled;
}

Result<job::Polled> MysqlChangeSource::Stream(const job::JobRecord& job, const Where& at,
                                              const job::BatchLimits& limits) {
  if (std::optional<Status> failure = stream_.TakeDeferred()) {
    // The failure met after the transactions the last batch handed out (below).
    return std::move(*failure);
  }
  const StreamPosition from = PositionOf(at);
  if (binlog_ != nullptr && stream_.handed() != from.order) {
    // The last batch handed out did not commit: its changes are read again.
    CloseStream();
  }
  if (binlog_ == nullptr) {
    reader_.Close();  // the snapshot is over
    mysql::BinlogStart start;
    if (!at.position.file.empty()) {
      start.position = at.position;
    } else {
      start.gtid = GtidText(at.gtids);
    }
    const uint32_t server_id = spec_.server_id != 0 ? spec_.server_id : ServerId(job);
    MR_ASSIGN_OR_RETURN(binlog_, mysql::BinlogStream::Open(
                                     spec_.connect, server_id, start, kHeartbeat,
                                     [this](const std::string& schema, const std::string& table) {
                                       return Binding(schema, table).has_value();
                                     }));
    stream_.Restarted(from.order);
    passed_ = at;
    mapped_.assign(stream_.tables().size(), false);
    MR_LOG(kInfo) << "job " << job.name << ": streaming from " << from.label << " as replica "
                  << server_id;
  }

  Clock& clock = *stream_.config().clock;
  const Clock::SteadyTime started = clock.SteadyNow();
  const auto deadline = started + kPollBudget;
  std::optional<Clock::SteadyTime> ready_since;
  while (!stream_.Full(limits) && clock.SteadyNow() < deadline) {
    if (stream_.has_ready()) {
      if (!ready_since) ready_since = clock.SteadyNow();
      if (clock.SteadyNow() - *ready_since >= kGather && !Gathering()) break;
    }
    const Clock::SteadyTime asked = clock.SteadyNow();
    MR_ASSIGN_OR_RETURN(mysql::StreamEvent event, binlog_->Next());
    // A heartbeat that was waiting in the connection is an old one (the server sends one every
    // kHeartbeat while idle, whether or not the job reads): only one that took a while to come
    // says the server is idle now.
    const bool waited = clock.SteadyNow() - asked >= kHeartbeat / 2;
    if (Status received = Receive(event); !received.ok()) {
      if (!stream_.has_ready()) return received;
      // The whole transactions before the failure go first; the failure comes back at the next
      // poll, so the job stops exactly before the change that failed.
      stream_.Defer(std::move(received));
      open_.reset();
      open_gtid_.reset();
      break;
    }
    // A fresh heartbeat between transactions: the server has nothing more now. With nothing
    // received yet, the poll waits a little longer for a first transaction.
    if (std::holds_alternative<mysql::HeartbeatEvent>(event.event) && !open_ && waited &&
        (stream_.has_ready() || clock.SteadyNow() - started >= kStreamWait) && !Gathering()) {
      break;
    }
  }

  const StreamPosition newest = PositionOf(passed_);
  std::optional<StreamPosition> quiet;
  if (!stream_.has_ready()) quiet = newest;
  // Lag in bytes is known within one binlog file.
  const int64_t lag_bytes =
      passed_.position.file == at.position.file && passed_.position.position > at.position.position
          ? static_cast<int64_t>(passed_.position.position - at.position.position)
          : 0;
  return stream_.TakeBatch(job, from, limits, quiet, newest.offset, lag_bytes);
}

void MysqlChangeSource::EndTransaction(const mysql::BinlogPosition& after) {
  if (open_gtid_) passed_.gtids[open_domain_] = *open_gtid_;
  passed_.position = after;
  SourceTransaction transaction = open_ ? std::move(*open_) : SourceTransaction{};
  transaction.end = PositionOf(passed_);
  stream_.Received(std::move(transaction));
  open_.reset();
  open_gtid_.reset();
  open_standalone_ = false;
}

Status MysqlChangeSource::Mapped(size_t b, const mysql::BinlogTable& table) {
  const bool first = !mapped_[b];
  mapped_[b] = true;
  // The database form checks its target against the first description of a connection (the
  // target follows the committed position, which the catalog may have left behind).
  if (SameShape(table, stream_.Latest(b)) &&
      !(first && spec_.whole_database && stream_.OnlyCatalogShape(b))) {
    return Status::Ok();
  }
  return stream_.AddShape(b, DescribeTableMap(table, stream_.tables()[b].table));
}

Status MysqlChangeSource::Receive(mysql::StreamEvent& event) {
  if (const auto* gtid = std::get_if<mysql::GtidEvent>(&event.event)) {
    open_ = SourceTransaction{};
    open_gtid_ = gtid->Text();
    open_domain_ = gtid->domain;
    open_standalone_ = gtid->standalone;
    return Status::Ok();
  }
  if (const auto* map = std::get_if<mysql::TableMapEvent>(&event.event)) {
    const std::optional<size_t> b = Binding(map->table.schema, map->table.name);
    return b ? Mapped(*b, map->table) : Status::Ok();
  }
  if (auto* rows = std::get_if<mysql::RowsEvent>(&event.event)) {
    if (rows->table == nullptr) return Status::Ok();
    const std::optional<size_t> b = Binding(rows->table->schema, rows->table->name);
    if (!b) return Status::Ok();
    if (!open_) open_ = SourceTransaction{};  // MySQL without GTIDs: its BEGIN opened it
    const SourceTable& shape = stream_.Latest(*b);
    const uint32_t s = stream_.Shape(*b);
    std::vector<Change>& changes = open_->changes;
    for (mysql::RowChange& row : rows->rows) {
      switch (rows->kind) {
        case mysql::RowsKind::kWrite:
          changes.push_back(Change{Change::Kind::kUpsert, std::move(row.after), {}, *b, s});
          break;
        case mysql::RowsKind::kUpdate:
          if (KeyChanged(shape, row.before, row.after)) {
            changes.push_back(Change{Change::Kind::kDelete, KeyOnly(shape, row.before), {}, *b, s});
          }
          changes.push_back(Change{Change::Kind::kUpsert, std::move(row.after), {}, *b, s});
          break;
        case mysql::RowsKind::kDelete:
          changes.push_back(Change{Change::Kind::kDelete, KeyOnly(shape, row.before), {}, *b, s});
          break;
      }
    }
    return Status::Ok();
  }
  if (std::holds_alternative<mysql::XidEvent>(event.event)) {
    EndTransaction(event.after);
    return Status::Ok();
  }
  if (const auto* query = std::get_if<mysql::QueryEvent>(&event.event)) {
    const std::string statement = ToUpper(std::string(Trim(query->statement)));
    if (statement == "BEGIN") {
      if (!open_) open_ = SourceTransaction{};
      return Status::Ok();
    }
    if (statement == "COMMIT") {
      EndTransaction(event.after);
      return Status::Ok();
    }
    if (statement == "ROLLBACK") {
      // Only non-transactional changes are logged with a ROLLBACK; none are the job's (InnoDB).
      open_.reset();
      open_gtid_.reset();
      passed_.position = event.after;
      return Status::Ok();
    }
    if (auto truncated = TruncatedTable(query->schema, query->statement)) {
      if (const std::optional<size_t> b = Binding(truncated->first, truncated->second)) {
        if (!open_) open_ = SourceTransaction{};
        open_->changes.push_back(Change{Change::Kind::kTruncate, {}, {}, *b, stream_.Shape(*b)});
      }
    }
    // DDL commits on its own; the columns it changes arrive with the next TABLE_MAP.
    if (open_standalone_ || !open_) EndTransaction(event.after);
    return Status::Ok();
  }
  if (const auto* rotate = std::get_if<mysql::RotateEvent>(&event.event)) {
    if (!open_) passed_.position = rotate->next;
    return Status::Ok();
  }
  if (std::holds_alternative<mysql::HeartbeatEvent>(event.event)) {
    if (!open_) passed_.position = event.after;
  }
  return Status::Ok();
}

std::string MysqlChangeSource::WhilePaused(const job::JobRecord& job) {
  const std::string file = job.current_offset.Text(kFilePart);
  if (file.empty()) return "";
  auto conn = mysql::MysqlConnection::Connect(spec_.connect);
  if (!conn.ok())
    return "cannot look at the binlog of the job's position: " + conn.status().message();
  auto logs = (*conn)->Query("SHOW BINARY LOGS");
  if (!logs.ok())
    return "cannot look at the binlog of the job's position: " + logs.status().message();
  for (const mysql::Row& row : logs->rows) {
    if (!row.empty() && row[0] == file) return "";
  }
  return "binlog file " + file + " of the job's position is no longer on " +
         mysql::Describe(spec_.connect) +
         ": a RESUME cannot read from there; recreate the job (\"offset\" = \"initial\" copies "
         "the tables again)";
}

Result<std::vector<job::UpstreamTableRows>> MysqlChangeSource::CountRows() const {
  MR_ASSIGN_OR_RETURN(auto conn, mysql::MysqlConnection::Connect(spec_.connect));
  return stream_.CountRows([&](const SourceTable& table) -> Result<std::string> {
    MR_ASSIGN_OR_RETURN(
        mysql::Rows rows,
        conn->Query("SELECT count(*) FROM " + mysql::MysqlConnection::Identifier(table.schema) +
                    "." + mysql::MysqlConnection::Identifier(table.name)));
    if (rows.rows.size() != 1 || rows.rows[0].empty() || !rows.rows[0][0]) {
      return Status::Internal("count(*) of " + table.Display() + " returned no row");
    }
    return *rows.rows[0][0];
  });
}

Status MysqlChangeSource::DropUpstream(const job::JobRecord& job) {
  CloseStream();
  reader_.Close();
  return stream_.DropSnapshotState(job.id);
}

}  // namespace millrace::cdc
