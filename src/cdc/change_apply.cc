#include "cdc/change_apply.h"

#include <algorithm>
#include <bit>
#include <unordered_map>

#include "cdc/staged_run.h"
#include "common/strings.h"
#include "engine/statement_plan.h"
#include "table/model_write.h"

namespace millrace::cdc {
namespace {

using engine::QuoteIdentifier;

constexpr char kLast[] = "__millrace_cdc_last";
constexpr char kUpserts[] = "__millrace_cdc_upserts";
constexpr char kKeys[] = "__millrace_cdc_keys";

// boost::hash_combine's mix.
size_t HashCombine(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

// Whether a hash is added twice: an open-addressed table of at least twice the hashes it will
// hold, filled until the first repeat.
class RepeatFinder {
 public:
  explicit RepeatFinder(size_t hashes)
      : slots_(std::bit_ceil(std::max<size_t>(2 * hashes, 16))), mask_(slots_.size() - 1) {}
  void Add(size_t hash) {
    if (repeats_) return;
    if (hash == 0) hash = 1;  // 0 marks an empty slot
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      if (slots_[i] == hash) {
        repeats_ = true;
        return;
      }
      if (slots_[i] == 0) {
        slots_[i] = hash;
        return;
      }
    }
  }
  bool repeats() const { return repeats_; }

 private:
  std::vector<size_t> slots_;
  const size_t mask_;
  bool repeats_ = false;
};

}  // namespace

Status CheckSelect(engine::Connection& conn, const SourceTable& source, ApplyTarget* target) {
  std::string create = "CREATE OR REPLACE TEMP TABLE " + std::string(kSourceName) + " (";
  for (size_t i = 0; i < source.columns.size(); ++i) {
    create += (i ? ", " : "") + QuoteIdentifier(source.columns[i].name) + " " +
              source.columns[i].mapping.duckdb_type;
  }
  MR_RETURN_IF_ERROR(conn.Execute(create + ")"));
  auto unfiltered = engine::RowMapWithoutFilter(conn, target->select_sql);
  if (!unfiltered.ok()) return unfiltered.status().WithContext("the job's SELECT");
  target->unfiltered_sql = unfiltered->value_or("");
  std::string columns;
  for (const std::string& c : target->columns)
    columns += (columns.empty() ? "" : ", ") + QuoteIdentifier(c);
  auto bound =
      conn.PrepareOne("INSERT INTO " + target->table + " (" + columns + ") " + target->select_sql);
  if (!bound.ok()) {
    return bound.status().WithContext("the job's SELECT over the columns of " + source.Display());
  }
  return Status::Ok();
}

Result<int64_t> ChangeApply::Apply(job::SinkTransaction& txn,
                                   const std::vector<Change>& changes) const {
  engine::Connection& conn = txn.connection();
  size_t begin = 0;
  for (size_t i = 0; i <= changes.size(); ++i) {
    if (i < changes.size() && changes[i].kind != Change::Kind::kTruncate) continue;
    if (i > begin) MR_RETURN_IF_ERROR(ApplyRun(conn, changes, begin, i));
    if (i < changes.size()) MR_RETURN_IF_ERROR(txn.EmptyTarget(target_->table));
    begin = i + 1;
  }
  return static_cast<int64_t>(changes.size());
}

Status ChangeApply::ApplyRun(engine::Connection& conn, const std::vector<Change>& changes,
                             size_t begin, size_t end) const {
  const std::vector<SourceColumn>& columns = source_->columns;

  // An UPDATE that left a TOASTed value out of the stream takes it from an earlier change of
  // its key: only then are each key's staged values kept, as they were last staged.
  const bool any_unchanged =
      std::any_of(changes.begin() + static_cast<std::ptrdiff_t>(begin),
                  changes.begin() + static_cast<std::ptrdiff_t>(end), [](const Change& c) {
                    return std::any_of(c.row.begin(), c.row.end(), [](const change::TupleValue& v) {
                      return v.kind == change::TupleValue::Kind::kUnchanged;
                    });
                  });
  std::unordered_map<std::string, std::vector<std::optional<std::string>>> latest;
  bool any_kept = false;
  bool any_delete = false;
  // A key met twice in the run: only then is the run reduced to each key's newest change. Keys
  // are compared by a hash of their values: two keys that share one only add that reduction,
  // which gives the same rows.
  RepeatFinder key_hashes(end - begin);
  // The run's rows, staged as text: the SQL below casts them (change::ValueSql).
  StagedRun run(columns.size());
  {
    std::string key;
    std::vector<std::optional<std::string>> staged(columns.size());
    for (size_t n = begin; n < end; ++n) {
      const Change& change = changes[n];
      const bool del = change.kind == Change::Kind::kDelete;
      any_delete = any_delete || del;
      if (change.row.size() != columns.size()) {
        return Status::DataLoss("a change of " + source_->Display() + " has " +
                                std::to_string(change.row.size()) + " columns, the table has " +
                                std::to_string(columns.size()));
      }
      size_t hash = source_->key.size();
      for (size_t k : source_->key)
        hash = HashCombine(hash, std::hash<std::string_view>{}(change.row[k].text));
      key_hashes.Add(hash);
      if (any_unchanged) {
        // The key's values, each with its length first, so that no two keys spell the same.
        key.clear();
        for (size_t k : source_->key)
          key += std::to_string(change.row[k].text.size()) + ":" + change.row[k].text;
      }
      std::string keep;
      for (size_t i = 0; i < columns.size(); ++i) {
        const change::TupleValue& v = change.row[i];
        staged[i].reset();
        if (v.kind == change::TupleValue::Kind::kText) {
          if (columns[i].mapping.form != change::ValueForm::kArray && !any_unchanged) {
            run.Add(v.text);  // staged as it came, viewed in `changes`
            continue;
          }
          MR_ASSIGN_OR_RETURN(std::string text, change::StageText(columns[i].mapping, v.text));
          staged[i] = std::move(text);
        } else if (v.kind == change::TupleValue::Kind::kUnchanged && !del) {
          if (i < change.old_row.size() &&
              change.old_row[i].kind == change::TupleValue::Kind::kText) {
            MR_ASSIGN_OR_RETURN(std::string text,
                                change::StageText(columns[i].mapping, change.old_row[i].text));
            staged[i] = std::move(text);
          } else if (auto it = latest.find(key); it != latest.end() && it->second[i]) {
            staged[i] = it->second[i];
          } else {
            keep += "," + std::to_string(i);
          }
        }
        if (staged[i]) {
          run.AddOwned(*staged[i]);
        } else {
          run.Add(std::nullopt);
        }
      }
      run.EndRow(static_cast<int64_t>(n), del, keep.empty() ? "" : keep + ",");
      any_kept = any_kept || !keep.empty();
      if (!any_unchanged) continue;
      if (del) {
        latest.erase(key);
      } else {
        latest[key] = staged;
      }
    }
  }
  const bool repeats = key_hashes.repeats();
  run.Publish(conn);
  const std::string stage = run.FromItem();

  // The newest change of each source key, typed.
  std::string typed;
  std::string names;
  std::string partition;
  for (size_t i = 0; i < columns.size(); ++i) {
    typed += (i ? ", " : "") + change::ValueSql(columns[i].mapping, StagedRun::Column(i)) + " AS " +
             QuoteIdentifier(columns[i].name);
    names += (i ? ", " : "") + QuoteIdentifier(columns[i].name);
  }
  for (size_t k : source_->key)
    partition += (partition.empty() ? "" : ", ") + StagedRun::Column(k);
  const std::string newest = repeats ? " QUALIFY row_number() OVER (PARTITION BY " + partition +
                                           " ORDER BY __seq DESC) = 1"
                                     : std::string();
  // A run of upserts only, of distinct source keys: written as `rows` gives them, in one
  // statement (with the sign 0 where the target keeps it: an earlier run may have left 1).
  auto upsert_from = [&](const std::string& rows) -> Status {
    std::vector<std::string> given = target_->columns;
    if (target_->def.delete_sign_kept) given.push_back(std::string(table::kDeleteSign));
    std::string list;
    for (const std::string& c : given)
      list += (list.empty() ? "" : ", ") + QuoteIdentifier(c);
    MR_ASSIGN_OR_RETURN(const std::string upsert, table::UpsertClause(target_->def, given));
    return conn.Execute("INSERT INTO " + target_->table + " (" + list + ") SELECT *" +
                        (target_->def.delete_sign_kept ? ", 0" : "") + " FROM " + rows + upsert);
  };
  const bool deletes = any_delete || !target_->unfiltered_sql.empty();
  if (!deletes && !any_kept && seen_.empty()) {
    // Upserts only, through a SELECT without a filter, every value in the stream: the SELECT
    // reads the staged rows through a view, and writes them in one statement.
    MR_RETURN_IF_ERROR(conn.Execute(std::string("CREATE OR REPLACE TEMP VIEW ") +
                                    std::string(kSourceName) + " AS SELECT " + typed + " FROM " +
                                    stage + newest));
    MR_RETURN_IF_ERROR(upsert_from("(" + target_->select_sql + ")"));
    return conn.Execute(std::string("DROP VIEW ") + std::string(kSourceName));
  }
  MR_RETURN_IF_ERROR(conn.Execute(std::string("CREATE OR REPLACE TEMP TABLE ") + kLast +
                                  " AS SELECT " + typed + ", __del, __keep FROM " + stage +
                                  newest));
  if (any_kept) {
    // Unchanged TOASTed values the run did not carry: the target's row of the key has them.
    std::string on;
    for (size_t k : source_->key) {
      const std::string c = QuoteIdentifier(columns[k].name);
      on += (on.empty() ? "" : " AND ") + std::string("s.") + c + " = t." + c;
    }
    for (size_t i = 0; i < columns.size(); ++i) {
      const std::string c = QuoteIdentifier(columns[i].name);
      const std::string marker = "'%," + std::to_string(i) + ",%'";
      MR_ASSIGN_OR_RETURN(auto needed,
                          engine::QueryTextRows(conn, std::string("SELECT count(*) FROM ") + kLast +
                                                          " WHERE __keep LIKE " + marker));
      if (needed.empty() || needed[0][0] == "0") continue;
      if (target_->def.delete_sign_kept) {
        // A staging table holds this transaction's rows only, not the target's.
        return Status::InvalidArgument(
            "an UPDATE of " + source_->Display() + " left column " + columns[i].name +
            " unchanged (a TOASTed value the change stream does not carry), and the target is "
            "written through a sink that does not read its rows back; set REPLICA IDENTITY "
            "FULL on the source table");
      }
      Status filled =
          conn.Execute(std::string("UPDATE ") + kLast + " AS s SET " + c + " = t." + c + " FROM " +
                       target_->table + " AS t WHERE " + on + " AND s.__keep LIKE " + marker);
      if (!filled.ok()) {
        return Status::InvalidArgument(
            "an UPDATE of " + source_->Display() + " left column " + columns[i].name +
            " unchanged (a TOASTed value the change stream does not carry) and the target " +
            target_->table + " cannot supply it (" + filled.message() +
            "); set REPLICA IDENTITY FULL on the source table");
      }
    }
  }

  auto map_rows = [&](const std::string& into, const std::string& where,
                      const std::string& select) -> Status {
    MR_RETURN_IF_ERROR(conn.Execute(std::string("CREATE OR REPLACE TEMP TABLE ") +
                                    std::string(kSourceName) + " AS SELECT " + names + " FROM " +
                                    kLast + where));
    return conn.Execute("CREATE OR REPLACE TEMP TABLE " + into + " AS " + select);
  };
  MR_RETURN_IF_ERROR(map_rows(kUpserts, " WHERE NOT __del", target_->select_sql));
  if (!seen_.empty()) {
    std::string aliases;
    for (const std::string& c : target_->columns)
      aliases += (aliases.empty() ? "" : ", ") + QuoteIdentifier(c);
    std::string keys;
    for (const std::string& k : target_->def.keys)
      keys += (keys.empty() ? "" : ", ") + QuoteIdentifier(k);
    MR_RETURN_IF_ERROR(conn.Execute("INSERT INTO " + seen_ + " SELECT " + keys + " FROM " +
                                    kUpserts + " AS __u(" + aliases + ")"));
  }
  if (deletes) {
    MR_RETURN_IF_ERROR(
        map_rows(kKeys, "",
                 target_->unfiltered_sql.empty() ? target_->select_sql : target_->unfiltered_sql));
  } else {
    MR_RETURN_IF_ERROR(upsert_from(kUpserts));
    return DropStaging(conn);
  }
  std::vector<std::string> given = target_->columns;
  std::string aliases;
  for (const std::string& c : given)
    aliases += QuoteIdentifier(c) + ", ";
  given.push_back(std::string(table::kDeleteSign));
  aliases += std::string(table::kDeleteSign) + ", __order";
  std::string rows = std::string("SELECT *, 0, 1 FROM ") + kUpserts;
  if (deletes) rows = std::string("SELECT *, 1, 0 FROM ") + kKeys + " UNION ALL " + rows;
  std::string source = "SELECT * FROM (" + rows + ") AS __rows(" + aliases + ")";
  MR_ASSIGN_OR_RETURN(std::vector<std::string> writes,
                      table::ModelWriteSql(target_->def, target_->table, given, source, "__order"));
  for (const std::string& write : writes)
    MR_RETURN_IF_ERROR(conn.Execute(write));
  return DropStaging(conn);
}

Status ChangeApply::DropStaging(engine::Connection& conn) {
  return conn.Execute(std::string("DROP TABLE IF EXISTS ") + kLast + "; DROP TABLE IF EXISTS " +
                      kUpserts + "; DROP TABLE IF EXISTS " + kKeys + "; DROP TABLE IF EXISTS " +
                      std::string(kSourceName));
}

}  // namespace millrace::cdc
