#include "files/batch_loader.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <numeric>

#include "common/strings.h"
#include "engine/duckdb_status.h"
#include "engine/statement_plan.h"
#include "job/job_errors.h"
#include "load/csv_join.h"
#include "load/read_error.h"
#include "load/reader_sql.h"
#include "sql/lexer.h"
#include "table/model_catalog.h"
#include "table/model_write.h"

namespace millrace::files {
namespace {

using engine::QuoteIdentifier;
using engine::QuoteLiteral;

constexpr const char* kStage = "__millrace_stage";

// Records before the first data record of a file: header lines and skipped lines.
int64_t LinesBeforeData(const load::FileFunctionOptions& options) {
  int64_t lines = options.csv.skip_lines;
  if (options.format == load::Format::kCsvWithNames) lines += 1;
  if (options.format == load::Format::kCsvWithNamesAndTypes) lines += 2;
  return options.format == load::Format::kParquet || options.format == load::Format::kJson ? 0
                                                                                           : lines;
}

// A file with no record loads 0 rows, without a reader (load::HoldsNoRecord).
Result<bool> HoldsNoRecord(const load::FileFunctionOptions& options, const std::string& key,
                           const std::string& readable) {
  auto none = load::HoldsNoRecord(options, readable);
  if (!none.ok()) return load::DescribeReadError(none.status(), key, {readable});
  return *none;
}

}  // namespace

namespace {

// What the job's statement does with the rows of its S3()/local() call, read from its tokens.
struct SelectShape {
  // Where the FROM that introduces the call begins, when nothing makes a row depend on the rows
  // of another file (see CanGroup); nullopt otherwise.
  std::optional<size_t> one_to_one_from;
  bool where = false;  // a WHERE leaves rows out
};

SelectShape ShapeOf(const LoadSpec& spec) {
  const job::InsertAnalysis& a = spec.analysis;
  const std::string& sql = spec.insert_sql;
  auto word = [&](const sql::Token& t, std::string_view w) {
    return t.kind == sql::TokenKind::kWord && EqualsIgnoreCase(t.Text(sql), w);
  };
  SelectShape shape;
  const sql::Token* before_call = nullptr;
  int selects = 0;
  int depth = 0;
  for (const sql::Token& t : sql::SignificantTokens(sql)) {
    // One SELECT in the statement: a subquery or CTE could read the target table, which the
    // group's INSERT changes before the count by file runs.
    if (word(t, "SELECT") && ++selects > 1) return {};
    if (t.begin < a.select_begin || (t.begin >= a.call_begin && t.end <= a.call_end)) continue;
    if (t.end <= a.call_begin) before_call = &t;
    const std::string_view text = t.Text(sql);
    if (text == "(") ++depth;
    if (text == ")") --depth;
    // The call must be the only item of the FROM clause, and nothing may make a row depend on
    // the rows of another file.
    if (t.begin >= a.call_end && depth == 0 && text == ",") return {};
    for (std::string_view w : {"DISTINCT", "OVER", "GROUP", "HAVING", "LIMIT", "OFFSET", "ORDER",
                               "UNION", "INTERSECT", "EXCEPT", "QUALIFY", "WINDOW", "JOIN",
                               "SAMPLE", "TABLESAMPLE", "USING", "PIVOT", "UNPIVOT", "WITH"}) {
      if (word(t, w)) return {};
    }
    shape.where = shape.where || word(t, "WHERE");
  }
  if (before_call == nullptr || !word(*before_call, "FROM")) return {};
  shape.one_to_one_from = before_call->begin;
  return shape;
}

// The FROM to load files in groups from (see CanGroup); nullopt when they cannot be.
std::optional<size_t> GroupableFrom(const LoadSpec& spec) {
  const load::Format format = spec.options.format;
  if (format != load::Format::kCsv && format != load::Format::kCsvWithNames &&
      format != load::Format::kCsvWithNamesAndTypes && !load::PlainJson(spec.options)) {
    return std::nullopt;
  }
  return ShapeOf(spec).one_to_one_from;
}

}  // namespace

BatchLoader::BatchLoader(engine::Connection* conn, const LoadSpec& spec)
    : BatchLoader(conn, nullptr, spec) {}

BatchLoader::BatchLoader(job::SinkTransaction* txn, const LoadSpec& spec)
    : BatchLoader(&txn->connection(), txn, spec) {}

BatchLoader::BatchLoader(engine::Connection* conn, job::SinkTransaction* txn, const LoadSpec& spec)
    : txn_(txn), conn_(conn), spec_(spec), group_from_(GroupableFrom(spec)) {}

bool BatchLoader::IsRowLevelError(const Status& status) {
  using engine::DuckDbReason;
  const DuckDbReason reason = engine::DuckDbReasonOf(status);
  // A JSON transform error is a value that does not fit the columns of the batch's first file
  // (fast loads): the careful load detects each file's own.
  return engine::IsDuckDbError(status, DUCKDB_ERROR_CONVERSION) ||
         reason == DuckDbReason::kNotNullViolated || reason == DuckDbReason::kJsonTransformFailed;
}

Result<std::string> BatchLoader::DetectJsonColumns(const std::string& file) {
  // JSON fields named like the target's columns are read as the target wants where DuckDB's
  // guess cannot be right (reader_sql.h).
  std::map<std::string, std::string> wanted;
  for (const TargetColumn& target : targets_)
    wanted.emplace(ToLower(target.name), target.type);
  return load::DetectJsonColumns(spec_.options, file, *conn_, wanted);
}

Result<const std::string*> BatchLoader::FastJsonColumns(const std::string& first) {
  if (!json_columns_) {
    MR_ASSIGN_OR_RETURN(json_columns_, DetectJsonColumns(first));
  }
  return &*json_columns_;
}

Result<std::string> BatchLoader::ReaderOver(const std::vector<std::string>& readables, bool fast) {
  std::string columns;
  if (fast) {
    MR_ASSIGN_OR_RETURN(const std::string* detected, FastJsonColumns(readables.front()));
    columns = *detected;
  } else {
    MR_ASSIGN_OR_RETURN(columns, DetectJsonColumns(readables.front()));
  }
  return load::BuildReadSql(spec_.options, readables, *conn_, {.json_columns = columns});
}

Result<std::string> BatchLoader::SelectOver(const std::vector<std::string>& readables, bool fast) {
  MR_ASSIGN_OR_RETURN(std::string reader, ReaderOver(readables, fast));
  return WithReader(reader);
}

Result<BatchLoader::Reading> BatchLoader::ReadingOver(const std::vector<std::string>& readables) {
  MR_RETURN_IF_ERROR(LoadTargetColumns());
  Reading reading;
  MR_ASSIGN_OR_RETURN(reading.reader, ReaderOver(readables, /*fast=*/true));
  reading.select = WithReader(reading.reader);
  return reading;
}

std::string BatchLoader::WithReader(const std::string& reader) const {
  const job::InsertAnalysis& a = spec_.analysis;
  return spec_.insert_sql.substr(a.select_begin, a.call_begin - a.select_begin) + reader +
         spec_.insert_sql.substr(a.call_end);
}

Result<int64_t> BatchLoader::InsertOver(const std::vector<std::string>& readables) {
  MR_ASSIGN_OR_RETURN(std::string select, SelectOver(readables, /*fast=*/true));
  MR_ASSIGN_OR_RETURN(
      auto inserted,
      conn_->Query(spec_.insert_sql.substr(0, spec_.analysis.select_begin) + select));
  return inserted->rows_changed();
}

Result<bool> BatchLoader::MayGroup() {
  MR_RETURN_IF_ERROR(LoadTargetColumns());
  return !by_key_ || !SignedRows();
}

Result<bool> BatchLoader::GroupsJson() {
  if (!group_from_ || spec_.options.format != load::Format::kJson) return false;
  MR_RETURN_IF_ERROR(LoadTargetColumns());
  if (by_key_) return false;
  return KeepsEveryRecord();
}

bool BatchLoader::SignedRows() const {
  return std::any_of(targets_.begin(), targets_.end(),
                     [](const auto& t) { return table::IsDeleteSign(t.name); });
}

Result<FileLoad> BatchLoader::LoadFast(const std::string& key, const std::string& readable) {
  MR_ASSIGN_OR_RETURN(const bool no_record, HoldsNoRecord(spec_.options, key, readable));
  if (no_record) return FileLoad();
  if (Status s = LoadTargetColumns(); !s.ok()) return s.WithContext("file " + key);
  if (by_key_) {
    if (SignedRows()) return LoadCareful(key, readable);
    const FileGroup file{.keys = {key}, .readables = {readable}, .records = {}};
    auto loads = LoadByKey(file);
    if (!loads.ok()) return loads.status();
    return loads->front();
  }
  auto rows = InsertOver({readable});
  if (!rows.ok()) return load::DescribeReadError(rows.status(), key, {readable});
  FileLoad load;
  load.rows = *rows;
  return load;
}

bool BatchLoader::CanGroup(const LoadSpec& spec) {
  return GroupableFrom(spec).has_value();
}

Result<std::optional<int64_t>> BatchLoader::FooterRows(const std::string& readable) {
  MR_ASSIGN_OR_RETURN(auto rows, engine::QueryTextRows(*conn_,
                                                       "SELECT num_rows FROM "
                                                       "parquet_file_metadata(" +
                                                           engine::QuoteLiteral(readable) + ")"));
  if (rows.size() != 1 || rows[0].empty() || rows[0][0].empty()) {
    return std::optional<int64_t>();
  }
  return std::optional<int64_t>(std::stoll(rows[0][0]));
}

Result<bool> BatchLoader::JoinsGroup(const std::vector<std::optional<int64_t>>& records) {
  const bool counted = !records.empty() && std::all_of(records.begin(), records.end(),
                                                       [](const auto& r) { return r.has_value(); });
  if (!counted || by_key_ || !load::CsvJoinable(spec_.options)) return false;
  return KeepsEveryRecord();
}

Result<bool> BatchLoader::KeepsEveryRecord() {
  if (keeps_every_record_) return *keeps_every_record_;
  const SelectShape shape = ShapeOf(spec_);
  bool keeps = shape.one_to_one_from.has_value() && !shape.where;
  if (keeps) {
    // Nor may an aggregate fold records, or a set-returning function multiply them: DuckDB's
    // parser names the calls, its catalog says what they are.
    MR_ASSIGN_OR_RETURN(std::optional<engine::ParsedFacts> facts,
                        engine::ParseSelect(*conn_, WithReader("(SELECT 1)")));
    if (!facts) return Status::Internal("the job's SELECT does not parse as one");
    std::string names;
    for (const std::string& f : facts->functions) {
      if (f == "unnest" || f == "generate_series" || f == "range") keeps = false;
      names += (names.empty() ? "" : ", ") + engine::QuoteLiteral(f);
    }
    if (keeps && !names.empty()) {
      MR_ASSIGN_OR_RETURN(auto folding,
                          engine::QueryTextRows(*conn_,
                                                "SELECT count(*) FROM duckdb_functions() WHERE "
                                                "function_name IN (" +
                                                    names +
                                                    ") AND function_type NOT IN ('scalar', "
                                                    "'macro')"));
      keeps = !folding.empty() && folding[0][0] == "0";
    }
  }
  keeps_every_record_ = keeps;
  return keeps;
}

Result<std::vector<FileLoad>> BatchLoader::LoadGroupFast(
    const std::vector<std::string>& readables, const std::vector<std::optional<int64_t>>& records,
    const std::string& join_to, const std::vector<const std::string*>& contents) {
  if (!group_from_)
    return Status::FailedPrecondition("the job's SELECT cannot load files in groups");
  MR_RETURN_IF_ERROR(LoadTargetColumns());
  const FileGroup group{.keys = {}, .readables = readables, .records = records};
  if (by_key_) {
    if (SignedRows())
      return Status::FailedPrecondition("rows with a delete sign load one file at a time");
    return LoadByKey(group);
  }
  if (spec_.options.format == load::Format::kJson) {
    // Columns read by name, as each file alone would be read (none detected: DuckDB would
    // detect them over the whole group).
    MR_ASSIGN_OR_RETURN(const std::string* columns, FastJsonColumns(readables.front()));
    if (columns->empty()) {
      return Status::FailedPrecondition("json files without flat columns load one at a time");
    }
  }
  MR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> joined, JoinedRecords(group, join_to));
  if (joined) {
    MR_RETURN_IF_ERROR(
        load::JoinCsvFiles(readables, spec_.options.csv.line_delimiter, join_to, contents));
    MR_ASSIGN_OR_RETURN(const int64_t rows, InsertOver({join_to}));
    const int64_t records_read = std::accumulate(joined->begin(), joined->end(), int64_t{0});
    if (records_read != rows) {
      return Status::FailedPrecondition("the " + std::to_string(readables.size()) +
                                        " files read as one hold " + std::to_string(records_read) +
                                        " records and " + std::to_string(rows) +
                                        " rows were read from them");
    }
    return Loads(*joined, rows);
  }
  MR_ASSIGN_OR_RETURN(const int64_t rows, InsertOver(readables));
  MR_ASSIGN_OR_RETURN(auto by_file, RecordsAddingUpTo(group, rows));
  if (!by_file && spec_.options.format == load::Format::kJson) {
    // No file column for JSON (reader_sql.h): the caller loads the files one by one.
    return Status::FailedPrecondition("the json group's records do not add up to its rows");
  }
  if (!by_file) {
    MR_ASSIGN_OR_RETURN(by_file, CountByFile(readables));
  }
  return Loads(*by_file, rows);
}

Result<std::vector<FileLoad>> BatchLoader::Loads(const std::vector<int64_t>& rows_by_file,
                                                 int64_t total) {
  std::vector<FileLoad> loads(rows_by_file.size());
  int64_t sum = 0;
  for (size_t i = 0; i < rows_by_file.size(); ++i) {
    loads[i].rows = rows_by_file[i];
    sum += rows_by_file[i];
  }
  if (sum != total) {
    return Status::Aborted("the job's SELECT does not map a file's rows one to one (" +
                           std::to_string(total) + " rows read, " + std::to_string(sum) +
                           " counted by file)");
  }
  return loads;
}

Result<std::optional<std::vector<int64_t>>> BatchLoader::JoinedRecords(const FileGroup& group,
                                                                       const std::string& join_to) {
  using Counts = std::optional<std::vector<int64_t>>;
  if (join_to.empty()) return Counts();
  MR_ASSIGN_OR_RETURN(const bool joins, JoinsGroup(group.records));
  return joins ? AllCounted(group) : Counts();
}

std::optional<std::vector<int64_t>> BatchLoader::AllCounted(const FileGroup& group) {
  if (group.records.size() != group.readables.size()) return std::nullopt;
  std::vector<int64_t> records;
  for (const std::optional<int64_t>& r : group.records) {
    if (!r) return std::nullopt;
    records.push_back(*r);
  }
  return records;
}

Result<std::optional<std::vector<int64_t>>> BatchLoader::RecordsAddingUpTo(const FileGroup& group,
                                                                           int64_t total) {
  using Counts = std::optional<std::vector<int64_t>>;
  Counts records = AllCounted(group);
  if (!records || std::accumulate(records->begin(), records->end(), int64_t{0}) != total) {
    return Counts();
  }
  MR_ASSIGN_OR_RETURN(const bool keeps, KeepsEveryRecord());
  return keeps ? records : Counts();
}

Result<std::vector<int64_t>> BatchLoader::CountByFile(const std::vector<std::string>& readables) {
  // The job's SELECT list with the file column added, over the reader with that column. An
  // aggregate in the list fails to bind (the caller then loads file by file); a set-returning
  // function's rows count for the file they came from.
  constexpr const char* kFileColumn = "__millrace_file";
  const job::InsertAnalysis& a = spec_.analysis;
  const size_t from = *group_from_;
  MR_ASSIGN_OR_RETURN(std::string reader, load::BuildReadSql(spec_.options, readables, *conn_,
                                                             {.file_column = kFileColumn}));
  std::string rest = spec_.insert_sql.substr(a.call_end);
  while (!rest.empty() &&
         (std::isspace(static_cast<unsigned char>(rest.back())) || rest.back() == ';')) {
    rest.pop_back();
  }
  const std::string& sql = spec_.insert_sql;
  const std::string by_file = sql.substr(a.select_begin, from - a.select_begin) + ", " +
                              kFileColumn + " AS __millrace_counted_file " +
                              sql.substr(from, a.call_begin - from) + reader + rest;
  // The newline ends a trailing -- comment of the job's statement.
  MR_ASSIGN_OR_RETURN(auto counted, engine::QueryTextRows(
                                        *conn_, "SELECT __millrace_counted_file, count(*) FROM (" +
                                                    by_file + "\n) GROUP BY 1"));
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < readables.size(); ++i)
    index[readables[i]] = i;
  std::vector<int64_t> rows(readables.size(), 0);
  for (const auto& row : counted) {
    auto it = row.size() == 2 ? index.find(row[0]) : index.end();
    if (it == index.end()) return Status::Internal("a row of the group came from no file of it");
    rows[it->second] = std::stoll(row[1]);
  }
  return rows;
}

Status BatchLoader::LoadTargetColumns() {
  if (!targets_.empty()) return Status::Ok();
  MR_RETURN_IF_ERROR(LoadModel());
  MR_ASSIGN_OR_RETURN(auto described,
                      engine::QueryTextRows(*conn_, "DESCRIBE " + spec_.analysis.target_table));
  std::vector<TargetColumn> all;
  for (const auto& row : described) {
    if (row.size() < 3) return Status::Internal("unexpected DESCRIBE output");
    all.push_back(TargetColumn{row[0], row[1], row[2] == "NO"});
  }
  if (spec_.analysis.columns.empty()) {
    targets_ = std::move(all);
    return Status::Ok();
  }
  for (const std::string& wanted : spec_.analysis.columns) {
    // Doris's delete sign is no column of the table: model_write.h reads it.
    if (table::IsDeleteSign(wanted) && by_key_) {
      targets_.push_back(TargetColumn{wanted, "INTEGER", false});
      continue;
    }
    auto it = std::find_if(all.begin(), all.end(),
                           [&](const TargetColumn& c) { return EqualsIgnoreCase(c.name, wanted); });
    if (it == all.end()) {
      return Status::InvalidArgument("table " + spec_.analysis.target_table + " has no column " +
                                     wanted);
    }
    targets_.push_back(*it);
  }
  return Status::Ok();
}

Status BatchLoader::LoadModel() {
  // A sink that defines its table's model (an external table) says it.
  if (std::optional<table::TableDef> def = txn_ != nullptr ? txn_->TargetModel() : std::nullopt) {
    if (def->model != table::TableModel::kDuplicate) by_key_ = std::move(def);
    return Status::Ok();
  }
  // The table as DuckDB resolves the INSERT's name (the task's database first).
  MR_ASSIGN_OR_RETURN(
      engine::PlanFacts plan,
      engine::PlanStatement(*conn_, "SELECT * FROM " + spec_.analysis.target_table));
  if (plan.scans.size() != 1) return Status::Ok();  // a view: DuckDB refuses the INSERT itself
  MR_ASSIGN_OR_RETURN(std::optional<table::TableDef> def,
                      table::LoadModel(*conn_, plan.scans[0].schema, plan.scans[0].name));
  if (def && def->model != table::TableModel::kDuplicate) by_key_ = std::move(def);
  if (by_key_ && spec_.with_other_tasks) {
    return job::JobError(
        job::JobErrorCode::kCannotResume,
        Status::FailedPrecondition(
            "table " + spec_.analysis.target_table + " is a " +
            std::string(table::ModelName(by_key_->model)) +
            " KEY table now, whose rows depend on the order of the commits: the job's tasks "
            "cannot run at once (ALTER JOB ... PROPERTIES (\"max_concurrent_tasks\" = \"1\"))"));
  }
  return Status::Ok();
}

std::string BatchLoader::TargetList() const {
  std::string columns;
  for (const TargetColumn& t : targets_)
    columns += (columns.empty() ? "" : ", ") + QuoteIdentifier(t.name);
  return columns;
}

std::vector<std::string> BatchLoader::TargetNames() const {
  std::vector<std::string> names;
  for (const TargetColumn& t : targets_)
    names.push_back(t.name);
  return names;
}

Result<std::vector<int64_t>> BatchLoader::RowsByFile(const FileGroup& group, int64_t total) {
  MR_ASSIGN_OR_RETURN(auto records, RecordsAddingUpTo(group, total));
  if (records) return *std::move(records);
  return CountByFile(group.readables);
}

Status BatchLoader::CheckWidth(const std::string& select) {
  // A SELECT of another width than the INSERT's columns is refused first, as an INSERT of it
  // would be (naming its columns as the INSERT's would otherwise drop or miss one in silence).
  MR_ASSIGN_OR_RETURN(auto shape, conn_->Query("SELECT * FROM (" + select + "\n) LIMIT 0"));
  if (shape->column_count() != targets_.size()) {
    return Status::InvalidArgument(
        "the job's SELECT returns " + std::to_string(shape->column_count()) +
        " columns, the INSERT expects " + std::to_string(targets_.size()));
  }
  return Status::Ok();
}

std::string BatchLoader::TypedSelect(const std::string& select, bool numbered) const {
  // Each value in its column's type before it is folded (an INSERT would cast it the same way;
  // a value that does not convert fails the statement, and the task loads carefully).
  std::string typed;
  for (const TargetColumn& t : targets_) {
    typed += (typed.empty() ? "" : ", ") + std::string("CAST(") + QuoteIdentifier(t.name) + " AS " +
             t.type + ") AS " + QuoteIdentifier(t.name);
  }
  if (numbered) typed += std::string(", row_number() OVER () AS ") + kRowColumn;
  return "SELECT " + typed + " FROM (" + select + "\n) AS __millrace_src(" + TargetList() + ")";
}

Status BatchLoader::DescribeGroupError(const Status& error, const FileGroup& group) {
  // A group's error does not say which file is bad: the caller loads its files one by one.
  if (group.keys.size() != 1) return error;
  return load::DescribeReadError(error, group.keys[0], group.readables);
}

Result<FileLoad> BatchLoader::LoadCareful(const std::string& key, const std::string& readable) {
  MR_ASSIGN_OR_RETURN(const bool no_record, HoldsNoRecord(spec_.options, key, readable));
  if (no_record) return FileLoad();
  auto with_file = [&](const Status& s) { return load::DescribeReadError(s, key, {readable}); };
  if (Status s = LoadTargetColumns(); !s.ok()) return with_file(s);
  auto select = SelectOver({readable}, /*fast=*/false);
  if (!select.ok()) return with_file(select.status());
  // Record numbers follow the reader's order (see the header on row order).
  Status staged = conn_->Execute(std::string("CREATE OR REPLACE TEMP TABLE ") + kStage +
                                 " AS SELECT row_number() OVER () AS __millrace_row, * FROM (" +
                                 *select + ") AS __millrace_src");
  if (!staged.ok()) return with_file(staged);
  MR_ASSIGN_OR_RETURN(
      auto stage_columns,
      engine::QueryTextRows(*conn_,
                            std::string("SELECT column_name FROM (DESCRIBE ") + kStage + ")"));
  if (stage_columns.size() != targets_.size() + 1) {
    return with_file(Status::InvalidArgument(
        "the job's SELECT returns " + std::to_string(stage_columns.size() - 1) +
        " columns, the INSERT expects " + std::to_string(targets_.size())));
  }

  // Per column: its converted value, and the condition that filters the row.
  std::string converted;
  std::string bad_any;
  std::string which_column = "CASE";
  std::string bad_value = "CASE";
  std::string reason = "CASE";
  for (size_t i = 0; i < targets_.size(); ++i) {
    const std::string src = QuoteIdentifier(stage_columns[i + 1][0]);
    const TargetColumn& t = targets_[i];
    const std::string cast = "TRY_CAST(" + src + " AS " + t.type + ")";
    std::string bad;
    std::string why;
    if (spec_.strict) {
      bad = "(" + src + " IS NOT NULL AND " + cast + " IS NULL)";
      why = "value cannot be converted to " + t.type;
      if (t.not_null) bad = "(" + bad + " OR " + src + " IS NULL)";
    } else {
      bad = t.not_null ? "(" + cast + " IS NULL)" : "false";
      why = "value is NULL or cannot be converted for NOT NULL column of type " + t.type;
    }
    if (i > 0) {
      converted += ", ";
      bad_any += " OR ";
    }
    converted += cast;
    bad_any += bad;
    which_column += " WHEN " + bad + " THEN " + QuoteLiteral(t.name);
    bad_value += " WHEN " + bad + " THEN CAST(" + src + " AS VARCHAR)";
    reason +=
        " WHEN " + bad + " THEN " +
        (t.not_null ? "CASE WHEN " + src + " IS NULL THEN 'NULL value for NOT NULL column' ELSE " +
                          QuoteLiteral(why) + " END"
                    : QuoteLiteral(why));
  }
  which_column += " END";
  bad_value += " END";
  reason += " END";

  std::string columns;
  std::vector<std::string> names;
  for (size_t i = 0; i < targets_.size(); ++i) {
    if (i > 0) columns += ", ";
    columns += QuoteIdentifier(targets_[i].name);
    names.push_back(targets_[i].name);
  }
  FileLoad load;
  if (by_key_) {
    // Reduced per key, newest record last, and merged into the table's rows (model_write.h).
    std::string named;
    for (size_t i = 0; i < targets_.size(); ++i) {
      named += "TRY_CAST(" + QuoteIdentifier(stage_columns[i + 1][0]) + " AS " + targets_[i].type +
               ") AS " + QuoteIdentifier(targets_[i].name) + ", ";
    }
    MR_ASSIGN_OR_RETURN(std::vector<std::string> writes,
                        table::ModelWriteSql(*by_key_, spec_.analysis.target_table, names,
                                             "SELECT " + named + "__millrace_row FROM " + kStage +
                                                 " WHERE NOT (" + bad_any + ")",
                                             "__millrace_row"));
    for (const std::string& write : writes) {
      if (Status written = conn_->Execute(write); !written.ok()) return with_file(written);
    }
    MR_ASSIGN_OR_RETURN(
        auto good, engine::QueryTextRows(*conn_, std::string("SELECT count(*) FROM ") + kStage +
                                                     " WHERE NOT (" + bad_any + ")"));
    load.rows = good.empty() ? 0 : std::stoll(good[0][0]);
  } else {
    auto inserted =
        conn_->Query("INSERT INTO " + spec_.analysis.target_table + " (" + columns + ") SELECT " +
                     converted + " FROM " + kStage + " WHERE NOT (" + bad_any + ")");
    if (!inserted.ok()) return with_file(inserted.status());
    load.rows = (*inserted)->rows_changed();
    inserted->reset();
  }

  MR_ASSIGN_OR_RETURN(auto counted,
                      engine::QueryTextRows(*conn_, std::string("SELECT count(*) FROM ") + kStage +
                                                        " WHERE " + bad_any));
  load.filtered = counted.empty() ? 0 : std::stoll(counted[0][0]);
  if (load.filtered > 0) {
    const int64_t offset = LinesBeforeData(spec_.options);
    const std::string details =
        "SELECT __millrace_row + " + std::to_string(offset) + " AS line, " + which_column +
        " AS col, " + bad_value + " AS val, " + reason + " AS why FROM " + kStage + " WHERE " +
        bad_any + " ORDER BY __millrace_row LIMIT " + std::to_string(kFilteredRowsKeptPerFile);
    if (txn_ == nullptr) {
      return with_file(Status::Internal("a loader without a sink transaction filtered rows"));
    }
    Status recorded =
        txn_->RecordFilteredRows(spec_.job_id, spec_.task_id, key, spec_.now_us, details);
    if (!recorded.ok()) return with_file(recorded);
    MR_ASSIGN_OR_RETURN(auto first,
                        engine::QueryTextRows(*conn_, "SELECT * FROM (" + details + ") LIMIT 1"));
    if (!first.empty()) {
      load.first_error = "file " + key + " line " + first[0][0] + " column " + first[0][1] + ": " +
                         first[0][3] + " (value '" + first[0][2] + "')";
    }
  }
  if (Status s = conn_->Execute(std::string("DROP TABLE ") + kStage); !s.ok()) return with_file(s);
  return load;
}

}  // namespace millrace::files
