// StagedRun: the staged rows of a run of changes, read by the apply's statements through the
// table function __millrace_cdc_run(run := '<token>') instead of being appended into a
// temporary table first (DuckDB's append compressed and counted every staged value: about half
// of a batch's staging time, docs/PERFORMANCE.md).
//
// Contract
// - RegisterStagedRuns(db) makes the function callable on `db`'s connections, once per
//   Database; it is internal (not among the functions users' statements may call).
// - A StagedRun holds rows of `columns` texts (each a view or NULL) and, per row, __seq BIGINT,
//   __del BOOLEAN and __keep VARCHAR. The function returns them in order as columns c0..cN-1
//   VARCHAR, __seq, __del, __keep.
// - Publish(conn) makes the run readable by statements on `conn` only (another connection's
//   call, or a token no run holds, fails the statement naming the token) until the run is
//   destroyed; FromItem() is the SQL that reads it. Texts are viewed, not copied: what they view
//   (the changes; Own keeps a converted text) must outlive the run.
// - Thread-safety: filling a run is one thread's; once published it is read-only, and any
//   thread may read it (DuckDB's scan).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engine/database.h"

namespace millrace::cdc {

Status RegisterStagedRuns(engine::Database& db);

class StagedRun {
 public:
  explicit StagedRun(size_t columns) : columns_(columns) {}
  ~StagedRun();
  StagedRun(const StagedRun&) = delete;
  StagedRun& operator=(const StagedRun&) = delete;

  // Row-building: `columns` values, then EndRow.
  void Add(std::optional<std::string_view> value) { values_.push_back(value); }
  // Keeps `text` for the run's life and adds a view of it.
  void AddOwned(std::string text) { values_.emplace_back(owned_.emplace_back(std::move(text))); }
  void EndRow(int64_t seq, bool del, std::string keep);

  void Publish(const engine::Connection& conn);
  // `__millrace_cdc_run(run := '<token>')`; Publish first.
  std::string FromItem() const;
  // The name of value column `i` in what FromItem reads: "c<i>".
  static std::string Column(size_t i) { return "c" + std::to_string(i); }

  size_t columns() const { return columns_; }
  size_t rows() const { return seq_.size(); }
  std::optional<std::string_view> value(size_t row, size_t column) const {
    return values_[row * columns_ + column];
  }
  int64_t seq(size_t row) const { return seq_[row]; }
  bool del(size_t row) const { return del_[row] != 0; }
  const std::string& keep(size_t row) const { return keep_[row]; }  // "" : NULL

 private:
  const size_t columns_;
  std::vector<std::optional<std::string_view>> values_;  // row-major
  std::deque<std::string> owned_;                        // stable: values_ views them
  std::vector<int64_t> seq_;
  std::vector<uint8_t> del_;
  std::vector<std::string> keep_;
  uint64_t token_ = 0;  // 0: not published
};

}  // namespace millrace::cdc
