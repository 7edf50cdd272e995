// The hostile corpus: every kind of bad file a watched directory can hold, each between two good
// files, loaded by a job of its own (on_error = skip_file), all at once in one server. The
// server stays up through all of them; the good files around each load exactly once; each bad
// file ends as the table says (rows loaded, or quarantined with a reason that names what is
// wrong, and the line for text formats). Small files are in tests/data/hostile/; large ones are
// made here, since a 3 MiB line or a bomb does not belong in the repository.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <map>

#include "job/job_test_util.h"
#include "testing/compress.h"
#include "testing/test_paths.h"

namespace millrace::job {
namespace {

using Rows = std::vector<std::vector<std::string>>;

const std::string kHostile = testing::SourcePath("tests/data/hostile/");

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A file's content: made here, or read from the corpus directory.
using Maker = std::function<std::string()>;

Maker Corpus(const std::string& name) {
  return [name] { return ReadAll(kHostile + name); };
}

// Lines "<id>,<name>" for ids from..to.
std::string CsvLines(int from, int to, const std::string& name = "n") {
  std::string out;
  for (int id = from; id <= to; ++id)
    out += std::to_string(id) + "," + name + "\n";
  return out;
}

std::string Gzip(const std::string& in) {
  return testing::Compress(load::Compression::kGzip, in);
}

struct HostileCase {
  std::string name;    // the bad file's name (the job's name is derived from it)
  std::string format;  // csv, csv_with_names, json or parquet
  Maker make;          // its content; null for a filesystem oddity made by `special`
  // The outcome: "LOADED" with `rows`, or "QUARANTINED" with an error holding `error`.
  std::string state;
  int64_t rows = 0;
  std::string error;
  // Filesystem oddities (a FIFO): makes the entry at the path given, instead of `make`.
  std::function<void(const std::string&)> special;
  std::string reader_params;  // more parameters of local(), ", \"k\" = \"v\""
};

std::vector<HostileCase> Cases() {
  const std::string three_mib(3 << 20, 'x');
  return {
      // CSV
      {"long_first.csv", "csv", [=] { return "1," + three_mib + "\n" + CsvLines(2, 3); },
       "QUARANTINED", 0, "CSV Error on Line: 1\nOriginal Line: 1,xxx"},
      {"long_middle.csv", "csv",
       [=] { return CsvLines(1, 2) + "3," + three_mib + "\n" + CsvLines(4, 5); }, "QUARANTINED", 0,
       "CSV Error on Line: 3\nOriginal Line: 3,xxx"},
      {"long_last.csv", "csv", [=] { return CsvLines(1, 2) + "3," + three_mib + "\n"; },
       "QUARANTINED", 0, "the last line of the file is longer than 2097152 bytes"},
      {"columns_50000.csv", "csv",
       [] {
         std::string line = "1,a";
         for (int i = 2; i < 50000; ++i)
           line += ",x";
         return line + "\n";
       },
       "LOADED", 1, ""},  // the job's SELECT takes c1 and c2
      {"invalid_utf8.csv", "csv", Corpus("invalid_utf8.csv"), "QUARANTINED", 0,
       "CSV Error on Line: 2\nOriginal Line: 2,???\nInvalid unicode (byte sequence mismatch) "
       "detected. This file is not utf-8 encoded."},
      {"nul_bytes.csv", "csv", Corpus("nul_bytes.csv"), "LOADED", 2, ""},
      {"only_newlines.csv", "csv", [] { return std::string("\n\n\n\n"); }, "LOADED", 0, ""},
      {"header_only.csv", "csv_with_names", Corpus("header_only.csv"), "LOADED", 0, ""},
      {"crlf.csv", "csv", Corpus("crlf.csv"), "LOADED", 3, ""},
      // Lone \r line ends under the default "\n" delimiter: grouped with its neighbours it is
      // first read joined to them (load/csv_join.h), then alone, where DuckDB refuses it; the
      // neighbours load once.
      {"lone_cr.csv", "csv", [] { return std::string("5,a\r6,b\r7,c\r"); }, "QUARANTINED", 0,
       "Expected Number of Columns"},
      // Without "enclose" a quote is a character like another (as in Doris).
      {"unterminated_quote.csv", "csv", Corpus("unterminated_quote.csv"), "LOADED", 3, ""},
      {"unterminated_quote_enclosed.csv", "csv", Corpus("unterminated_quote.csv"), "QUARANTINED", 0,
       "unterminated quote", nullptr, ", \"enclose\" = '\"'"},
      {"empty.csv", "csv", [] { return std::string(); }, "LOADED", 0, ""},
      // JSON
      {"deep.json", "json", [] { return std::string(100000, '['); }, "QUARANTINED", 0,
       "JSON nested deeper than 1000 levels at line 1"},
      {"huge_string.json", "json",
       [] { return "{\"id\": 1, \"name\": \"" + std::string(20 << 20, 's') + "\"}\n"; }, "LOADED",
       1, ""},
      {"truncated_array.json", "json", Corpus("truncated_array.json"), "QUARANTINED", 0,
       "the value that starts at line 1 is not closed by the end of the file, line 4"},
      {"bad_line.json", "json", Corpus("bad_line.json"), "QUARANTINED", 0,
       "the value that starts at line 2 is not closed by the end of the file, line 3"},
      // Parquet (made from a good one by the fixture: see ParquetOf)
      // Compressed
      {"bomb.csv.gz", "csv", [] { return Gzip(std::string(300 << 20, '\n')); }, "QUARANTINED", 0,
       "expands past"},
      {"truncated.csv.gz", "csv",
       [] {
         const std::string gz = Gzip(CsvLines(1, 1000));
         return gz.substr(0, gz.size() / 2);
       },
       "QUARANTINED", 0,
       "not a valid gz stream: truncated (the stream ends before its end marker)"},
      {"not_compressed.csv.gz", "csv", [] { return CsvLines(1, 2); }, "QUARANTINED", 0,
       "the file does not start as a gz stream (is it compressed at all?"},
      {"trailing_garbage.csv.gz", "csv", [] { return Gzip(CsvLines(1, 2)) + "garbage!"; },
       "QUARANTINED", 0,
       "bytes after the end of the gz stream are not another gz stream (trailing garbage)"},
      {"multi_member.csv.gz", "csv", [] { return Gzip(CsvLines(1, 2)) + Gzip(CsvLines(3, 4)); },
       "LOADED", 4, ""},
      // Filesystem oddities
      {"fifo.csv", "csv", nullptr, "QUARANTINED", 0, "is not a regular file (a FIFO",
       [](const std::string& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0); }},
      {"odd name 'q\"; $x ü.csv", "csv", [] { return CsvLines(1, 2); }, "LOADED", 2, ""},
  };
}

// The typed reason of each quarantined case (ledger column reason, job_files().Reason).
const std::map<std::string, std::string> kReasons = {
    {"long_first.csv", "READER_ERROR"},
    {"long_middle.csv", "READER_ERROR"},
    {"long_last.csv", "LAST_LINE_TOO_LONG"},
    {"invalid_utf8.csv", "READER_ERROR"},
    {"lone_cr.csv", "READER_ERROR"},
    {"unterminated_quote_enclosed.csv", "READER_ERROR"},
    {"deep.json", "JSON_TOO_DEEP"},
    {"truncated_array.json", "JSON_TRUNCATED"},
    {"bad_line.json", "JSON_TRUNCATED"},
    {"bomb.csv.gz", "DECOMPRESSION_BOMB"},
    {"truncated.csv.gz", "CORRUPT_STREAM"},
    {"not_compressed.csv.gz", "CORRUPT_STREAM"},
    {"trailing_garbage.csv.gz", "CORRUPT_STREAM"},
    {"fifo.csv", "UNREADABLE"},
    {"corrupt_footer.parquet", "READER_ERROR"},
    {"truncated.parquet", "READER_ERROR"},
    {"other_schema.parquet", "READER_ERROR"},
};

class HostileCorpusTest : public LocalJobTest {
 protected:
  // Job j<i> watches in/<i>/: a_good.csv, then the case's file, then z_good.csv (or .json,
  // .parquet).
  void Stage(size_t i, const HostileCase& c) {
    const std::string dir = in_ + "/" + std::to_string(i);
    std::filesystem::create_directories(dir);
    const std::string suffix = c.format.starts_with("csv") ? ".csv" : "." + c.format;
    WriteFile(dir + "/a_good" + suffix, Good(c.format, 1));
    WriteFile(dir + "/z_good" + suffix, Good(c.format, 3));
    if (c.special) {
      c.special(dir + "/" + c.name);
    } else {
      WriteFile(dir + "/" + c.name, c.make());
    }
  }

  // Two rows, ids `first` and `first` + 1.
  std::string Good(const std::string& format, int first) {
    if (format == "json") {
      return "{\"id\": " + std::to_string(first) +
             ", \"name\": \"g\"}\n{\"id\": " + std::to_string(first + 1) + ", \"name\": \"g\"}\n";
    }
    if (format == "csv_with_names") return "id,name\n" + CsvLines(first, first + 1, "g");
    if (format == "parquet")
      return ParquetOf("SELECT " + std::to_string(first) +
                       " + i AS id, 'g' AS name FROM range(2) r(i)");
    return CsvLines(first, first + 1, "g");
  }

  // A Parquet file of `select`'s rows, as DuckDB writes it.
  std::string ParquetOf(const std::string& select) {
    const std::string path = dir_.Join("made.parquet");
    EXPECT_TRUE(
        harness_.conn()
            .Execute("COPY (" + select + ") TO " + engine::QuoteLiteral(path) + " (FORMAT parquet)")
            .ok());
    return ReadAll(path);
  }

  void CreateJob(size_t i, const HostileCase& c) {
    const std::string select = c.format == "csv" ? "SELECT c1, c2" : "SELECT id, name";
    auto created = harness_.Run(
        "CREATE JOB j" + std::to_string(i) +
        " ON STREAMING PROPERTIES (\"max_interval\" = \"1\", \"on_error\" = \"skip_file\") DO "
        "INSERT INTO t " +
        select + " FROM local(\"file_path\" = \"" + in_ + "/" + std::to_string(i) +
        "/*\", \"format\" = \"" + c.format + "\", \"column_separator\" = \",\"" + c.reader_params +
        ")");
    ASSERT_TRUE(created.ok()) << c.name << ": " << created.status().ToString();
  }

  // State, rows and error of job j<i>'s files, by name.
  Rows Ledger(size_t i) {
    return harness_.QueryExpanded(
        "SELECT regexp_replace(FileName, '.*/', ''), State, Rows, coalesce(Error, ''), "
        "coalesce(Reason, '') FROM "
        "job_files(\"job\" = \"j" +
        std::to_string(i) + "\") ORDER BY FileName");
  }
};

std::vector<HostileCase> WithParquet(std::vector<HostileCase> cases,
                                     const std::function<std::string(std::string)>& parquet_of) {
  const std::string good = parquet_of("SELECT 10 + i AS id, 'p' AS name FROM range(100) r(i)");
  cases.push_back({"corrupt_footer.parquet", "parquet",
                   [good] {
                     std::string bad = good;
                     bad[bad.size() - 2] = 'X';  // "PAR1" at the end, broken
                     return bad;
                   },
                   "QUARANTINED", 0, "No magic bytes found at end of file"});
  cases.push_back({"truncated.parquet", "parquet",
                   [good] { return good.substr(0, good.size() / 2); }, "QUARANTINED", 0,
                   "No magic bytes found at end of file"});
  const std::string other = parquet_of("SELECT 1 AS x, 2 AS y");
  cases.push_back({"other_schema.parquet", "parquet", [other] { return other; }, "QUARANTINED", 0,
                   "Referenced column \"id\" not found"});
  return cases;
}

TEST_F(HostileCorpusTest, EveryHostileFileEndsAsTheTableSaysAndTheServerStaysUp) {
  const std::vector<HostileCase> cases =
      WithParquet(Cases(), [this](const std::string& select) { return ParquetOf(select); });
  for (size_t i = 0; i < cases.size(); ++i)
    ASSERT_NO_FATAL_FAILURE(Stage(i, cases[i]));
  harness_.Tick();  // settled: each job takes its three files in one task
  for (size_t i = 0; i < cases.size(); ++i)
    ASSERT_NO_FATAL_FAILURE(CreateJob(i, cases[i]));
  for (size_t i = 0; i < cases.size(); ++i) {
    const HostileCase& c = cases[i];
    SCOPED_TRACE(c.name);
    if (!harness_.WaitFor([&] { return Ledger(i).size() == 3; }, std::chrono::seconds(20))) {
      ADD_FAILURE() << "job j" << i << ": "
                    << harness_.JobColumn("j" + std::to_string(i), "ErrorMsg");
      continue;
    }
    const Rows ledger = Ledger(i);
    // The good files around it, each once.
    EXPECT_EQ(ledger[0],
              (std::vector<std::string>{"a_good" + ledger[0][0].substr(6), "LOADED", "2", "", ""}));
    EXPECT_EQ(ledger[2][1], "LOADED");
    EXPECT_EQ(ledger[2][2], "2");
    const std::vector<std::string>& bad = ledger[1];
    EXPECT_EQ(bad[0], c.name);
    EXPECT_EQ(bad[1], c.state) << bad[3];
    // Why, typed (load/bad_file.h): every quarantined file has a reason, a loaded one none.
    const auto reason = kReasons.find(c.name);
    EXPECT_EQ(bad[4], reason == kReasons.end() ? "" : reason->second) << bad[3];
    EXPECT_EQ(bad[2], std::to_string(c.rows)) << bad[3];
    if (c.error.empty()) {
      EXPECT_EQ(bad[3], "");
    } else {
      EXPECT_NE(bad[3].find(c.error), std::string::npos) << bad[3];
    }
    EXPECT_LE(bad[3].size(), 1024u) << "an error holds at most a few hundred bytes of the value";
    // Never the work copy's path, the SQL that ran, or DuckDB's option dump.
    EXPECT_EQ(bad[3].find(".work/"), std::string::npos) << bad[3];
    EXPECT_EQ(bad[3].find("LINE 1"), std::string::npos) << bad[3];
    EXPECT_EQ(bad[3].find("read_csv"), std::string::npos) << bad[3];
    EXPECT_EQ(bad[3].find("sample_size"), std::string::npos) << bad[3];
    if (!bad[3].empty()) EXPECT_EQ(bad[3].rfind("file " + dir_.path(), 0), 0u) << bad[3];
    EXPECT_EQ(harness_.JobColumn("j" + std::to_string(i), "Status"), "RUNNING");
  }
  // Every good file's rows once: ids 1, 2 (a_good) and 3, 4 (z_good) of each job.
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t WHERE name = 'g'"),
            std::to_string(4 * cases.size()));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM (SELECT id FROM t WHERE name = 'g' GROUP BY id "
                           "HAVING count(*) = " +
                           std::to_string(cases.size()) + ")"),
            "4");
}

}  // namespace
}  // namespace millrace::job
