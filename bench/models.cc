// Table models: the CSV event files loaded by a streaming job into a Doris UNIQUE KEY table and
// an AGGREGATE KEY table, against the same files loaded into a DUPLICATE KEY table (a plain
// load) in the same run: what keeping rows by key costs over a plain load. The UNIQUE load
// against DuckDB's own upsert of the same files (INSERT OR REPLACE into a table with the
// primary key), and the AGGREGATE load against DuckDB's own fold (INSERT ... ON CONFLICT DO
// UPDATE SET amount = amount + EXCLUDED.amount): the ceilings of each in DuckDB. And files
// where every tenth row repeats an earlier id (in the same file or one before), loaded into a
// UNIQUE table against a DUPLICATE one: what reducing per key costs. The jobs read the files
// where DuckDB reads them, from local disk (local()): the transfer from an object store is
// the throughput scenario's figure, and on two cores s3rver's share of the CPU would be
// charged to the model.
#include <algorithm>
#include <filesystem>

#include "scenario_util.h"

namespace millrace::bench {
namespace {

// The event columns as Doris writes them, with each model's key clause.
constexpr char kDorisColumns[] =
    "(`id` BIGINT, `ts` DATETIME, `user_id` INT, `kind` STRING, `amount` DOUBLE, `url` "
    "STRING, `note` STRING)";
constexpr char kAggregateColumns[] =
    "(`id` BIGINT, `ts` DATETIME REPLACE, `user_id` INT REPLACE, `kind` STRING REPLACE, "
    "`amount` DOUBLE SUM, `url` STRING REPLACE, `note` STRING REPLACE_IF_NOT_NULL)";
// kAggregateColumns's functions as DuckDB's own fold of a row into the stored one.
constexpr char kDuckDbFold[] =
    " ON CONFLICT (id) DO UPDATE SET ts = EXCLUDED.ts, user_id = EXCLUDED.user_id, kind = "
    "EXCLUDED.kind, amount = amount + EXCLUDED.amount, url = EXCLUDED.url, note = "
    "COALESCE(EXCLUDED.note, note)";

struct Model {
  std::string name;
  std::string columns;
  std::vector<double> rows_per_s;
};

// The directory of `set`'s files, which the server reads as a --local-root.
std::string DirOf(const DataSet& set) {
  return std::filesystem::path(set.files.front().path).parent_path().string();
}

// Loads `set`'s files with a local job into a fresh table of `model`, recording its rows/s (of
// the files' rows).
Status LoadModel(BenchServer& server, const DataSet& set, const std::string& name, Model& model) {
  const FormatInfo& csv = Info(DataFormat::kCsv);
  const JobSpec spec{.name = name,
                     .table = "bench." + name,
                     .format = csv.doris_format,
                     .local_path = DirOf(set) + "/*" + csv.extension,
                     .reader = csv.doris_params};
  const bool keyed = model.name != "duplicate";
  MR_ASSIGN_OR_RETURN(double seconds, LoadWithJob(server, spec, model.columns,
                                                  keyed ? set.distinct_ids : set.total_rows,
                                                  std::chrono::seconds(1800)));
  model.rows_per_s.push_back(static_cast<double>(set.total_rows) / seconds);
  return Status::Ok();
}

std::string Note(const DataSet& set, const std::string& ids) {
  return std::to_string(set.files.size()) + " CSV files, " + HumanBytes(set.total_bytes) + ", " +
         std::to_string(set.total_rows) + " rows, " + ids + "; local jobs (local()) reading the " +
         "files from the disk DuckDB's own loads read them from";
}

}  // namespace

Result<std::vector<Figure>> RunModels(BenchContext& ctx) {
  MR_ASSIGN_OR_RETURN(const DataSet* set, ctx.Events(DataFormat::kCsv));
  // The repeated ids on a quarter of the files (at least one): the figure is a ratio.
  MR_ASSIGN_OR_RETURN(
      const DataSet repeated,
      GenerateDataSet(*ctx.generator, DataFormat::kCsv, std::max(1, ctx.config.tp_files / 4),
                      ctx.config.tp_file_bytes, ctx.config.seed, ctx.Subdir("models-repeated"),
                      EventIds::kTenthRepeated));
  MR_ASSIGN_OR_RETURN(auto server, StartBenchServer(ctx, "models-server",
                                                    {"--local-root", DirOf(*set), "--local-root",
                                                     DirOf(repeated)}));

  std::vector<Model> models = {
      {.name = "duplicate", .columns = std::string(kDorisColumns) + " DUPLICATE KEY(`id`)"},
      {.name = "unique", .columns = std::string(kDorisColumns) + " UNIQUE KEY(`id`)"},
      {.name = "aggregate", .columns = std::string(kAggregateColumns) + " AGGREGATE KEY(`id`)"}};
  std::vector<Model> repeated_models = {models[0], models[1]};
  const std::string baseline_dir = ctx.Subdir("models-baseline");
  std::string keyed = kEventsColumns;
  keyed.insert(keyed.size() - 1, ", PRIMARY KEY (id)");
  std::vector<double> duckdb_upsert_rows_per_s, duckdb_fold_rows_per_s;
  for (int run = 1; run <= ctx.config.runs; ++run) {
    MR_ASSIGN_OR_RETURN(
        Measured upsert,
        DuckDbLoad(*set, baseline_dir, {.columns = keyed, .insert = "INSERT OR REPLACE INTO"}));
    duckdb_upsert_rows_per_s.push_back(static_cast<double>(set->total_rows) / upsert.seconds);
    MR_ASSIGN_OR_RETURN(Measured fold, DuckDbLoad(*set, baseline_dir,
                                                  {.columns = keyed, .on_conflict = kDuckDbFold}));
    duckdb_fold_rows_per_s.push_back(static_cast<double>(set->total_rows) / fold.seconds);
    for (Model& model : models) {
      MR_RETURN_IF_ERROR(
          LoadModel(*server, *set, "model_" + model.name + "_" + std::to_string(run), model));
    }
    for (Model& model : repeated_models) {
      MR_RETURN_IF_ERROR(LoadModel(*server, repeated,
                                   "repeated_" + model.name + "_" + std::to_string(run), model));
    }
  }
  const std::string note = Note(*set, "every key once");
  // Issue 39's: a keyed load at 0.8 of DuckDB's own upsert or fold of the same files.
  const Target kIssueTarget = Target::RatioAtLeast(0.8);
  const std::string duplicate = "the same files into a DUPLICATE KEY table";
  std::vector<Figure> figures;
  for (size_t i = 1; i < models.size(); ++i) {
    figures.push_back({.name = models[i].name + " key load",
                       .unit = "rows/s",
                       .value = Summarize(models[i].rows_per_s),
                       .baseline = Summarize(models[0].rows_per_s),
                       .baseline_what = duplicate,
                       .note = note});
  }
  figures.push_back({.name = "unique key load, against DuckDB's upsert",
                     .unit = "rows/s",
                     .value = Summarize(models[1].rows_per_s),
                     .baseline = Summarize(duckdb_upsert_rows_per_s),
                     .baseline_what = "DuckDB's INSERT OR REPLACE of the same files from local "
                                      "disk into a table with the primary key",
                     .target = kIssueTarget,
                     .note = note});
  figures.push_back({.name = "aggregate key load, against DuckDB's fold",
                     .unit = "rows/s",
                     .value = Summarize(models[2].rows_per_s),
                     .baseline = Summarize(duckdb_fold_rows_per_s),
                     .baseline_what = "DuckDB's INSERT ... ON CONFLICT DO UPDATE SET amount = "
                                      "amount + EXCLUDED.amount (the others replaced) of the same "
                                      "files from local disk",
                     .target = kIssueTarget,
                     .note = note});
  figures.push_back({.name = "unique key load, 10% of rows repeat a key",
                     .unit = "rows/s",
                     .value = Summarize(repeated_models[1].rows_per_s),
                     .baseline = Summarize(repeated_models[0].rows_per_s),
                     .baseline_what = duplicate,
                     .note = Note(repeated, "every tenth row repeats an earlier key")});
  return figures;
}

}  // namespace millrace::bench
