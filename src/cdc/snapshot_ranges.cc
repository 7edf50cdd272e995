#include "cdc/snapshot_ranges.h"

#include <thread>
#include <utility>

namespace millrace::cdc {

change::Tuple TextTuple(std::vector<std::optional<std::string>>& row, int64_t* bytes) {
  change::Tuple tuple;
  tuple.reserve(row.size());
  for (std::optional<std::string>& field : row) {
    change::TupleValue value;
    if (field) {
      value.kind = change::TupleValue::Kind::kText;
      value.text = std::move(*field);
      *bytes += static_cast<int64_t>(value.text.size());
    }
    tuple.push_back(std::move(value));
  }
  return tuple;
}

std::vector<KeyRange> SplitRanges(std::vector<std::string> after,
                                  std::vector<std::vector<std::string>> bounds, int parallelism) {
  std::vector<KeyRange> ranges;
  std::vector<std::string> lower = std::move(after);
  for (std::vector<std::string>& upper : bounds) {
    ranges.push_back({lower, upper});
    lower = std::move(upper);
  }
  if (ranges.empty() || static_cast<int>(ranges.size()) < parallelism) {
    ranges.push_back({std::move(lower), {}});
  }
  return ranges;
}

Result<SnapshotRead> ReadRanges(const std::vector<KeyRange>& ranges, int64_t split_size,
                                const RangeRead& read) {
  std::vector<std::vector<change::Tuple>> rows(ranges.size());
  std::vector<int64_t> bytes(ranges.size(), 0);
  std::vector<Status> results(ranges.size());
  std::vector<std::thread> threads;
  for (size_t i = 1; i < ranges.size(); ++i)
    threads.emplace_back([&, i] { results[i] = read(i, ranges[i], &rows[i], &bytes[i]); });
  results[0] = read(0, ranges[0], &rows[0], &bytes[0]);
  for (std::thread& t : threads)
    t.join();
  for (const Status& s : results)
    MR_RETURN_IF_ERROR(s);
  SnapshotRead out;
  for (size_t i = 0; i < ranges.size(); ++i) {
    out.bytes += bytes[i];
    for (change::Tuple& tuple : rows[i])
      out.rows.push_back(std::move(tuple));
  }
  out.done = ranges.back().upper.empty() && static_cast<int64_t>(rows.back().size()) < split_size;
  return out;
}

}  // namespace millrace::cdc
