#include "load/reader_sql.h"

#include <bzlib.h>
#include <lz4frame.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

namespace millrace::load {
namespace {

using engine::QuoteLiteral;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

constexpr size_t kChunk = 1 << 16;

std::string FileList(const std::vector<std::string>& files) {
  std::string out = "[";
  for (size_t i = 0; i < files.size(); ++i) {
    if (i > 0) out += ", ";
    out += QuoteLiteral(files[i]);
  }
  return out + "]";
}

Status CorruptError(const std::string& in, Compression c, const std::string& detail) {
  return Status::DataLoss("file '" + in + "' is not a valid " + std::string(CompressionName(c)) +
                          " stream: " + detail);
}

// Streams `in` through `step` (which consumes input and produces output) until the codec says
// the stream has ended; input that ends first is a truncated stream.
template <typename Step>
Status Pump(const std::string& in, const std::string& out, Compression c, Step step) {
  File src(std::fopen(in.c_str(), "rb"));
  if (!src) return Status::IoError("cannot read '" + in + "'");
  File dst(std::fopen(out.c_str(), "wb"));
  if (!dst) return Status::IoError("cannot write '" + out + "'");
  std::vector<char> input(kChunk);
  std::vector<char> output(kChunk);
  bool ended = false;
  while (!ended) {
    const size_t n = std::fread(input.data(), 1, input.size(), src.get());
    if (n == 0) break;
    const char* next = input.data();
    size_t avail = n;
    while (avail > 0 || !ended) {
      size_t produced = 0;
      size_t consumed = 0;
      auto r = step(next, avail, output.data(), output.size(), &consumed, &produced, &ended);
      if (!r.ok()) return CorruptError(in, c, r.message());
      if (produced > 0 && std::fwrite(output.data(), 1, produced, dst.get()) != produced) {
        return Status::IoError("cannot write '" + out + "'");
      }
      next += consumed;
      avail -= consumed;
      if (ended) break;
      if (consumed == 0 && produced == 0) break;  // needs more input
    }
    if (ended && avail > 0) {
      // Concatenated streams are legal for gzip/bz2; we treat trailing data as an error for
      // the others and keep it simple: restart is not supported.
      return CorruptError(in, c, "trailing data after the end of the stream");
    }
  }
  if (!ended) return CorruptError(in, c, "truncated (the stream ends before its end marker)");
  if (std::fflush(dst.get()) != 0) return Status::IoError("cannot write '" + out + "'");
  return Status::Ok();
}

Status InflateZlib(const std::string& in, const std::string& out, Compression c) {
  z_stream zs{};
  // 15 + 32: accept zlib and gzip headers; deflate without a header is retried below.
  int window = c == Compression::kDeflate ? 15 + 32 : 15 + 16;
  if (inflateInit2(&zs, window) != Z_OK) return Status::Internal("zlib init failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, inflateEnd);
  return Pump(in, out, c,
              [&](const char* src, size_t n, char* dst, size_t cap, size_t* used, size_t* made,
                  bool* ended) -> Status {
                zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(src));
                zs.avail_in = static_cast<uInt>(n);
                zs.next_out = reinterpret_cast<Bytef*>(dst);
                zs.avail_out = static_cast<uInt>(cap);
                const int rc = inflate(&zs, Z_NO_FLUSH);
                *used = n - zs.avail_in;
                *made = cap - zs.avail_out;
                if (rc == Z_STREAM_END) {
                  *ended = true;
                  return Status::Ok();
                }
                if (rc != Z_OK && rc != Z_BUF_ERROR) {
                  return Status::DataLoss(zs.msg != nullptr ? zs.msg : "inflate failed");
                }
                return Status::Ok();
              });
}

Status DecompressBzip2(const std::string& in, const std::string& out) {
  bz_stream bz{};
  if (BZ2_bzDecompressInit(&bz, 0, 0) != BZ_OK) return Status::Internal("bzip2 init failed");
  std::unique_ptr<bz_stream, int (*)(bz_stream*)> guard(&bz, BZ2_bzDecompressEnd);
  return Pump(in, out, Compression::kBzip2,
              [&](const char* src, size_t n, char* dst, size_t cap, size_t* used, size_t* made,
                  bool* ended) -> Status {
                bz.next_in = const_cast<char*>(src);
                bz.avail_in = static_cast<unsigned>(n);
                bz.next_out = dst;
                bz.avail_out = static_cast<unsigned>(cap);
                const int rc = BZ2_bzDecompress(&bz);
                *used = n - bz.avail_in;
                *made = cap - bz.avail_out;
                if (rc == BZ_STREAM_END) {
                  *ended = true;
                  return Status::Ok();
                }
                if (rc != BZ_OK) return Status::DataLoss("bzip2 error " + std::to_string(rc));
                return Status::Ok();
              });
}

Status DecompressLz4(const std::string& in, const std::string& out) {
  LZ4F_dctx* dctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
    return Status::Internal("lz4 init failed");
  }
  std::unique_ptr<LZ4F_dctx, size_t (*)(LZ4F_dctx*)> guard(dctx, LZ4F_freeDecompressionContext);
  return Pump(in, out, Compression::kLz4Frame,
              [&](const char* src, size_t n, char* dst, size_t cap, size_t* used, size_t* made,
                  bool* ended) -> Status {
                size_t dst_size = cap;
                size_t src_size = n;
                const size_t hint = LZ4F_decompress(dctx, dst, &dst_size, src, &src_size, nullptr);
                if (LZ4F_isError(hint)) return Status::DataLoss(LZ4F_getErrorName(hint));
                *used = src_size;
                *made = dst_size;
                *ended = hint == 0;
                return Status::Ok();
              });
}

Status DecompressZstd(const std::string& in, const std::string& out) {
  std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> ds(ZSTD_createDStream(),
                                                               ZSTD_freeDStream);
  if (!ds) return Status::Internal("zstd init failed");
  ZSTD_initDStream(ds.get());
  return Pump(in, out, Compression::kZstd,
              [&](const char* src, size_t n, char* dst, size_t cap, size_t* used, size_t* made,
                  bool* ended) -> Status {
                ZSTD_inBuffer input{src, n, 0};
                ZSTD_outBuffer output{dst, cap, 0};
                const size_t rc = ZSTD_decompressStream(ds.get(), &output, &input);
                if (ZSTD_isError(rc)) return Status::DataLoss(ZSTD_getErrorName(rc));
                *used = input.pos;
                *made = output.pos;
                *ended = rc == 0;
                return Status::Ok();
              });
}

// Number of columns (and their names) of the first file as DuckDB's reader sees it.
Result<std::vector<std::string>> SniffColumns(engine::Connection& sniff, const std::string& sql) {
  MR_ASSIGN_OR_RETURN(auto result, sniff.Query(sql + " LIMIT 0"));
  std::vector<std::string> names;
  for (size_t i = 0; i < result->column_count(); ++i) names.push_back(result->column_name(i));
  return names;
}

// First `rows` records of the first file, each a list of fields.
Result<std::vector<std::vector<std::string>>> SniffRows(engine::Connection& sniff,
                                                        const std::string& sql, int rows) {
  MR_ASSIGN_OR_RETURN(auto result, sniff.Query(sql + " LIMIT " + std::to_string(rows)));
  std::vector<std::vector<std::string>> out;
  while (true) {
    MR_ASSIGN_OR_RETURN(auto chunk, result->Next());
    if (!chunk) break;
    for (size_t r = 0; r < chunk->size(); ++r) {
      std::vector<std::string> row;
      for (size_t c = 0; c < chunk->column_count(); ++c) {
        row.push_back(chunk->IsNull(c, r) ? "" : std::string(chunk->GetString(c, r)));
      }
      out.push_back(std::move(row));
    }
  }
  return out;
}

std::string CsvDialect(const CsvOptions& csv) {
  std::string quote = csv.enclose;
  if (quote.empty() && csv.trim_double_quotes) quote = "\"";
  std::string out = "delim=" + QuoteLiteral(csv.column_separator) + ", quote=" + QuoteLiteral(quote);
  if (!csv.escape.empty()) out += ", escape=" + QuoteLiteral(csv.escape);
  out += ", new_line=" + QuoteLiteral(csv.line_delimiter == "\r\n" ? "\\r\\n"
                                      : csv.line_delimiter == "\r" ? "\\r"
                                                                   : "\\n");
  return out;
}

std::string ColumnsStruct(const std::vector<std::string>& names) {
  std::string out = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += QuoteLiteral(names[i]) + ": 'VARCHAR'";
  }
  return out + "}";
}

Result<std::string> BuildCsvSql(const FileFunctionOptions& options,
                                const std::vector<std::string>& files, engine::Connection& sniff) {
  const CsvOptions& csv = options.csv;
  const std::string dialect = CsvDialect(csv);
  const std::string first = "read_csv(" + QuoteLiteral(files.front()) + ", " + dialect +
                            ", all_varchar=true, header=false, skip=" +
                            std::to_string(csv.skip_lines) + ")";
  std::vector<std::string> names;
  int64_t skip = csv.skip_lines;
  bool header = false;
  switch (options.format) {
    case Format::kCsv: {
      MR_ASSIGN_OR_RETURN(auto sniffed, SniffColumns(sniff, "SELECT * FROM " + first));
      for (size_t i = 0; i < sniffed.size(); ++i) names.push_back("c" + std::to_string(i + 1));
      break;
    }
    case Format::kCsvWithNames:
    case Format::kCsvWithNamesAndTypes: {
      MR_ASSIGN_OR_RETURN(auto rows, SniffRows(sniff, "SELECT * FROM " + first, 1));
      if (rows.empty()) {
        return Status::InvalidArgument("file '" + files.front() +
                                       "' has no header line (format " +
                                       std::string(FormatName(options.format)) + ")");
      }
      names = rows.front();
      header = options.format == Format::kCsvWithNames;
      // The types line is skipped, values stay text (Doris casts on insert the same way).
      if (!header) skip += 2;
      break;
    }
    default:
      return Status::Internal("not a CSV format");
  }
  std::string sql = "(SELECT * FROM read_csv(" + FileList(files) + ", " + dialect +
                    ", header=" + (header ? "true" : "false") + ", skip=" + std::to_string(skip) +
                    ", auto_detect=false, columns=" + ColumnsStruct(names) + "))";
  if (csv.trim_double_quotes) {
    std::string select = "(SELECT ";
    for (size_t i = 0; i < names.size(); ++i) {
      if (i > 0) select += ", ";
      const std::string col = engine::QuoteIdentifier(names[i]);
      select += "trim(" + col + ", '\"') AS " + col;
    }
    sql = select + " FROM " + sql + ")";
  }
  return sql;
}

std::string JsonFormat(const JsonOptions& json) {
  if (json.strip_outer_array) return "array";
  return json.read_json_by_line ? "newline_delimited" : "auto";
}

// Splits '["$.a", "$.b.c"]' into paths; a path's column is named by its last segment.
Result<std::vector<std::string>> ParseJsonPaths(const std::string& text) {
  std::vector<std::string> paths;
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip_space();
  if (i >= text.size() || text[i] != '[') {
    return Status::InvalidArgument("\"jsonpaths\" must be a JSON array of strings, got '" + text +
                                   "'");
  }
  ++i;
  while (true) {
    skip_space();
    if (i < text.size() && text[i] == ']') break;
    if (i >= text.size() || text[i] != '"') {
      return Status::InvalidArgument("\"jsonpaths\" must be a JSON array of strings, got '" +
                                     text + "'");
    }
    const size_t end = text.find('"', i + 1);
    if (end == std::string::npos) {
      return Status::InvalidArgument("\"jsonpaths\": unterminated string in '" + text + "'");
    }
    paths.push_back(text.substr(i + 1, end - i - 1));
    i = end + 1;
    skip_space();
    if (i < text.size() && text[i] == ',') ++i;
  }
  if (paths.empty()) return Status::InvalidArgument("\"jsonpaths\" is empty");
  return paths;
}

std::string LastSegment(const std::string& path) {
  const size_t dot = path.find_last_of(".$[");
  std::string name = dot == std::string::npos ? path : path.substr(dot + 1);
  while (!name.empty() && (name.back() == ']' || name.back() == '\'' || name.back() == '"')) {
    name.pop_back();
  }
  return name.empty() ? path : name;
}

Result<std::string> BuildJsonSql(const FileFunctionOptions& options,
                                 const std::vector<std::string>& files, engine::Connection& sniff) {
  const JsonOptions& json = options.json;
  if (json.json_root.empty() && json.jsonpaths.empty()) {
    return "(SELECT * FROM read_json(" + FileList(files) +
           ", format=" + QuoteLiteral(JsonFormat(json)) + "))";
  }
  // Rows are the JSON values at json_root of each document (the elements, when the root holds
  // an array and strip_outer_array is set).
  std::string docs = "(SELECT json AS doc FROM read_json_objects(" + FileList(files) +
                     ", format=" + QuoteLiteral(json.read_json_by_line ? "newline_delimited"
                                                                       : "auto") +
                     "))";
  std::string rows = docs;
  if (!json.json_root.empty()) {
    const std::string at_root = "json_extract(doc, " + QuoteLiteral(json.json_root) + ")";
    rows = json.strip_outer_array
               ? "(SELECT unnest(CAST(" + at_root + " AS JSON[])) AS doc FROM " + docs + ")"
               : "(SELECT " + at_root + " AS doc FROM " + docs + ")";
  } else if (json.strip_outer_array) {
    rows = "(SELECT unnest(CAST(doc AS JSON[])) AS doc FROM " + docs + ")";
  }
  if (json.jsonpaths.empty()) {
    // Expand the objects' fields like read_json does: json_transform needs the structure as a
    // constant, so it is inferred from the documents first.
    MR_ASSIGN_OR_RETURN(auto structure,
                        SniffRows(sniff, "SELECT CAST(json_group_structure(doc) AS VARCHAR) FROM " +
                                             rows + " AS r", 1));
    if (structure.empty() || structure[0].empty() || structure[0][0].empty()) {
      return Status::InvalidArgument("no JSON document found at \"json_root\" " + json.json_root);
    }
    return "(SELECT unnest(json_transform(doc, " + QuoteLiteral(structure[0][0]) +
           "), recursive := false) FROM " + rows + ")";
  }
  MR_ASSIGN_OR_RETURN(auto paths, ParseJsonPaths(json.jsonpaths));
  std::string select = "(SELECT ";
  for (size_t i = 0; i < paths.size(); ++i) {
    if (i > 0) select += ", ";
    select += "json_extract_string(doc, " + QuoteLiteral(paths[i]) + ") AS " +
              engine::QuoteIdentifier(LastSegment(paths[i]));
  }
  return select + " FROM " + rows + ")";
}

}  // namespace

Status DecompressFile(Compression compression, const std::string& in, const std::string& out) {
  switch (compression) {
    case Compression::kBzip2: return DecompressBzip2(in, out);
    case Compression::kLz4Frame: return DecompressLz4(in, out);
    case Compression::kDeflate:
    case Compression::kGzip: return InflateZlib(in, out, compression);
    case Compression::kZstd: return DecompressZstd(in, out);
    case Compression::kPlain: break;
  }
  std::error_code ec;
  std::filesystem::copy_file(in, out, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) return Status::IoError("cannot copy '" + in + "': " + ec.message());
  return Status::Ok();
}

Result<std::string> PrepareLocalFile(const std::string& path, std::optional<Compression> declared,
                                     const std::string& work_dir, int index) {
  const Compression compression = declared.value_or(CompressionFromSuffix(path));
  const std::string base = work_dir + "/f" + std::to_string(index);
  switch (compression) {
    case Compression::kPlain:
      // A declared "plain" on a file named .gz must not be decompressed by DuckDB's suffix rule.
      if (CompressionFromSuffix(path) == Compression::kPlain) return path;
      break;
    case Compression::kGzip:
      if (CompressionFromSuffix(path) == Compression::kGzip) return path;
      break;
    case Compression::kZstd:
      if (CompressionFromSuffix(path) == Compression::kZstd) return path;
      break;
    case Compression::kBzip2:
    case Compression::kLz4Frame:
    case Compression::kDeflate: {
      const std::string out = base + ".plain";
      MR_RETURN_IF_ERROR(DecompressFile(compression, path, out));
      return out;
    }
  }
  // Name the file so DuckDB's suffix-based detection sees the declared compression.
  const std::string link = base + (compression == Compression::kGzip   ? ".gz"
                                   : compression == Compression::kZstd ? ".zst"
                                                                       : ".plain");
  std::error_code ec;
  std::filesystem::create_symlink(std::filesystem::absolute(path), link, ec);
  if (ec) return Status::IoError("cannot link '" + path + "' into " + work_dir + ": " + ec.message());
  return link;
}

Result<std::string> BuildReadSql(const FileFunctionOptions& options,
                                 const std::vector<std::string>& files, engine::Connection& sniff) {
  if (files.empty()) return Status::InvalidArgument("no files to read");
  switch (options.format) {
    case Format::kCsv:
    case Format::kCsvWithNames:
    case Format::kCsvWithNamesAndTypes:
      return BuildCsvSql(options, files, sniff);
    case Format::kJson:
      return BuildJsonSql(options, files, sniff);
    case Format::kParquet:
      return "(SELECT * FROM read_parquet(" + FileList(files) + "))";
  }
  return Status::Internal("unknown format");
}

}  // namespace millrace::load
