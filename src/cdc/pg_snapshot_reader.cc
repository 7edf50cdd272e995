#include "cdc/pg_snapshot_reader.h"

#include <algorithm>
#include <thread>
#include <utility>

namespace millrace::cdc {
namespace {

constexpr char kBegin[] = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

// "k1, k2": the table's key columns, quoted.
std::string KeyList(const pg::PgConnection& conn, const SourceTable& table) {
  std::string key;
  for (size_t n = 0; n < table.key.size(); ++n)
    key += (n ? ", " : "") + conn.Identifier(table.columns[table.key[n]].name);
  return key;
}

// "CAST('v1' AS t1), ...": a key's text as values of the key columns' types.
std::string KeyValues(const pg::PgConnection& conn, const SourceTable& table,
                      const std::vector<std::string>& key) {
  std::string values;
  for (size_t n = 0; n < table.key.size() && n < key.size(); ++n) {
    values += (n ? ", " : "") + std::string("CAST(") + conn.Literal(key[n]) + " AS " +
              table.columns[table.key[n]].type_name + ")";
  }
  return values;
}

}  // namespace

PgSnapshotReader::PgSnapshotReader(pg::ConnectParams params, int parallelism, int64_t split_size)
    : params_(std::move(params)),
      parallelism_(std::max(1, parallelism)),
      split_size_(split_size),
      conns_(
          static_cast<size_t>(parallelism_), [this] { return pg::PgConnection::Connect(params_); },
          [](const pg::PgConnection& conn) { return conn.healthy(); }) {}

PgSnapshotReader::~PgSnapshotReader() = default;

void PgSnapshotReader::Close() {
  conns_.DropAll();
}

std::string PgSnapshotReader::RangeSelect(const pg::PgConnection& conn, const SourceTable& table,
                                          const Range& range) const {
  std::string columns;
  for (size_t i = 0; i < table.columns.size(); ++i)
    columns += (i ? ", " : "") + conn.Identifier(table.columns[i].name);
  const std::string key = KeyList(conn, table);
  std::string where;
  if (!range.lower.empty()) where = "(" + key + ") > (" + KeyValues(conn, table, range.lower) + ")";
  if (!range.upper.empty()) {
    where += (where.empty() ? "" : " AND ") + std::string("(") + key + ") <= (" +
             KeyValues(conn, table, range.upper) + ")";
  }
  std::string select = "SELECT " + columns + " FROM " + QuotedName(conn, table);
  if (!where.empty()) select += " WHERE " + where;
  select += " ORDER BY " + key;
  if (range.upper.empty()) select += " LIMIT " + std::to_string(split_size_);
  return select;
}

Status PgSnapshotReader::ReadRange(size_t i, const SourceTable& table, const Range& range,
                                   const std::string& snapshot, std::vector<change::Tuple>* rows,
                                   int64_t* bytes) {
  Status read = ReadRangeOn(i, table, range, snapshot, rows, bytes);
  if (!read.ok()) conns_.Drop(i);  // its transaction's state is unknown
  return read;
}

Status PgSnapshotReader::ReadRangeOn(size_t i, const SourceTable& table, const Range& range,
                                     const std::string& snapshot, std::vector<change::Tuple>* rows,
                                     int64_t* bytes) {
  MR_ASSIGN_OR_RETURN(pg::PgConnection * conn, conns_.Get(i));
  pg::PgConnection& c = *conn;
  if (!snapshot.empty()) {
    MR_RETURN_IF_ERROR(c.Execute(kBegin));
    MR_RETURN_IF_ERROR(c.Execute("SET TRANSACTION SNAPSHOT " + c.Literal(snapshot)));
  }
  Status copied =
      c.CopyOut("COPY (" + RangeSelect(c, table, range) + ") TO STDOUT", [&](pg::Row& row) {
        rows->push_back(TextTuple(row, bytes));
        return Status::Ok();
      });
  MR_RETURN_IF_ERROR(copied);
  if (!snapshot.empty()) MR_RETURN_IF_ERROR(c.Execute("COMMIT"));
  return Status::Ok();
}

Result<SnapshotRead> PgSnapshotReader::Read(const SourceTable& table,
                                            const std::vector<std::string>& after,
                                            const std::string& snapshot) {
  SnapshotRead out;
  auto fail = [&](const Status& s) {
    conns_.Drop(0);
    return s.WithContext("reading a snapshot of " + table.Display());
  };
  auto first = conns_.Get(0);
  if (!first.ok()) return first.status().WithContext("reading a snapshot of " + table.Display());
  pg::PgConnection& conn = **first;
  if (Status s = conn.Execute(kBegin); !s.ok()) return fail(s);
  if (!snapshot.empty()) {
    out.imported = conn.Execute("SET TRANSACTION SNAPSHOT " + conn.Literal(snapshot)).ok();
    if (!out.imported) {
      // Gone with its exporting connection: a fresh snapshot.
      if (Status s = conn.Execute("ROLLBACK"); !s.ok()) return fail(s);
      if (Status s = conn.Execute(kBegin); !s.ok()) return fail(s);
    }
  }
  std::vector<std::vector<std::string>> bounds;
  std::string shared = out.imported ? snapshot : "";
  if (parallelism_ > 1) {
    if (shared.empty()) {
      auto exported = conn.Query("SELECT pg_export_snapshot()");
      if (!exported.ok()) return fail(exported.status());
      shared = exported->rows.at(0).at(0).value_or("");
    }
    // Every split_size-th key after `after`, up to parallelism of them.
    const std::string key = KeyList(conn, table);
    std::string inner = "SELECT " + key + " FROM " + QuotedName(conn, table);
    if (!after.empty()) inner += " WHERE (" + key + ") > (" + KeyValues(conn, table, after) + ")";
    inner += " ORDER BY " + key + " LIMIT " + std::to_string(split_size_ * parallelism_);
    auto rows = conn.Query("SELECT " + key + " FROM (SELECT *, row_number() OVER (ORDER BY " + key +
                           ") AS __millrace_rn FROM (" + inner + ") a) b WHERE __millrace_rn % " +
                           std::to_string(split_size_) + " = 0 ORDER BY __millrace_rn");
    if (!rows.ok()) return fail(rows.status());
    for (pg::Row& row : rows->rows) {
      std::vector<std::string> upper;
      for (auto& field : row)
        upper.push_back(field.value_or(""));
      bounds.push_back(std::move(upper));
    }
  }
  const std::vector<Range> ranges = SplitRanges(after, std::move(bounds), parallelism_);
  Result<SnapshotRead> read = ReadRanges(
      ranges, split_size_,
      [&](size_t i, const Range& range, std::vector<change::Tuple>* rows, int64_t* bytes) {
        // The first connection reads in its own transaction; the others import it.
        return ReadRange(i, table, range, i == 0 ? "" : shared, rows, bytes);
      });
  // The first connection's transaction held the exported snapshot for the others.
  Status committed;
  if (pg::PgConnection* first = conns_.Kept(0); first != nullptr) {
    committed = first->Execute("COMMIT");
    if (!committed.ok()) conns_.Drop(0);
  }
  if (read.ok() && !committed.ok()) read = committed;
  if (!read.ok()) return read.status().WithContext("reading a snapshot of " + table.Display());
  read->imported = out.imported;
  return read;
}

}  // namespace millrace::cdc
