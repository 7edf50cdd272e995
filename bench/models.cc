// Table models: the CSV event files loaded by a streaming job into a Doris UNIQUE KEY table and
// an AGGREGATE KEY table, against the same files loaded into a DUPLICATE KEY table (a plain
// load) in the same run: what keeping rows by key costs over a plain load. And the UNIQUE load
// against DuckDB's own upsert of the same files from local disk (INSERT OR REPLACE into a table
// with the primary key), the ceiling of an upsert in DuckDB.
#include <filesystem>

#include "scenario_util.h"

namespace millrace::bench {

Result<std::vector<Figure>> RunModels(BenchContext& ctx) {
  MR_ASSIGN_OR_RETURN(const DataSet* set, ctx.Events(DataFormat::kCsv));
  const FormatInfo& info = Info(DataFormat::kCsv);
  const std::string prefix = "models/csv";
  std::vector<std::pair<std::string, std::string>> uploads;
  for (const DataFile& f : set->files) {
    uploads.emplace_back(f.path, prefix + "/" + std::filesystem::path(f.path).filename().string());
  }
  MR_RETURN_IF_ERROR(UploadFiles(*ctx.s3, kBucket, uploads, 2));
  MR_ASSIGN_OR_RETURN(auto server, StartBenchServer(ctx, "models-server"));

  // The event columns as Doris writes them, with each model's key clause.
  const std::string doris_columns =
      "(`id` BIGINT, `ts` DATETIME, `user_id` INT, `kind` STRING, `amount` DOUBLE, `url` "
      "STRING, `note` STRING)";
  const std::string aggregate_columns =
      "(`id` BIGINT, `ts` DATETIME REPLACE, `user_id` INT REPLACE, `kind` STRING REPLACE, "
      "`amount` DOUBLE SUM, `url` STRING REPLACE, `note` STRING REPLACE_IF_NOT_NULL)";
  struct Model {
    std::string name;
    std::string columns;
    std::vector<double> rows_per_s;
  };
  std::vector<Model> models = {{"duplicate", doris_columns + " DUPLICATE KEY(`id`)", {}},
                               {"unique", doris_columns + " UNIQUE KEY(`id`)", {}},
                               {"aggregate", aggregate_columns + " AGGREGATE KEY(`id`)", {}}};
  const std::string baseline_dir = ctx.Subdir("models-baseline");
  std::vector<double> duckdb_upsert_rows_per_s;
  for (int run = 1; run <= ctx.config.runs; ++run) {
    std::string keyed = kEventsColumns;
    keyed.insert(keyed.size() - 1, ", PRIMARY KEY (id)");
    MR_ASSIGN_OR_RETURN(
        Measured upsert,
        DuckDbLoad(*set, baseline_dir, {.columns = keyed, .insert = "INSERT OR REPLACE INTO"}));
    duckdb_upsert_rows_per_s.push_back(static_cast<double>(set->total_rows) / upsert.seconds);
    for (Model& model : models) {
      const std::string name = "model_" + model.name + "_" + std::to_string(run);
      const JobSpec spec = FormatJobSpec(ctx, name, prefix, info);
      MR_ASSIGN_OR_RETURN(double seconds, LoadWithJob(*server, spec, model.columns, set->total_rows,
                                                      std::chrono::seconds(1800)));
      model.rows_per_s.push_back(static_cast<double>(set->total_rows) / seconds);
    }
  }
  const std::string note = std::to_string(set->files.size()) + " CSV files, " +
                           HumanBytes(set->total_bytes) + ", " + std::to_string(set->total_rows) +
                           " rows, every key once";
  std::vector<Figure> figures;
  for (size_t i = 1; i < models.size(); ++i) {
    figures.push_back({.name = models[i].name + " key load",
                       .unit = "rows/s",
                       .value = Summarize(models[i].rows_per_s),
                       .baseline = Summarize(models[0].rows_per_s),
                       .baseline_what = "the same files into a DUPLICATE KEY table",
                       .note = note});
  }
  figures.push_back({.name = "unique key load, against DuckDB's upsert",
                     .unit = "rows/s",
                     .value = Summarize(models[1].rows_per_s),
                     .baseline = Summarize(duckdb_upsert_rows_per_s),
                     .baseline_what = "DuckDB's INSERT OR REPLACE of the same files from local "
                                      "disk into a table with the primary key",
                     .note = note});
  return figures;
}

}  // namespace millrace::bench
