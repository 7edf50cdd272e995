// BatchLoader: loads the files of one task into the job's table, inside the transaction the
// caller has open on the connection.
//
// Two ways to load a file:
// - Fast: the job's INSERT as written, with its S3()/local() call replaced by DuckDB's reader
//   over the file. Any bad value fails the statement (and with it the transaction).
// - Careful: the job's SELECT over the file is staged in a temporary table; each value is
//   converted to its target column's type with TRY_CAST; rows whose conversion fails (strict
//   mode) or that would put NULL in a NOT NULL column are filtered and recorded through the
//   sink's transaction (SinkTransaction::RecordFilteredRows) with file, record number, column,
//   value and reason; in non-strict
//   mode a value that cannot convert becomes NULL where the column allows it.
// The job service loads a batch fast first and, when a file fails with a row-level error
// (IsRowLevelError), rolls back and loads the whole batch carefully: bad rows are rare, and the
// fast way costs one pass over each file.
//
// Row order: the server runs DuckDB with preserve_insertion_order off (set once at start,
// before the configuration is locked: engine::DatabaseOptions), so a fast load inserts a
// file's rows in whatever order DuckDB's threads read them, as a multi-file load would:
// keeping the file's order serializes the end of every file's scan and costs about a quarter
// of the load time. A careful load numbers records with row_number() OVER (), which follows
// the reader's order whatever that setting (checked on a 3-million-row parallel CSV read with
// DuckDB 1.4.4; tests/job pins it). SQL tables have no order; a SELECT that needs one says
// ORDER BY.
//
// Tables with a Doris model (table/model_catalog.h) keep rows by key (UNIQUE, AGGREGATE). Files
// load in the batch's order, one at a time or small ones many to a statement (LoadGroupFast),
// so a later file's row of a key is newer than an earlier file's; within a file the newest row
// of a key wins (AGGREGATE folds them), and the rows are written with INSERT ... ON CONFLICT
// (table/model_write.h). A file (or group) without the delete sign loads fast, straight from
// the files (LoadByKey): one read of its key columns first counts its rows, its distinct keys
// and the keys the table holds (this transaction's rows included); when every key is new and
// comes once, the rows go in with a plain INSERT, which DuckDB runs faster than either ON
// CONFLICT. Else a UNIQUE file's rows are upserted as they come, in one statement; DuckDB
// counts a key met twice once, so fewer rows written than counted means a key came twice, and
// the newest row of each key that came more than once (by file, then line: row_number() OVER
// () follows the reader's order across the files of one reader) is upserted again over the
// first (Upsert); a later statement of the same transaction sets apart the rows whose key
// repeats or is stored, inserts only its new keys, then upserts the rows set apart from their
// temporary table (DuckDB updates rows of its own transaction slowly from a file). An AGGREGATE
// file's rows merge with the stored ones as they come when no key repeats, else they are folded per
// key (by file, then line) first (Fold). Files with the delete sign, and every file after a
// row-level error, load carefully: the rows staged with their record numbers, converted and
// filtered, reduced per key, then written. A NULL key is a filtered row ("NULL value for NOT
// NULL column": a key column is NOT NULL in DuckDB).
// FileLoad::rows counts the file's rows written, before the reduction.
//
// An empty (0-byte) file loads 0 rows. Errors name the file. Not thread-safe: one loader per
// task.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/database.h"
#include "job/job_statement.h"
#include "job/sink.h"
#include "load/file_params.h"
#include "table/table_def.h"

namespace millrace::files {

struct FileLoad {
  int64_t rows = 0;         // rows inserted
  int64_t filtered = 0;     // rows filtered (careful mode)
  std::string first_error;  // description of the first filtered row, "" when none
};

class KeyCountPolicy;

struct LoadSpec {
  int64_t job_id = 0;
  int64_t task_id = 0;
  std::string insert_sql;
  job::InsertAnalysis analysis;
  load::FileFunctionOptions options;
  bool strict = true;
  int64_t now_us = 0;
  // Files into a table with a key: false writes each with a plain INSERT, without counting its
  // keys first (LoadByKey), as when every key is new and comes once; a key that repeats or is
  // stored then fails the statement with IsKeysNotNew, and the batch is loaded again counting.
  // The load rounds set it from `key_counts` when given (file_load_rounds.h).
  bool count_keys = true;
  std::shared_ptr<KeyCountPolicy> key_counts;  // shared by a job's batches; null: always count
  // A task of several of its job at once (max_concurrent_tasks): its target must be a
  // DUPLICATE table (job_plan.h's CheckTasksAtOnce refuses the others; a table replaced since
  // by a UNIQUE or AGGREGATE one fails the task, CANNOT_RESUME).
  bool with_other_tasks = false;
};

// Whether a job's keyed loads count their keys first (LoadSpec::count_keys), learned from its
// batches: a batch starts without counting; after one whose keys were not all new, the next
// kCountedBatches count them (a stream of updates pays one failed INSERT in that many batches,
// a stream of new keys none). Thread-safe.
class KeyCountPolicy {
 public:
  static constexpr int kCountedBatches = 16;
  // Whether the next batch counts its keys.
  bool CountKeys() {
    int left = left_.load();
    while (left > 0 && !left_.compare_exchange_weak(left, left - 1)) {
    }
    return left > 0;
  }
  void KeysWereNotNew() { left_.store(kCountedBatches); }

 private:
  std::atomic<int> left_{0};
};

// Filtered rows recorded per file (the count is always exact).
inline constexpr int kFilteredRowsKeptPerFile = 1000;

class BatchLoader {
 public:
  // Loads through `txn`'s connection and records filtered rows through it; `txn` is borrowed.
  BatchLoader(job::SinkTransaction* txn, const LoadSpec& spec);
  // A loader that records no filtered rows, for what only reads (ReadingOver) or loads files
  // without bad rows; a careful load that filters a row fails INTERNAL.
  BatchLoader(engine::Connection* conn, const LoadSpec& spec);

  // False when the target's files must load one at a time whatever the statement: a table with
  // a key (UNIQUE, AGGREGATE) whose INSERT gives the delete sign (such files load carefully).
  // Else CanGroup decides.
  Result<bool> MayGroup();

  Result<FileLoad> LoadFast(const std::string& key, const std::string& readable);
  // A keyed load without LoadSpec::count_keys met a key that repeats or is stored: nothing of
  // the transaction stays; the batch loads again with count_keys.
  static bool IsKeysNotNew(const Status& status);

  // Small files load many to a statement (one INSERT and one count for the group instead of an
  // INSERT per file: DuckDB spends about a millisecond on each statement, more than on a file of
  // a few KB) when that cannot change the outcome: a csv format, files of one CsvShape (one
  // reader reads each as it would alone), or plain JSON read by the columns of the batch's first
  // file as each file alone is (GroupsJson), and a statement with one SELECT whose FROM is the
  // call alone, without DISTINCT, window, GROUP BY, HAVING, LIMIT, ORDER BY, join, set
  // operation or CTE, so that each output row comes from the rows of one file.
  static bool CanGroup(const LoadSpec& spec);
  // JSON groups (plain JSON, CanGroup) need no count by file: each file's rows are its counted
  // records, so the SELECT must keep every record (KeepsEveryRecord), and the target has no key.
  // Grouping large files saves DuckDB work as well as statements: each INSERT leaves partial
  // row groups that the next checkpoint merges and writes again (DuckDB 1.4: six files of 100
  // MB in one transaction, a statement each, cost 5.5 core-s against 4.0 in one statement).
  Result<bool> GroupsJson();
  // True when the job's SELECT makes exactly one row (loaded or filtered) of each record it
  // reads: no WHERE, aggregate, set-returning function, DISTINCT or the like. A file's rows
  // loaded + filtered must then equal its records (load/record_count.h).
  Result<bool> KeepsEveryRecord();
  // Whether LoadGroupFast, given `join_to`, reads a group of files with these counted `records`
  // (by index) as one joined file, reading none of its files but through `contents`: all
  // counted, a joinable dialect, no key, a SELECT that keeps every record.
  Result<bool> JoinsGroup(const std::vector<std::optional<int64_t>>& records);
  // The rows a Parquet file's footer declares (parquet_file_metadata's num_rows).
  Result<std::optional<int64_t>> FooterRows(const std::string& readable);
  // Loads `readables` (non-empty files of one shape, in the batch's order) with one INSERT: into
  // a table with a key, the rows of the files as LoadFast writes one file's, the newest row of a
  // key being the last file's, then its last line's (MayGroup must be true). Each file's rows
  // are its `records` (counted records, by index; empty: none known) when the SELECT keeps every
  // record and they add up to what the statement wrote, else counted by the job's SELECT list
  // with the file's name added, over the same FROM and WHERE (an aggregate then fails to bind).
  // A row-level error is returned as LoadFast's; ABORTED when the counts do not add up to the
  // rows inserted. Other errors do not say which file is bad: the caller loads the files one by
  // one.
  // Given `join_to` (a path in the work directory), CSV files whose dialect allows it
  // (load::CsvJoinable), all with counted records, into a table without a key under a SELECT
  // that keeps every record, are read as one file written there (load/csv_join.h): their
  // records are then their rows, and FAILED_PRECONDITION says they do not add up to the rows
  // read (no file column can tell them apart: the caller loads the files one by one).
  // `contents` (by index, may be empty or hold nulls): the bytes of files already in memory,
  // joined from there (load::JoinCsvFiles).
  Result<std::vector<FileLoad>> LoadGroupFast(
      const std::vector<std::string>& readables,
      const std::vector<std::optional<int64_t>>& records = {}, const std::string& join_to = "",
      const std::vector<const std::string*>& contents = {});
  Result<FileLoad> LoadCareful(const std::string& key, const std::string& readable);

  // True for errors a careful load turns into filtered rows: conversion failures, NULLs in
  // NOT NULL columns, and json values that do not fit the batch's columns.
  static bool IsRowLevelError(const Status& status);

  // Dry runs (job_dry_run.h): DuckDB's reader over `readables` (non-empty files) and the job's
  // SELECT with its S3()/local() call replaced by that reader, as a fast load builds them (json
  // read with the columns detected in the first file). Runs no statement that writes.
  struct Reading {
    std::string reader;  // a parenthesized SELECT
    std::string select;
  };
  Result<Reading> ReadingOver(const std::vector<std::string>& readables);

 private:
  // The column numbering a file's rows in the reader's order (a careful load's stage holds it
  // too).
  static constexpr const char* kRowColumn = "__millrace_row";
  struct TargetColumn {
    std::string name;
    std::string type;
    bool not_null = false;
  };
  Status LoadTargetColumns();
  // Reads the target's Doris definition into by_key_ when it keeps rows by key.
  Status LoadModel();
  // The job's SELECT with the file function replaced by the reader over `readables`. A fast
  // load reads json with the columns detected in the first file of the batch (by name, one
  // detection); a careful one lets DuckDB detect each file's, so a value of another type in a
  // later file is a filtered row rather than a failed read.
  Result<std::string> SelectOver(const std::vector<std::string>& readables, bool fast);
  // The columns DuckDB detects in json `file`, typed as the target wants (load::
  // DetectJsonColumns; "" when not plain json).
  Result<std::string> DetectJsonColumns(const std::string& file);
  // A fast load's json columns: detected in `first` once, then the same for every file.
  Result<const std::string*> FastJsonColumns(const std::string& first);
  // The reader SelectOver puts in place of the call.
  Result<std::string> ReaderOver(const std::vector<std::string>& readables, bool fast);
  std::string WithReader(const std::string& reader) const;
  // Runs the job's INSERT over `readables` (fast) and returns the rows it inserted.
  Result<int64_t> InsertOver(const std::vector<std::string>& readables);

  BatchLoader(engine::Connection* conn, job::SinkTransaction* txn, const LoadSpec& spec);
  // Files one statement loads, in the batch's order: their keys (one: errors name it), readable
  // paths and counted records (by index; empty when none was counted).
  struct FileGroup {
    std::vector<std::string> keys;
    std::vector<std::string> readables;
    std::vector<std::optional<int64_t>> records;
  };
  // `error` naming the group's file when it has one key, else as it is.
  static Status DescribeGroupError(const Status& error, const FileGroup& group);
  bool SignedRows() const;  // the INSERT's columns include the delete sign
  // What one read of a SELECT's keys tells: its rows, their distinct keys, and the rows whose
  // key the table holds (this transaction's rows included).
  struct KeyCensus {
    int64_t rows = 0;
    int64_t distinct = 0;
    int64_t stored = 0;
  };
  Result<KeyCensus> CountKeys(const std::string& select);
  // Files into a table with a key, the delete sign not given: their keys counted first (one
  // read of the key columns); when every key is new and comes once, a plain INSERT; else
  // Upsert (UNIQUE) or Fold (AGGREGATE). One statement read straight from the files. Without
  // LoadSpec::count_keys, the plain INSERT at once (IsKeysNotNew when it was not).
  Result<std::vector<FileLoad>> LoadByKey(const FileGroup& group);
  // A UNIQUE table's `select` (of `rows` rows): its rows upserted as they come, in one statement
  // (after an earlier statement of the transaction: its new keys inserted); when a key came
  // twice (or was not new), the newest row of each such key is upserted again.
  Status Upsert(const std::string& select, int64_t rows);
  // An AGGREGATE table's `select`: each row merged with the stored one as it comes or, when a
  // key `repeats`, the rows folded per key first.
  Status Fold(const std::string& select, bool repeats);
  // FileLoads of `rows_by_file`; ABORTED when they do not add up to `total`, the rows read.
  static Result<std::vector<FileLoad>> Loads(const std::vector<int64_t>& rows_by_file,
                                             int64_t total);
  // Each file's counted records when every file's is known; else nullopt.
  static std::optional<std::vector<int64_t>> AllCounted(const FileGroup& group);
  // Each file's counted records when the group is read as one file at `join_to` (see
  // LoadGroupFast); else nullopt.
  Result<std::optional<std::vector<int64_t>>> JoinedRecords(const FileGroup& group,
                                                            const std::string& join_to);
  // Each file's counted records when every file's is known, the SELECT keeps every record and
  // they add up to `total`; else nullopt.
  Result<std::optional<std::vector<int64_t>>> RecordsAddingUpTo(const FileGroup& group,
                                                                int64_t total);
  // Each file's rows, counted by DuckDB (the job's SELECT list with the file's name added).
  Result<std::vector<int64_t>> CountByFile(const std::vector<std::string>& readables);
  // Each file's rows of a group that read `total` rows: RecordsAddingUpTo, else counted.
  Result<std::vector<int64_t>> RowsByFile(const FileGroup& group, int64_t total);
  // Refuses a `select` whose width is not the INSERT's columns'.
  Status CheckWidth(const std::string& select);
  // `select`'s rows with each value cast to its target column's type, named as the INSERT's
  // columns; `numbered`: and numbered in kRowColumn by the reader's order.
  std::string TypedSelect(const std::string& select, bool numbered) const;
  // by_key_'s keys, quoted (each after `alias`. when given), comma-separated.
  std::string KeyList(const std::string& alias = "") const;
  // "left.k = right.k AND ..." over by_key_'s keys.
  std::string KeysEqual(const std::string& left, const std::string& right) const;
  // The rows of `select` (of the INSERT's width: CheckWidth) reduced per key by line and
  // written (model_write.h).
  Status WriteReduced(const std::string& select);
  // The rows of `select` (numbered, in a temporary table) whose key comes more than once in it,
  // and with kRepeatedOrStoredKeys also those whose key the table holds; WriteSetAside writes
  // them reduced per key (model_write.h), over an unreduced write of `select`, and drops them.
  enum class SetAsideRows { kRepeatedKeys, kRepeatedOrStoredKeys };
  Status SetAside(const std::string& select, SetAsideRows which);
  Status WriteSetAside();
  std::string TargetList() const;  // the INSERT's columns, quoted, comma-separated
  std::vector<std::string> TargetNames() const;

  job::SinkTransaction* const txn_;  // null: no filtered row is recorded
  engine::Connection* const conn_;
  const LoadSpec& spec_;
  std::vector<TargetColumn> targets_;  // filled on the first careful load
  // The target's Doris definition when it keeps rows by key; read with targets_.
  std::optional<table::TableDef> by_key_;
  // json: the columns detected in the first file loaded, read by name in every file.
  std::optional<std::string> json_columns_;
  // Where the FROM before the call begins when the statement can load groups (CanGroup).
  const std::optional<size_t> group_from_;
  std::optional<bool> keeps_every_record_;  // KeepsEveryRecord, once asked
  bool wrote_by_key_ = false;               // a keyed file was written in this transaction
};

}  // namespace millrace::files
