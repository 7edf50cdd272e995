// Benchmark data: deterministic (seeded) event files in CSV, Parquet and JSON lines, written by
// DuckDB in this process, and small CSV objects; uploads to s3rver.
//
// Contract
// - The same seed, sizes and DuckDB version give byte-identical files. Rows come from
//   range(): row i of the whole data set is a pure function of (i, seed).
// - GenerateDataSet sizes files to about `file_bytes` each by measuring a sample first; it
//   returns each file's path, size and row count.
// - Every function returns the first error, naming the file or key.
// - Thread-safety: GenerateDataSet uses the connection given (one thread); the upload helpers
//   run their own threads.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/database.h"
#include "testing/s3rver.h"

namespace millrace::bench {

enum class DataFormat { kCsv, kParquet, kJson };

struct FormatInfo {
  DataFormat format;
  std::string name;       // "CSV"
  std::string extension;  // ".csv"
  std::string doris_format;
  // More S3() parameters the job needs to read the files as written.
  std::vector<std::pair<std::string, std::string>> doris_params;
  // DuckDB's reader call over a list literal, for the baseline: "read_csv(%s, header=false)".
  std::string duckdb_reader;
  // COPY ... TO options that write the files.
  std::string copy_options;
};
const FormatInfo& Info(DataFormat format);

// The events table every throughput scenario loads into.
inline constexpr char kEventsColumns[] =
    "(id BIGINT, ts TIMESTAMP, user_id INTEGER, kind VARCHAR, amount DOUBLE, url VARCHAR, "
    "note VARCHAR)";

struct DataFile {
  std::string path;
  uint64_t bytes = 0;
  int64_t rows = 0;
};

struct DataSet {
  DataFormat format = DataFormat::kCsv;
  std::vector<DataFile> files;
  uint64_t total_bytes = 0;
  int64_t total_rows = 0;
  int64_t distinct_ids = 0;  // total_rows unless ids repeat
};

// How the rows' ids are drawn. kUnique: row i has id i. kTenthRepeated: every tenth row (i % 10
// = 9) repeats the id of an earlier row with i % 10 = 0, drawn from the seed over all of them,
// so a repeat lands in the same file or any file before it; 90% of the rows have ids of their
// own.
enum class EventIds { kUnique, kTenthRepeated };

Result<DataSet> GenerateDataSet(engine::Connection& conn, DataFormat format, int files,
                                uint64_t file_bytes, uint64_t seed, const std::string& dir,
                                EventIds ids = EventIds::kUnique);

// Puts each local file under the key given, `parallel` at a time, streaming from disk.
Status UploadFiles(testing::S3rver& s3, const std::string& bucket,
                   const std::vector<std::pair<std::string, std::string>>& path_and_key,
                   int parallel);

// A small CSV object "file_no,line_no,payload\n"... of min_bytes..max_bytes (drawn from the
// seed and file_no); `rows` receives its line count.
std::string SmallCsvObject(uint64_t seed, int64_t file_no, size_t min_bytes, size_t max_bytes,
                           int64_t* rows);
// The table small CSV objects load into.
inline constexpr char kSmallColumns[] = "(file_no BIGINT, line_no INTEGER, payload VARCHAR)";

// Keys "<prefix>/dNNN/fNNNNNNN.csv", 1000 to a directory level: s3rver walks its directories
// and skips those below start-after, so a listing after the last key stays cheap for it.
std::string SpreadKey(const std::string& prefix, int64_t n);

struct PutStats {
  int64_t rows = 0;
  uint64_t bytes = 0;
};
// Puts objects first..first+count-1 of SmallCsvObject under SpreadKey(prefix, n), `parallel`
// at a time, with `put(key, body)` (any store), or into s3rver's `bucket`.
using PutObjectFn = std::function<Status(const std::string& key, const std::string& body)>;
Result<PutStats> PutSmallObjects(const PutObjectFn& put, const std::string& prefix, int64_t first,
                                 int64_t count, uint64_t seed, size_t min_bytes, size_t max_bytes,
                                 int parallel);
Result<PutStats> PutSmallObjects(testing::S3rver& s3, const std::string& bucket,
                                 const std::string& prefix, int64_t first, int64_t count,
                                 uint64_t seed, size_t min_bytes, size_t max_bytes, int parallel);

}  // namespace millrace::bench
