#include "cdc/mysql_snapshot_reader.h"

#include <algorithm>
#include <utility>

namespace millrace::cdc {

MysqlSnapshotReader::MysqlSnapshotReader(mysql::ConnectParams params, int parallelism,
                                         int64_t split_size)
    : params_(std::move(params)),
      parallelism_(std::max(1, parallelism)),
      split_size_(split_size),
      conns_(static_cast<size_t>(parallelism_),
             [this] { return mysql::MysqlConnection::Connect(params_); }) {}

MysqlSnapshotReader::~MysqlSnapshotReader() = default;

void MysqlSnapshotReader::Close() {
  // Closing the connection ends its snapshot's transaction, which only read.
  conns_.DropAll();
  in_snapshot_ = false;
}

Result<SnapshotPosition> MysqlSnapshotReader::Begin() {
  Close();
  MR_ASSIGN_OR_RETURN(mysql::MysqlConnection * conn, conns_.Get(0));
  Result<SnapshotPosition> position = ConsistentSnapshot(*conn);
  if (!position.ok()) {
    conns_.Drop(0);
    return position.status();
  }
  in_snapshot_ = true;
  return position;
}

Status MysqlSnapshotReader::ReadRange(size_t i, const SourceTable& table, const KeyRange& range,
                                      std::vector<change::Tuple>* rows, int64_t* bytes) {
  auto read = [&]() -> Status {
    MR_ASSIGN_OR_RETURN(mysql::MysqlConnection * conn, conns_.Get(i));
    MR_ASSIGN_OR_RETURN(mysql::Rows result, conn->Query(SnapshotSelect(*conn, table, range.lower,
                                                                       split_size_, range.upper)));
    rows->reserve(result.rows.size());
    for (mysql::Row& row : result.rows)
      rows->push_back(TextTuple(row, bytes));
    return Status::Ok();
  };
  Status status = read();
  if (!status.ok()) {
    conns_.Drop(i);  // its state is unknown
    if (i == 0) in_snapshot_ = false;
  }
  return status;
}

Result<SnapshotRead> MysqlSnapshotReader::Read(const SourceTable& table,
                                               const std::vector<std::string>& after) {
  std::vector<std::vector<std::string>> bounds;
  if (parallelism_ > 1) {
    auto first = conns_.Get(0);
    if (!first.ok()) return first.status().WithContext("reading a snapshot of " + table.Display());
    mysql::MysqlConnection& conn = **first;
    auto rows = conn.Query(SplitBoundsSelect(conn, table, after, split_size_, parallelism_));
    if (!rows.ok()) {
      conns_.Drop(0);
      in_snapshot_ = false;
      return rows.status().WithContext("reading a snapshot of " + table.Display());
    }
    for (mysql::Row& row : rows->rows) {
      std::vector<std::string> upper;
      for (mysql::Field& field : row)
        upper.push_back(field.value_or(""));
      bounds.push_back(std::move(upper));
    }
  }
  Result<SnapshotRead> read =
      ReadRanges(SplitRanges(after, std::move(bounds), parallelism_), split_size_,
                 [&](size_t i, const KeyRange& range, std::vector<change::Tuple>* rows,
                     int64_t* bytes) { return ReadRange(i, table, range, rows, bytes); });
  if (!read.ok()) return read.status().WithContext("reading a snapshot of " + table.Display());
  return read;
}

}  // namespace millrace::cdc
