// What every change source's snapshot reader shares (pg_snapshot_reader.h,
// mysql_snapshot_reader.h): a read's rows, its key ranges read at once, and a connection per
// range.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "change/change_value.h"
#include "common/result.h"

namespace millrace::cdc {

struct SnapshotRead {
  std::vector<change::Tuple> rows;  // every value kText or kNull
  int64_t bytes = 0;                // of the values' text
  bool done = false;
  bool imported = false;
};

// A key range of a read: rows with key > lower (empty: from the first) and <= upper (empty: to
// the end, at most split_size rows). Keys are their values' text as the source's reader gives
// them.
struct KeyRange {
  std::vector<std::string> lower;
  std::vector<std::string> upper;
};
// The ranges of one read from `after`: up to each of `bounds` (every split_size-th key after
// it, at most `parallelism` of them, in order), then the rest when fewer came.
std::vector<KeyRange> SplitRanges(std::vector<std::string> after,
                                  std::vector<std::vector<std::string>> bounds, int parallelism);
// Reads range i with read(i, range, rows, bytes): range 0 on this thread, the others on threads
// of their own, joined before it returns. The rows come in range order; `done` when the last
// range is open-ended and gave fewer than split_size rows. The first failure is returned.
using RangeRead =
    std::function<Status(size_t, const KeyRange&, std::vector<change::Tuple>*, int64_t*)>;
Result<SnapshotRead> ReadRanges(const std::vector<KeyRange>& ranges, int64_t split_size,
                                const RangeRead& read);

// A source row of text values (nullopt: NULL), as both sources' clients return rows, as a tuple
// of kText and kNull values; the text's bytes are added to *bytes.
change::Tuple TextTuple(std::vector<std::optional<std::string>>& row, int64_t* bytes);

// A connection per range of a read, made on first use and kept for the next read; one whose
// state is unknown (a failed read) is dropped and made again when next used. Connection i is
// used by one thread at a time (range i's).
template <typename Conn>
class SplitConnections {
 public:
  using Connect = std::function<Result<std::unique_ptr<Conn>>()>;
  // `healthy` (may be empty): a kept connection that fails it is made again.
  SplitConnections(size_t count, Connect connect, std::function<bool(const Conn&)> healthy = {})
      : connect_(std::move(connect)), healthy_(std::move(healthy)), conns_(count) {}

  // Connection i, made when there is none (or the kept one is not healthy).
  Result<Conn*> Get(size_t i) {
    if (conns_[i] != nullptr && (!healthy_ || healthy_(*conns_[i]))) return conns_[i].get();
    conns_[i].reset();
    MR_ASSIGN_OR_RETURN(conns_[i], connect_());
    return conns_[i].get();
  }
  // Connection i if one is kept, else null.
  Conn* Kept(size_t i) const { return conns_[i].get(); }
  void Drop(size_t i) { conns_[i].reset(); }
  void DropAll() {
    for (auto& conn : conns_)
      conn.reset();
  }

 private:
  const Connect connect_;
  const std::function<bool(const Conn&)> healthy_;
  std::vector<std::unique_ptr<Conn>> conns_;
};

}  // namespace millrace::cdc
