// BatchLoader's writes into a table with a key (UNIQUE, AGGREGATE; batch_loader.h): the census of
// a SELECT's keys, the plain INSERT, the upsert, the fold and the rows set apart per key. The
// rest of the class (which files load together, fast and careful loads, rows per file) is in
// batch_loader.cc.
#include "common/strings.h"
#include "engine/duckdb_status.h"
#include "files/batch_loader.h"
#include "table/model_write.h"

namespace millrace::files {

using engine::QuoteIdentifier;

std::string BatchLoader::KeyList(const std::string& alias) const {
  std::string keys;
  for (const std::string& key : by_key_->keys)
    keys += (keys.empty() ? "" : ", ") + (alias.empty() ? "" : alias + ".") + QuoteIdentifier(key);
  return keys;
}

std::string BatchLoader::KeysEqual(const std::string& left, const std::string& right) const {
  std::string equal;
  for (const std::string& key : by_key_->keys) {
    const std::string quoted = QuoteIdentifier(key);
    equal += (equal.empty() ? "" : " AND ") + left + "." + quoted + " = " + right + "." + quoted;
  }
  return equal;
}

Status BatchLoader::WriteReduced(const std::string& select) {
  MR_ASSIGN_OR_RETURN(std::vector<std::string> writes,
                      table::ModelWriteSql(*by_key_, spec_.analysis.target_table, TargetNames(),
                                           TypedSelect(select, /*numbered=*/true), kRowColumn));
  for (const std::string& write : writes)
    MR_RETURN_IF_ERROR(conn_->Execute(write));
  return Status::Ok();
}

namespace {
// The rows a UNIQUE load sets apart (BatchLoader::SetAside); dropped before the load ends, or
// with the transaction when it fails.
constexpr const char* kSetAside = "temp.__millrace_rewritten_keys";
}  // namespace

Status BatchLoader::SetAside(const std::string& select, SetAsideRows which) {
  // Through a table because DuckDB updates rows this transaction wrote many times slower from
  // a statement that reads a file than from one that reads a table (measured with DuckDB
  // 1.4.4: 4.2 s to rewrite 41,451 keys of an 830,000-row file in one statement, 0.9 s through
  // a temporary table).
  std::string stored;
  if (which == SetAsideRows::kRepeatedOrStoredKeys) {
    stored = " OR EXISTS (SELECT 1 FROM " + spec_.analysis.target_table +
             " AS __millrace_stored WHERE " + KeysEqual("__millrace_stored", "__millrace_new") +
             ")";
  }
  return conn_->Execute("CREATE TEMP TABLE " + std::string(kSetAside) + " AS SELECT * FROM (" +
                        TypedSelect(select, /*numbered=*/true) +
                        ") AS __millrace_new QUALIFY count(*) OVER (PARTITION BY " + KeyList() +
                        ") > 1" + stored);
}

Status BatchLoader::WriteSetAside() {
  MR_ASSIGN_OR_RETURN(std::vector<std::string> writes,
                      table::ModelWriteSql(*by_key_, spec_.analysis.target_table, TargetNames(),
                                           std::string("SELECT * FROM ") + kSetAside, kRowColumn));
  for (const std::string& write : writes)
    MR_RETURN_IF_ERROR(conn_->Execute(write));
  return conn_->Execute(std::string("DROP TABLE ") + kSetAside);
}

Result<BatchLoader::KeyCensus> BatchLoader::CountKeys(const std::string& select) {
  // One read of the key columns (the others are not cast or kept): the rows, their distinct
  // keys, and the rows whose key the table holds, this transaction's rows included. DuckDB
  // builds the join on the files' keys and skips the table's row groups outside their range.
  const std::string first_key = QuoteIdentifier(by_key_->keys.front());
  MR_ASSIGN_OR_RETURN(
      auto counted,
      engine::QueryTextRows(
          *conn_, "SELECT count(*), count(DISTINCT (" + KeyList("__millrace_new") +
                      ")), count(__millrace_stored." + first_key + ") FROM (" +
                      TypedSelect(select, /*numbered=*/false) + ") AS __millrace_new LEFT JOIN " +
                      spec_.analysis.target_table + " AS __millrace_stored ON " +
                      KeysEqual("__millrace_new", "__millrace_stored")));
  if (counted.size() != 1 || counted[0].size() != 3) {
    return Status::Internal("counting the keys of a file returned no row");
  }
  return KeyCensus{.rows = std::stoll(counted[0][0]),
                   .distinct = std::stoll(counted[0][1]),
                   .stored = std::stoll(counted[0][2])};
}

bool BatchLoader::IsKeysNotNew(const Status& status) {
  return engine::DuckDbReasonOf(status) == engine::DuckDbReason::kDuplicateKey;
}

Result<std::vector<FileLoad>> BatchLoader::LoadByKey(const FileGroup& group) {
  auto with_file = [&](const Status& s) { return DescribeGroupError(s, group); };
  auto select = SelectOver(group.readables, /*fast=*/true);
  if (!select.ok()) return with_file(select.status());
  if (Status s = CheckWidth(*select); !s.ok()) return with_file(s);
  if (!spec_.count_keys) {
    // The plain INSERT the census would pick when every key is new and comes once, without the
    // census's read of the keys (a quarter of a second per million rows); DuckDB's primary key
    // refuses it otherwise (IsKeysNotNew), unchanged, for the caller to load again counting.
    auto inserted = conn_->Query("INSERT INTO " + spec_.analysis.target_table + " (" +
                                 TargetList() + ") SELECT * FROM (" + *select + "\n)");
    if (!inserted.ok()) {
      return IsKeysNotNew(inserted.status()) ? inserted.status() : with_file(inserted.status());
    }
    const int64_t total = (*inserted)->rows_changed();
    inserted->reset();
    std::vector<int64_t> rows = {total};
    if (group.readables.size() > 1) {
      auto by_file = RowsByFile(group, total);
      if (!by_file.ok()) return with_file(by_file.status());
      rows = *std::move(by_file);
    }
    wrote_by_key_ = true;
    return Loads(rows, total);
  }
  auto census = CountKeys(*select);
  if (!census.ok()) return with_file(census.status());
  std::vector<int64_t> rows = {census->rows};
  if (group.readables.size() > 1) {
    auto by_file = RowsByFile(group, census->rows);
    if (!by_file.ok()) return with_file(by_file.status());
    rows = *std::move(by_file);
  }
  Status written;
  if (census->distinct == census->rows && census->stored == 0) {
    // Every key new and once: a plain INSERT, which DuckDB runs faster than either ON CONFLICT
    // (DuckDB 1.4.4, a million rows into a table with a primary key, in a transaction holding
    // up to 7 million: 0.9 s, against 1.5 s with DO NOTHING and 1.3-1.9 s with DO UPDATE). The
    // newlines end a trailing -- comment of the job's statement.
    written = conn_->Execute("INSERT INTO " + spec_.analysis.target_table + " (" + TargetList() +
                             ") SELECT * FROM (" + *select + "\n)");
  } else if (by_key_->model == table::TableModel::kUnique) {
    written = Upsert(*select, census->rows);
  } else {
    written = Fold(*select, census->distinct != census->rows);
  }
  if (!written.ok()) return with_file(written);
  wrote_by_key_ = true;
  return Loads(rows, census->rows);
}

Status BatchLoader::Upsert(const std::string& select, int64_t rows) {
  const std::string insert = "INSERT INTO " + spec_.analysis.target_table + " (" + TargetList() +
                             ") SELECT * FROM (" + select + "\n)";
  if (wrote_by_key_) {
    // A later statement of the task may meet keys an earlier one wrote, rows of this same
    // transaction, which DuckDB updates from a file at about 10,000 rows/s (83,000 such keys:
    // 9.6 s, against 1.7 s when they were committed). The rows whose key repeats or is stored
    // already are set apart first, the new keys inserted (DO NOTHING), and the rows set apart
    // written again from their table, reduced per key.
    MR_RETURN_IF_ERROR(SetAside(select, SetAsideRows::kRepeatedOrStoredKeys));
    MR_RETURN_IF_ERROR(conn_->Execute(insert + " ON CONFLICT DO NOTHING"));
    return WriteSetAside();
  }
  // The task's first statement upserts its rows as they come. Each row counts once, inserted or
  // updated, unless its key came before in the files (DuckDB then kept the earlier row): then
  // the newest row of each key that came more than once (by file, then line) is written again
  // over what came first (model_write.h), which leaves every key as the reduced write alone
  // would.
  MR_ASSIGN_OR_RETURN(const std::string conflict, table::UpsertClause(*by_key_, TargetNames()));
  MR_ASSIGN_OR_RETURN(auto changed, conn_->Query(insert + conflict));
  const int64_t written = changed->rows_changed();
  changed.reset();
  if (rows == written) return Status::Ok();
  MR_RETURN_IF_ERROR(SetAside(select, SetAsideRows::kRepeatedKeys));
  return WriteSetAside();
}

Status BatchLoader::Fold(const std::string& select, bool repeats) {
  // A fold per key (a window and a GROUP BY over the files) only when a key comes twice, else
  // each row merged with the stored one as it comes; one statement read straight from the
  // files either way.
  if (repeats) return WriteReduced(select);
  MR_ASSIGN_OR_RETURN(const std::string merge, table::UpsertClause(*by_key_, TargetNames()));
  return conn_->Execute("INSERT INTO " + spec_.analysis.target_table + " (" + TargetList() + ") " +
                        TypedSelect(select, /*numbered=*/false) + merge);
}

}  // namespace millrace::files
