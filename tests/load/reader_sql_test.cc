#include "load/reader_sql.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "engine/database.h"
#include "engine/engine_test_util.h"
#include "load/decompress.h"
#include "load/file_params.h"
#include "load/json_nesting.h"
#include "load/record_count.h"
#include "testing/compress.h"
#include "testing/temp_dir.h"

namespace millrace::load {
namespace {

using engine::QueryRows;
using testing::Compress;
using Rows = std::vector<std::vector<std::string>>;

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

class ReaderSqlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = engine::OpenOrDie({});
    conn_ = engine::ConnectOrDie(*db_);
  }

  FileFunctionOptions Options(sql::DorisArgs args) {
    args.emplace("file_path", dir_.Join("*"));
    auto options = ParseFileFunctionArgs(SourceKind::kLocal, args);
    EXPECT_TRUE(options.ok()) << options.status().ToString();
    return options.ok() ? *options : FileFunctionOptions{};
  }

  // Reads `files` (names in dir_) with `args` and returns the rows of `select` over them.
  Rows Read(const sql::DorisArgs& args, const std::vector<std::string>& names,
            const std::string& select = "SELECT * FROM t") {
    FileFunctionOptions options = Options(args);
    std::vector<std::string> files;
    int index = 0;
    for (const std::string& name : names) {
      auto prepared = PrepareLocalFile(dir_.Join(name), options.compression, work_.path(), index++);
      EXPECT_TRUE(prepared.ok()) << prepared.status().ToString();
      if (!prepared.ok()) return {};
      files.push_back(*prepared);
    }
    auto sql = BuildReadSql(options, files, *conn_);
    EXPECT_TRUE(sql.ok()) << sql.status().ToString();
    if (!sql.ok()) return {};
    std::string query = select;
    query.replace(query.find("FROM t"), 6, "FROM " + *sql + " AS t");
    return QueryRows(*conn_, query);
  }

  testing::TempDir dir_;
  testing::TempDir work_;
  std::unique_ptr<engine::Database> db_;
  std::unique_ptr<engine::Connection> conn_;
};

TEST_F(ReaderSqlTest, CsvColumnsAreC1ToCnAsText) {
  WriteFile(dir_.Join("a.csv"), "1,alice,3.5\n2,bob,\n");
  EXPECT_EQ(Read({{"column_separator", ","}}, {"a.csv"}, "SELECT c1, c2, c3 FROM t ORDER BY c1"),
            (Rows{{"1", "alice", "3.5"}, {"2", "bob", "NULL"}}));
  EXPECT_EQ(Read({{"column_separator", ","}}, {"a.csv"},
                 "SELECT typeof(c1), count(*) FROM t GROUP BY ALL"),
            (Rows{{"VARCHAR", "2"}}));
}

TEST_F(ReaderSqlTest, CsvDefaultSeparatorIsTabAndQuotesAreDataWithoutEnclose) {
  WriteFile(dir_.Join("a.tsv"), "1\t\"x, y\"\n");
  EXPECT_EQ(Read({}, {"a.tsv"}), (Rows{{"1", "\"x, y\""}}));
}

TEST_F(ReaderSqlTest, CsvEncloseEscapeCrlfBomAndSkipLines) {
  WriteFile(dir_.Join("a.csv"),
            "\xEF\xBB\xBFjunk line\r\n1,\"quoted, with comma\",\"say \\\"hi\\\"\"\r\n"
            "2,\"multi\r\nline\",plain\r\n");
  EXPECT_EQ(Read({{"column_separator", ","},
                  {"enclose", "\""},
                  {"escape", "\\"},
                  {"line_delimiter", "\\r\\n"},
                  {"skip_lines", "1"}},
                 {"a.csv"}, "SELECT c1, c2, c3 FROM t ORDER BY c1"),
            (Rows{{"1", "quoted, with comma", "say \"hi\""}, {"2", "multi\r\nline", "plain"}}));
}

TEST_F(ReaderSqlTest, CsvTrimDoubleQuotes) {
  WriteFile(dir_.Join("a.csv"), "\"1\",\"a\"\n");
  EXPECT_EQ(Read({{"column_separator", ","}, {"trim_double_quotes", "true"}}, {"a.csv"}),
            (Rows{{"1", "a"}}));
}

TEST_F(ReaderSqlTest, CsvWithNamesAndWithNamesAndTypes) {
  WriteFile(dir_.Join("n.csv"), "id,name\n1,a\n2,b\n");
  EXPECT_EQ(Read({{"column_separator", ","}, {"format", "csv_with_names"}}, {"n.csv"},
                 "SELECT name, id FROM t ORDER BY id"),
            (Rows{{"a", "1"}, {"b", "2"}}));
  WriteFile(dir_.Join("t.csv"), "id,name\nINT,VARCHAR(10)\n1,a\n");
  EXPECT_EQ(Read({{"column_separator", ","}, {"format", "csv_with_names_and_types"}}, {"t.csv"},
                 "SELECT id, name FROM t"),
            (Rows{{"1", "a"}}));
}

TEST_F(ReaderSqlTest, EveryCompressionReadsTheSameRows) {
  const std::string csv = "1,x\n2,y\n3,z\n";
  const std::vector<std::pair<Compression, std::string>> cases = {
      {Compression::kPlain, "p.csv"},        {Compression::kGzip, "g.csv.gz"},
      {Compression::kZstd, "z.csv.zst"},     {Compression::kBzip2, "b.csv.bz2"},
      {Compression::kLz4Frame, "l.csv.lz4"}, {Compression::kDeflate, "d.csv.deflate"}};
  for (const auto& [compression, name] : cases) {
    WriteFile(dir_.Join(name), Compress(compression, csv));
    // Inferred from the suffix ...
    EXPECT_EQ(Read({{"column_separator", ","}}, {name}, "SELECT count(*), max(c2) FROM t"),
              (Rows{{"3", "z"}}))
        << name;
    // ... and declared on a file without one.
    const std::string bare = "bare_" + std::string(CompressionName(compression));
    WriteFile(dir_.Join(bare), Compress(compression, csv));
    EXPECT_EQ(Read({{"column_separator", ","},
                    {"compress_type", std::string(CompressionName(compression))}},
                   {bare}, "SELECT count(*), max(c2) FROM t"),
              (Rows{{"3", "z"}}))
        << bare;
  }
}

TEST_F(ReaderSqlTest, TruncatedCompressedFileIsDataLoss) {
  for (Compression c : {Compression::kGzip, Compression::kZstd, Compression::kBzip2,
                        Compression::kLz4Frame, Compression::kDeflate}) {
    const std::string full = Compress(c, std::string(100000, 'x') + "\n");
    const std::string name = "trunc_" + std::string(CompressionName(c));
    WriteFile(dir_.Join(name), full.substr(0, full.size() / 2));
    auto prepared = PrepareLocalFile(dir_.Join(name), c, work_.path(), 99);
    ASSERT_FALSE(prepared.ok()) << name;
    EXPECT_EQ(prepared.status().code(), StatusCode::kDataLoss);
    EXPECT_EQ(prepared.status().message(),
              "not a valid " + std::string(CompressionName(c)) +
                  " stream: truncated (the stream ends before its end marker)");
  }
}

// A decompression bomb (a few KB that expand to many MB) fails its file once the output passes
// the bound, in every codec, and leaves nothing of its output on the disk.
TEST_F(ReaderSqlTest, DecompressionIsBounded) {
  const std::string zeros(8 << 20, '0');
  for (Compression c : {Compression::kGzip, Compression::kZstd, Compression::kBzip2,
                        Compression::kLz4Frame, Compression::kDeflate}) {
    const std::string name = "bomb_" + std::string(CompressionName(c));
    const std::string bomb = Compress(c, zeros);
    ASSERT_LT(bomb.size(), 100u << 10) << name;
    WriteFile(dir_.Join(name), bomb);
    auto refused = PrepareLocalFile(dir_.Join(name), c, work_.path(), 7, 1 << 20);
    ASSERT_FALSE(refused.ok()) << name;
    EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
    EXPECT_EQ(refused.status().message(),
              "expands past 1048576 bytes when " + std::string(CompressionName(c)) +
                  " is decoded (a decompression bomb, or set \"max_decompressed_bytes\")");
    EXPECT_FALSE(std::filesystem::exists(work_.Join("f7.plain"))) << name;
    // Within the bound it expands whole.
    auto allowed = PrepareLocalFile(dir_.Join(name), c, work_.path(), 8, 16 << 20);
    ASSERT_TRUE(allowed.ok()) << allowed.status().ToString();
    EXPECT_EQ(std::filesystem::file_size(*allowed), zeros.size()) << name;
  }
  // The default: 200 times the compressed size, at least 256 MiB, within the free space.
  EXPECT_EQ(DecompressionBudget(1 << 20, "/nonexistent", std::nullopt), 256ULL << 20);
  EXPECT_EQ(DecompressionBudget(10ULL << 20, "/nonexistent", std::nullopt), 2000ULL << 20);
  EXPECT_EQ(DecompressionBudget(10, "/nonexistent", 5000), 5000u);
  const std::filesystem::space_info space = std::filesystem::space(work_.path());
  EXPECT_LE(DecompressionBudget(UINT64_MAX / 2, work_.path(), std::nullopt), space.available);
}

// "deflate" means zlib-wrapped (as Hadoop writes it): a raw stream without the header is
// refused as corrupt, not guessed at.
TEST_F(ReaderSqlTest, RawDeflateWithoutAHeaderIsDataLoss) {
  const std::string csv = "1,x\n";
  z_stream zs{};
  ASSERT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string raw(deflateBound(&zs, csv.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(csv.data()));
  zs.avail_in = static_cast<uInt>(csv.size());
  zs.next_out = reinterpret_cast<Bytef*>(raw.data());
  zs.avail_out = static_cast<uInt>(raw.size());
  ASSERT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  raw.resize(zs.total_out);
  deflateEnd(&zs);
  WriteFile(dir_.Join("raw.deflate"), raw);
  auto prepared =
      PrepareLocalFile(dir_.Join("raw.deflate"), Compression::kDeflate, work_.path(), 7);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.status().code(), StatusCode::kDataLoss) << prepared.status().ToString();
  EXPECT_NE(prepared.status().message().find("the file does not start as a deflate stream"),
            std::string::npos)
      << prepared.status().ToString();
}

TEST_F(ReaderSqlTest, ConcatenatedStreamsAreReadWhole) {
  for (Compression c :
       {Compression::kGzip, Compression::kZstd, Compression::kBzip2, Compression::kLz4Frame}) {
    const std::string name = "multi_" + std::string(CompressionName(c));
    WriteFile(dir_.Join(name), Compress(c, "1,a\n2,b\n") + Compress(c, "3,c\n"));
    EXPECT_EQ(Read({{"column_separator", ","}, {"compress_type", std::string(CompressionName(c))}},
                   {name}, "SELECT count(*), string_agg(c2, '' ORDER BY c1) FROM t"),
              (Rows{{"3", "abc"}}))
        << name;
  }
}

TEST_F(ReaderSqlTest, JsonLinesArraysRootAndPaths) {
  WriteFile(dir_.Join("l.json"),
            "{\"id\": 1, \"u\": {\"name\": \"a\"}}\n{\"id\": 2, \"u\": {\"name\": \"b\"}}\n");
  EXPECT_EQ(Read({{"format", "json"}}, {"l.json"}, "SELECT id, u.name FROM t ORDER BY id"),
            (Rows{{"1", "a"}, {"2", "b"}}));
  EXPECT_EQ(Read({{"format", "json"}, {"jsonpaths", "[\"$.id\", \"$.u.name\"]"}}, {"l.json"},
                 "SELECT id, name FROM t ORDER BY id"),
            (Rows{{"1", "a"}, {"2", "b"}}));
  // A quoted key, its quotes escaped in the JSON array, names its column without them.
  WriteFile(dir_.Join("q.json"), "{\"id\": 7, \"full name\": \"x y\", \"caf\u00e9\": \"z\"}\n");
  EXPECT_EQ(
      Read({{"format", "json"}, {"jsonpaths", R"(["$.id", "$.\"full name\"", "$.caf\u00e9"])"}},
           {"q.json"}, "SELECT id, \"full name\", \"caf\u00e9\" FROM t"),
      (Rows{{"7", "x y", "z"}}));

  WriteFile(dir_.Join("a.json"), "[{\"id\": 3}, {\"id\": 4}]");
  EXPECT_EQ(
      Read({{"format", "json"}, {"strip_outer_array", "true"}, {"read_json_by_line", "false"}},
           {"a.json"}, "SELECT id FROM t ORDER BY id"),
      (Rows{{"3"}, {"4"}}));

  WriteFile(dir_.Join("r.json"),
            "{\"data\": [{\"id\": 5, \"v\": \"x\"}, {\"id\": 6, \"v\": \"y\"}]}\n");
  EXPECT_EQ(Read({{"format", "json"}, {"json_root", "$.data"}, {"strip_outer_array", "true"}},
                 {"r.json"}, "SELECT id, v FROM t ORDER BY id"),
            (Rows{{"5", "x"}, {"6", "y"}}));
}

TEST_F(ReaderSqlTest, ParquetWrittenByDuckDB) {
  ASSERT_TRUE(conn_
                  ->Execute("COPY (SELECT range AS id, 'v' || range AS v FROM range(1000)) TO " +
                            engine::QuoteLiteral(dir_.Join("p.parquet")) + " (FORMAT parquet)")
                  .ok());
  EXPECT_EQ(Read({{"format", "parquet"}}, {"p.parquet", "p.parquet"},
                 "SELECT count(*), sum(id), max(v) FROM t"),
            (Rows{{"2000", "999000", "v999"}}));
}

TEST_F(ReaderSqlTest, SeveralFilesAreOneTable) {
  WriteFile(dir_.Join("1.csv"), "1,a\n");
  WriteFile(dir_.Join("2.csv"), "2,b\n3,c\n");
  EXPECT_EQ(Read({{"column_separator", ","}}, {"1.csv", "2.csv"},
                 "SELECT count(*), string_agg(c2, '' ORDER BY c1) FROM t"),
            (Rows{{"3", "abc"}}));
}

}  // namespace
}  // namespace millrace::load

namespace millrace::load {
namespace {

// Millrace's own record count (record_count.h) against DuckDB's reader over files it reads
// whole: they must agree, or a good file would be refused.
TEST_F(ReaderSqlTest, OurRecordCountIsDuckDbsForFilesItReadsWhole) {
  struct Case {
    std::string name;
    std::string content;
    sql::DorisArgs args;
  };
  const sql::DorisArgs comma = {{"column_separator", ","}};
  const sql::DorisArgs quoted = {{"column_separator", ","}, {"enclose", "\""}};
  const std::vector<Case> cases = {
      {"plain.csv", "1,a\n2,b\n3,c\n", comma},
      {"no_last_newline.csv", "1,a\n2,b", comma},
      {"blank_lines.csv", "1,a\n\n2,b\n\n\n3,c\n", comma},
      {"crlf.csv", "1,a\r\n2,b\r\n\r\n3,c\r\n", comma},
      {"header.csv",
       "id,name\n1,a\n2,b\n",
       {{"column_separator", ","}, {"format", "csv_with_names"}}},
      {"skip.csv", "junk\njunk\n1,a\n", {{"column_separator", ","}, {"skip_lines", "2"}}},
      {"quoted_newline.csv", "1,\"a\nb\"\n2,\"c,d\"\n3,\"e\"\n", quoted},
      {"tabs.csv", "1\ta\n2\tb\n", {}},
      {"multi_sep.csv", "1||a\n2||b\n", {{"column_separator", "||"}}},
      {"lines.json", "{\"id\": 1}\n{\"id\": 2}\n\n{\"id\": 3}\n", {{"format", "json"}}},
      {"array.json",
       "[{\"id\": 1}, {\"id\": [2, 3]}, {\"id\": {\"x\": 4}}]",
       {{"format", "json"}, {"strip_outer_array", "true"}, {"read_json_by_line", "false"}}},
      {"pretty.json",
       "{\n  \"id\": 1\n}\n{\n  \"id\": \"a,b]\"\n}\n",
       {{"format", "json"}, {"read_json_by_line", "false"}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    WriteFile(dir_.Join(c.name), c.content);
    const FileFunctionOptions options = Options(c.args);
    std::optional<int64_t> ours;
    if (options.format == Format::kJson) {
      JsonCounts counts;
      ASSERT_TRUE(CheckJsonNesting(dir_.Join(c.name), kMaxJsonDepth, &counts).ok());
      ours = JsonRecords(counts, options.json);
    } else {
      const int64_t header_lines = CsvHeaderLines(options.format, options.csv);
      auto counted = CountCsvRecords(dir_.Join(c.name), options.csv, header_lines);
      ASSERT_TRUE(counted.ok()) << counted.status().ToString();
      ours = *counted;
      EXPECT_EQ(CountCsvRecordsIn(c.content, options.csv, header_lines), *counted);
    }
    ASSERT_TRUE(ours.has_value());
    EXPECT_EQ(Read(c.args, {c.name}, "SELECT count(*) FROM t"), (Rows{{std::to_string(*ours)}}));
    std::filesystem::remove(dir_.Join(c.name));
  }
}

// CsvShapeIn takes from a file's bytes in memory what CsvShape takes from the file, errors too.
TEST_F(ReaderSqlTest, TheShapeOfBytesInMemoryIsTheFilesShape) {
  const sql::DorisArgs comma = {{"column_separator", ","}};
  const struct {
    std::string content;
    sql::DorisArgs args;
    std::vector<std::string> shape;  // empty: no record, an error
  } cases[] = {
      {"1,a,x\n2,b,y\n", comma, {"3"}},
      {"\xEF\xBB\xBF\n\n1,a\r\n", comma, {"2"}},
      {"junk\n1,\"a,b\"\n",
       {{"column_separator", ","}, {"skip_lines", "1"}, {"enclose", "\""}},
       {"2"}},
      {"id,name\n1,a\n", {{"column_separator", ","}, {"format", "csv_with_names"}}, {"id", "name"}},
      {"\n\n", comma, {}},
      {"junk", {{"column_separator", ","}, {"skip_lines", "1"}}, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.content);
    const std::string path = dir_.Join("shape.csv");
    WriteFile(path, c.content);
    const FileFunctionOptions options = Options(c.args);
    auto from_file = CsvShape(options, path);
    auto in_memory = CsvShapeIn(options, c.content, path);
    ASSERT_EQ(in_memory.status(), from_file.status());
    if (c.shape.empty()) {
      EXPECT_EQ(in_memory.status().code(), StatusCode::kInvalidArgument);
      continue;
    }
    ASSERT_TRUE(in_memory.ok()) << in_memory.status().ToString();
    EXPECT_EQ(*in_memory, c.shape);
    EXPECT_EQ(*from_file, c.shape);
  }
}

TEST_F(ReaderSqlTest, RecordsMillraceCannotCountAreNotGuessed) {
  JsonCounts scalar{.top_values = 2, .top_scalar = true};
  EXPECT_EQ(JsonRecords(scalar, {}), std::nullopt);
  JsonCounts arrays{.top_values = 2, .top_array = true, .array_elements = 3};
  EXPECT_EQ(JsonRecords(arrays, {}), std::nullopt);
  JsonCounts one{.top_values = 1, .top_array = true, .array_elements = 3};
  EXPECT_EQ(JsonRecords(one, {.json_root = "$.data"}), std::nullopt);
  EXPECT_EQ(JsonRecords(one, {}), 3);
}

}  // namespace
}  // namespace millrace::load
