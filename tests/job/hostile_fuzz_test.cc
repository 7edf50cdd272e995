// Fuzzed files through jobs: random mutations (bytes flipped, inserted, deleted, duplicated,
// the file cut short) of valid CSV, JSON and Parquet files, loaded by one job per kind
// (on_error = skip_file). The server (here, this process) must survive every file, and every
// file that loads must be whole: its rows loaded + rows filtered equal the records it holds,
// counted independently of DuckDB's readers (CSV and JSON: load/record_count.h; Parquet: its
// footer).
//
// MILLRACE_FUZZ_FILES (default 40 per kind, a few seconds) and MILLRACE_FUZZ_SEED size and seed
// a run; `make chaos` runs a long one. Batches are kept small: each bad file costs its batch a
// load round (file_load_rounds.h), so a batch of mostly bad files costs rounds x files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <random>

#include "job/job_test_util.h"
#include "load/json_nesting.h"
#include "load/record_count.h"

namespace millrace::job {
namespace {

using Rows = std::vector<std::vector<std::string>>;

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoi(value) : fallback;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// One random mutation of `seed`'s bytes, or a few of them.
std::string Mutate(std::string data, std::mt19937& rng) {
  static const std::string kTokens[] = {
      "\"",   ",",  "\n",   "\r\n",  "{",    "}",   "[", "]", ":", std::string(1, '\0'),
      "\xff", "\\", "null", "1e999", "\"\"", "PAR1"};
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !data.empty(); ++e) {
    const size_t at = rng() % data.size();
    switch (rng() % 6) {
      case 0:  // flip a byte
        data[at] = static_cast<char>(rng() % 256);
        break;
      case 1:  // insert a token that means something to some reader
        data.insert(at, kTokens[rng() % std::size(kTokens)]);
        break;
      case 2:  // delete a range
        data.erase(at, 1 + rng() % 16);
        break;
      case 3: {  // duplicate a range
        const std::string range = data.substr(at, 1 + rng() % 64);
        data.insert(at, range);
        break;
      }
      case 4:  // cut the file short
        data.resize(at);
        break;
      default:  // a long run of one byte
        data.insert(at, std::string(1 + rng() % 4096, kTokens[rng() % 4][0]));
        break;
    }
  }
  return data;
}

struct Kind {
  std::string name;    // the job's name and the files' directory
  std::string format;  // csv, json or parquet
  std::string suffix;
  std::string reader_params;  // more parameters of local()
  std::string select;
};

class HostileFuzzTest : public LocalJobTest {
 protected:
  // A valid file of `kind` with 20 rows.
  std::string Seed(const Kind& kind) {
    if (kind.format == "parquet") {
      const std::string path = dir_.Join("seed.parquet");
      EXPECT_TRUE(harness_.conn()
                      .Execute("COPY (SELECT i AS id, 'name ' || i AS name FROM range(20) r(i)) "
                               "TO " +
                               engine::QuoteLiteral(path) + " (FORMAT parquet)")
                      .ok());
      return ReadAll(path);
    }
    std::string out;
    for (int i = 0; i < 20; ++i) {
      if (kind.format == "json") {
        out +=
            "{\"id\": " + std::to_string(i) + ", \"name\": \"n,\\\"" + std::to_string(i) + "\"}\n";
      } else {
        out += std::to_string(i) + ",\"a, " + std::to_string(i) + "\"\n";
      }
    }
    return out;
  }

  // The records `path` holds, counted without DuckDB's readers; nullopt when they cannot be.
  std::optional<int64_t> Records(const Kind& kind, const std::string& path) {
    if (kind.format == "parquet") {
      auto rows =
          engine::QueryTextRows(harness_.conn(), "SELECT num_rows FROM parquet_file_metadata(" +
                                                     engine::QuoteLiteral(path) + ")");
      if (!rows.ok() || rows->size() != 1) return std::nullopt;
      return std::stoll((*rows)[0][0]);
    }
    auto options = load::ParseFileFunctionArgs(
        load::SourceKind::kLocal,
        {{"file_path", path}, {"format", kind.format}, {"column_separator", ","}});
    if (!options.ok()) return std::nullopt;
    if (!kind.reader_params.empty()) options->csv.enclose = "\"";
    if (kind.format == "json") {
      load::JsonCounts counts;
      if (!load::CheckJsonNesting(path, load::kMaxJsonDepth, &counts).ok()) return std::nullopt;
      return load::JsonRecords(counts, options->json);
    }
    auto counted = load::CountCsvRecords(path, options->csv,
                                         load::CsvHeaderLines(options->format, options->csv));
    return counted.ok() ? std::optional<int64_t>(*counted) : std::nullopt;
  }
};

TEST_F(HostileFuzzTest, MutatedFilesNeverStopTheServerAndEveryLoadedFileIsWhole) {
  const int files = EnvInt("MILLRACE_FUZZ_FILES", 40);
  const int seed = EnvInt("MILLRACE_FUZZ_SEED", 20261206);
  std::printf("fuzzing %d files of each kind, MILLRACE_FUZZ_SEED=%d\n", files, seed);
  std::mt19937 rng(static_cast<unsigned>(seed));
  const std::vector<Kind> kinds = {
      {"csv", "csv", ".csv", "", "SELECT c1, c2"},
      {"csvq", "csv", ".csv", ", \"enclose\" = '\"'", "SELECT c1, c2"},
      {"json", "json", ".json", "", "SELECT id, name"},
      {"parquet", "parquet", ".parquet", "", "SELECT id, name"},
  };
  for (const Kind& kind : kinds) {
    const std::string dir = in_ + "/" + kind.name;
    std::filesystem::create_directories(dir);
    const std::string seed = Seed(kind);
    for (int f = 0; f < files; ++f) {
      char name[32];
      std::snprintf(name, sizeof(name), "/f%05d", f);
      // Every fifth file is left whole: the job has good files among the bad.
      WriteFile(dir + name + kind.suffix, f % 5 == 0 ? seed : Mutate(seed, rng));
    }
  }
  harness_.Tick();
  for (const Kind& kind : kinds) {
    auto created = harness_.Run(
        "CREATE JOB " + kind.name +
        " ON STREAMING PROPERTIES (\"max_interval\" = \"1\", \"on_error\" = \"skip_file\", "
        "\"session.insert_max_filter_ratio\" = \"1\", \"s3.max_batch_files\" = \"20\") DO INSERT "
        "INTO t " +
        kind.select + " FROM local(\"file_path\" = \"" + in_ + "/" + kind.name +
        "/*\", \"format\" = \"" + kind.format + "\", \"column_separator\" = \",\"" +
        kind.reader_params + ")");
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  for (const Kind& kind : kinds) {
    SCOPED_TRACE(kind.name);
    const std::string ledger_sql = "SELECT FileName, State, Rows FROM job_files(\"job\" = \"" +
                                   kind.name + "\") ORDER BY FileName";
    ASSERT_TRUE(harness_.WaitFor(
        [&] { return harness_.QueryExpanded(ledger_sql).size() == static_cast<size_t>(files); },
        std::chrono::seconds(120) + files * std::chrono::milliseconds(50)))
        << harness_.JobColumn(kind.name, "ErrorMsg");
    EXPECT_EQ(harness_.JobColumn(kind.name, "Status"), "RUNNING");
    std::map<std::string, int64_t> filtered;
    for (const auto& row :
         harness_.Query("SELECT file, count(*) FROM __millrace.filtered_rows GROUP BY file")) {
      filtered[row[0]] = std::stoll(row[1]);
    }
    int loaded = 0;
    for (const auto& row : harness_.QueryExpanded(ledger_sql)) {
      if (row[1] != "LOADED") continue;
      ++loaded;
      const std::optional<int64_t> records = Records(kind, row[0]);
      if (!records) continue;
      EXPECT_EQ(std::stoll(row[2]) + filtered[row[0]], *records) << row[0];
    }
    // The unmutated files at least.
    EXPECT_GE(loaded, files / 5);
    std::printf("%s: %d of %d fuzzed files loaded whole, the rest quarantined\n", kind.name.c_str(),
                loaded, files);
  }
}

}  // namespace
}  // namespace millrace::job
