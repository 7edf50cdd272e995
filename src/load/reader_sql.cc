#include "load/reader_sql.h"

#include <cstdio>
#include <filesystem>
#include <memory>

#include "common/stdio_file.h"
#include "common/strings.h"

namespace millrace::load {
namespace {

using engine::QuoteLiteral;

constexpr size_t kChunk = 1 << 16;

std::string FileList(const std::vector<std::string>& files) {
  std::string out = "[";
  for (size_t i = 0; i < files.size(); ++i) {
    if (i > 0) out += ", ";
    out += QuoteLiteral(files[i]);
  }
  return out + "]";
}

std::string CsvDialect(const CsvOptions& csv) {
  std::string quote = csv.enclose;
  if (quote.empty() && csv.trim_double_quotes) quote = "\"";
  std::string out =
      "delim=" + QuoteLiteral(csv.column_separator) + ", quote=" + QuoteLiteral(quote);
  if (!csv.escape.empty()) out += ", escape=" + QuoteLiteral(csv.escape);
  // "\n", the default, is left to DuckDB, which then ends lines at \n, \r\n or \r: a file
  // written on Windows loads without \r in its last column (given as \n, DuckDB refused it).
  if (csv.line_delimiter != "\n") {
    out += ", new_line=" + QuoteLiteral(csv.line_delimiter == "\r\n" ? "\\r\\n" : "\\r");
  }
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

// The fields of the first record after `skip` lines, parsed with the job's dialect. DuckDB's
// sniffer is not used: it gives up on a file whose rows disagree on the column count, and the
// error must then come from the read, naming the line. The file's bytes are `data`, then what
// `file` (when not null) reads; `path` names the file in errors.
Result<std::vector<std::string>> ReadFirstRecord(const std::string& path, std::FILE* file,
                                                 std::string data, const CsvOptions& csv,
                                                 int64_t skip) {
  constexpr size_t kMaxRecord = 16 << 20;
  std::vector<char> buf(file != nullptr ? kChunk : 0);
  const std::string& newline = csv.line_delimiter;
  const std::string& sep = csv.column_separator;
  const char quote = csv.enclose.empty() ? (csv.trim_double_quotes ? '"' : '\0') : csv.enclose[0];
  const char escape = csv.escape.empty() ? '\0' : csv.escape[0];
  size_t pos = 0;
  auto fill = [&]() {
    if (file == nullptr) return false;
    const size_t n = std::fread(buf.data(), 1, buf.size(), file);
    data.append(buf.data(), n);
    return n > 0;
  };
  auto at = [&](size_t i) -> int {
    while (i >= data.size()) {
      if (data.size() > kMaxRecord || !fill()) return -1;
    }
    return static_cast<unsigned char>(data[i]);
  };
  auto starts_with = [&](size_t i, const std::string& token) {
    for (size_t k = 0; k < token.size(); ++k) {
      if (at(i + k) != static_cast<unsigned char>(token[k])) return false;
    }
    return true;
  };
  // The length of the line end at i, 0 when none: the default \n also ends lines at \r\n, as
  // DuckDB reads them (CsvDialect).
  auto line_end = [&](size_t i) -> size_t {
    if (starts_with(i, newline)) return newline.size();
    return newline == "\n" && starts_with(i, "\r\n") ? 2 : 0;
  };
  if (starts_with(0, "\xEF\xBB\xBF")) pos = 3;
  for (int64_t line = 0; line < skip; ++line) {
    while (at(pos) >= 0 && !starts_with(pos, newline))
      ++pos;
    if (at(pos) < 0) return std::vector<std::string>();
    pos += newline.size();
  }
  // Blank lines hold no record (DuckDB skips them too): a file of only line ends has none.
  for (size_t end; (end = line_end(pos)) > 0;)
    pos += end;
  const size_t record_start = pos;
  std::vector<std::string> fields(1);
  bool quoted = false;
  while (true) {
    const int ch = at(pos);
    if (ch < 0) break;
    if (quoted) {
      if (escape != '\0' && ch == escape && escape != quote && at(pos + 1) >= 0) {
        fields.back() += static_cast<char>(at(pos + 1));
        pos += 2;
      } else if (ch == quote) {
        if (at(pos + 1) == quote) {
          fields.back() += quote;
          pos += 2;
        } else {
          quoted = false;
          ++pos;
        }
      } else {
        fields.back() += static_cast<char>(ch);
        ++pos;
      }
      continue;
    }
    if (line_end(pos) > 0) break;
    if (starts_with(pos, sep)) {
      fields.emplace_back();
      pos += sep.size();
    } else if (quote != '\0' && ch == quote && fields.back().empty()) {
      quoted = true;
      ++pos;
    } else {
      fields.back() += static_cast<char>(ch);
      ++pos;
    }
    if (pos > kMaxRecord) {
      return Status::InvalidArgument("file '" + path + "': the first record is longer than 16 MiB");
    }
  }
  if (fields.size() == 1 && fields[0].empty() && at(pos) < 0 && pos == record_start) {
    return std::vector<std::string>();  // no record at all
  }
  return fields;
}

Result<std::vector<std::string>> ReadFirstRecord(const std::string& path, const CsvOptions& csv,
                                                 int64_t skip) {
  StdioFile file = OpenStdio(path, "rb");
  if (!file) return Status::IoError("cannot read '" + path + "'");
  return ReadFirstRecord(path, file.get(), std::string(), csv, skip);
}

// A first record that is there (ReadFirstRecord's result), or why not.
Result<std::vector<std::string>> RecordThere(const std::string& path,
                                             Result<std::vector<std::string>> first) {
  if (first.ok() && first->empty()) {
    return Status::InvalidArgument("file '" + path + "' has no record to read");
  }
  return first;
}

Result<std::vector<std::string>> FirstRecordOf(const FileFunctionOptions& options,
                                               const std::string& path) {
  return RecordThere(path, ReadFirstRecord(path, options.csv, options.csv.skip_lines));
}

// CsvShape's result from a first record.
std::vector<std::string> ShapeOf(const FileFunctionOptions& options,
                                 std::vector<std::string> first) {
  if (options.format == Format::kCsv) return std::vector<std::string>{std::to_string(first.size())};
  return first;
}

// The reader arguments that read path_partition_keys from the directories each file is linked
// under (path_partition.h), as text; "" without them.
std::string HiveSql(const FileFunctionOptions& options) {
  return options.path_partition_keys.empty()
             ? std::string()
             : ", hive_partitioning=true, hive_types_autocast=false";
}

// ", <key>, ..." of the path partition columns, for the SELECTs that name their columns.
std::string PartitionColumnsSql(const FileFunctionOptions& options) {
  std::string out;
  for (const std::string& key : options.path_partition_keys)
    out += ", " + engine::QuoteIdentifier(key);
  return out;
}

// ", filename AS <file_column>" (DuckDB's virtual column, not part of `*`), or "" for none.
std::string FileColumnSql(const std::string& file_column) {
  return file_column.empty() ? std::string()
                             : ", filename AS " + engine::QuoteIdentifier(file_column);
}

// `file_column`: see BuildReadSql.
Result<std::string> BuildCsvSql(const FileFunctionOptions& options,
                                const std::vector<std::string>& files,
                                const std::string& file_column) {
  const CsvOptions& csv = options.csv;
  const std::string dialect = CsvDialect(csv);
  MR_ASSIGN_OR_RETURN(std::vector<std::string> first, FirstRecordOf(options, files.front()));
  std::vector<std::string> names;
  int64_t skip = csv.skip_lines;
  bool header = false;
  if (options.format == Format::kCsv) {
    for (size_t i = 0; i < first.size(); ++i)
      names.push_back("c" + std::to_string(i + 1));
  } else {
    names = std::move(first);
    // csv_with_names lets DuckDB skip the header; with types, the types line is skipped too and
    // values stay text (Doris casts on insert the same way).
    header = options.format == Format::kCsvWithNames;
    if (!header) skip += 2;
  }
  std::string sql =
      "(SELECT *" + FileColumnSql(file_column) + " FROM read_csv(" + FileList(files) + ", " +
      dialect + ", header=" + (header ? "true" : "false") + ", skip=" + std::to_string(skip) +
      ", auto_detect=false, columns=" + ColumnsStruct(names) + HiveSql(options) + "))";
  if (csv.trim_double_quotes) {
    std::string select = "(SELECT ";
    for (size_t i = 0; i < names.size(); ++i) {
      if (i > 0) select += ", ";
      const std::string col = engine::QuoteIdentifier(names[i]);
      select += "trim(" + col + ", '\"') AS " + col;
    }
    if (!file_column.empty()) select += ", " + engine::QuoteIdentifier(file_column);
    sql = select + PartitionColumnsSql(options) + " FROM " + sql + ")";
  }
  if (!csv.schema.empty()) {
    // csv_schema names and types the columns by position, as Doris does: a value that does
    // not fit its type, or a column past the file's last, reads as NULL.
    std::string select = "(SELECT ";
    for (size_t i = 0; i < csv.schema.size(); ++i) {
      if (i > 0) select += ", ";
      const std::string value =
          i < names.size() ? engine::QuoteIdentifier(names[i]) : std::string("NULL");
      select += "TRY_CAST(" + value + " AS " + csv.schema[i].type + ") AS " +
                engine::QuoteIdentifier(csv.schema[i].name);
    }
    if (!file_column.empty()) select += ", " + engine::QuoteIdentifier(file_column);
    sql = select + PartitionColumnsSql(options) + " FROM " + sql + ")";
  }
  return sql;
}

std::string JsonFormat(const JsonOptions& json) {
  if (json.strip_outer_array) return "array";
  return json.read_json_by_line ? "newline_delimited" : "auto";
}

// The column a path's value is named by: its last key ("$.u.name" -> name). A quoted key
// ($."full name", $.a."x.y") is named by what is between its quotes, dots included.
std::string LastSegment(const std::string& path) {
  if (path.size() > 2 && path.back() == '"') {
    const size_t open = path.rfind('"', path.size() - 2);
    if (open != std::string::npos && open + 2 < path.size()) {
      return path.substr(open + 1, path.size() - open - 2);
    }
  }
  const size_t dot = path.find_last_of(".$[");
  std::string name = dot == std::string::npos ? path : path.substr(dot + 1);
  while (!name.empty() && (name.back() == ']' || name.back() == '\'' || name.back() == '"')) {
    name.pop_back();
  }
  return name.empty() ? path : name;
}

Result<std::string> BuildJsonSql(const FileFunctionOptions& options,
                                 const std::vector<std::string>& files, engine::Connection& sniff,
                                 const std::string& columns) {
  const JsonOptions& json = options.json;
  if (PlainJson(options)) {
    return "(SELECT * FROM read_json(" + FileList(files) +
           ", format=" + QuoteLiteral(JsonFormat(json)) +
           (columns.empty() ? std::string() : ", columns=" + columns) + HiveSql(options) + "))";
  }
  // Rows are the JSON values at json_root of each document (the elements, when the root holds
  // an array and strip_outer_array is set); the path partition columns go along.
  const std::string partitions = PartitionColumnsSql(options);
  std::string docs =
      "(SELECT json AS doc" + partitions + " FROM read_json_objects(" + FileList(files) +
      ", format=" + QuoteLiteral(json.read_json_by_line ? "newline_delimited" : "auto") +
      HiveSql(options) + "))";
  std::string rows = docs;
  if (!json.json_root.empty()) {
    const std::string at_root = "json_extract(doc, " + QuoteLiteral(json.json_root) + ")";
    rows = json.strip_outer_array
               ? "(SELECT unnest(CAST(" + at_root + " AS JSON[])) AS doc" + partitions + " FROM " +
                     docs + ")"
               : "(SELECT " + at_root + " AS doc" + partitions + " FROM " + docs + ")";
  } else if (json.strip_outer_array) {
    rows = "(SELECT unnest(CAST(doc AS JSON[])) AS doc" + partitions + " FROM " + docs + ")";
  }
  if (json.jsonpaths.empty()) {
    // Expand the objects' fields like read_json does: json_transform needs the structure as a
    // constant, so it is inferred from the documents first.
    MR_ASSIGN_OR_RETURN(
        auto structure,
        engine::QueryTextRows(
            sniff, "SELECT CAST(json_group_structure(doc) AS VARCHAR) FROM " + rows + " AS r"));
    if (structure.empty() || structure[0].empty() || structure[0][0].empty()) {
      return Status::InvalidArgument("no JSON document found at \"json_root\" " + json.json_root);
    }
    return "(SELECT unnest(json_transform(doc, " + QuoteLiteral(structure[0][0]) +
           "), recursive := false)" + partitions + " FROM " + rows + ")";
  }
  const std::vector<std::string>& paths = json.jsonpaths;
  std::string select = "(SELECT ";
  for (size_t i = 0; i < paths.size(); ++i) {
    if (i > 0) select += ", ";
    select += "json_extract_string(doc, " + QuoteLiteral(paths[i]) + ") AS " +
              engine::QuoteIdentifier(LastSegment(paths[i]));
  }
  return select + partitions + " FROM " + rows + ")";
}

}  // namespace

bool PlainJson(const FileFunctionOptions& options) {
  return options.format == Format::kJson && options.json.json_root.empty() &&
         options.json.jsonpaths.empty();
}

Result<std::string> BuildReadSql(const FileFunctionOptions& options,
                                 const std::vector<std::string>& files, engine::Connection& sniff,
                                 const ReadSqlOptions& read) {
  if (files.empty()) return Status::InvalidArgument("no files to read");
  const std::string& file_column = read.file_column;
  switch (options.format) {
    case Format::kCsv:
    case Format::kCsvWithNames:
    case Format::kCsvWithNamesAndTypes:
      return BuildCsvSql(options, files, file_column);
    case Format::kJson:
      if (!file_column.empty()) {
        return Status::NotSupported("a file column is not available for json");
      }
      return BuildJsonSql(options, files, sniff, read.json_columns);
    case Format::kParquet:
      return "(SELECT *" + FileColumnSql(file_column) + " FROM read_parquet(" + FileList(files) +
             HiveSql(options) + "))";
  }
  return Status::Internal("unknown format");
}

Result<std::string> DetectJsonColumns(const FileFunctionOptions& options, const std::string& file,
                                      engine::Connection& sniff,
                                      const std::map<std::string, std::string>& wanted) {
  if (!PlainJson(options)) return std::string();
  MR_ASSIGN_OR_RETURN(std::string reader, BuildJsonSql(options, {file}, sniff, ""));
  MR_ASSIGN_OR_RETURN(auto described,
                      engine::QueryTextRows(sniff,
                                            "SELECT column_name, column_type FROM (DESCRIBE "
                                            "SELECT * FROM " +
                                                reader + ")"));
  if (described.empty()) return std::string();
  std::string columns = "{";
  for (const auto& row : described) {
    // The path partition columns come from the directories, not the documents.
    if (std::any_of(options.path_partition_keys.begin(), options.path_partition_keys.end(),
                    [&](const std::string& key) { return EqualsIgnoreCase(key, row[0]); })) {
      continue;
    }
    // Only flat columns carry over to other files: a field null in every sampled row is typed
    // JSON (a later file's strings would keep their quotes), and nested types would drop the
    // nested fields the first file lacks. Those files are detected one by one.
    std::string type = row[1];
    auto want = wanted.find(ToLower(row[0]));
    if (want != wanted.end() &&
        ((want->second == "HUGEINT" && (type == "BIGINT" || type == "UBIGINT")) ||
         (want->second.starts_with("MAP(") && type.starts_with("STRUCT(")))) {
      type = want->second;
    } else {
      for (std::string_view nested : {"JSON", "STRUCT", "MAP", "UNION", "[", "NULL"}) {
        if (type.find(nested) != std::string::npos) return std::string();
      }
    }
    if (columns.size() > 1) columns += ", ";
    columns += QuoteLiteral(row[0]) + ": " + QuoteLiteral(type);
  }
  return columns + "}";
}

Result<bool> HoldsNoRecord(const FileFunctionOptions& options, const std::string& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return Status::IoError("cannot read '" + path + "': " + ec.message());
  if (size == 0) return true;
  if (options.format == Format::kJson || options.format == Format::kParquet) return false;
  MR_ASSIGN_OR_RETURN(std::vector<std::string> first,
                      ReadFirstRecord(path, options.csv, options.csv.skip_lines));
  return first.empty();
}

Result<std::vector<std::string>> CsvShape(const FileFunctionOptions& options,
                                          const std::string& path) {
  MR_ASSIGN_OR_RETURN(std::vector<std::string> first, FirstRecordOf(options, path));
  return ShapeOf(options, std::move(first));
}

Result<std::vector<std::string>> CsvShapeIn(const FileFunctionOptions& options,
                                            std::string_view bytes, const std::string& path) {
  MR_ASSIGN_OR_RETURN(std::vector<std::string> first,
                      RecordThere(path, ReadFirstRecord(path, nullptr, std::string(bytes),
                                                        options.csv, options.csv.skip_lines)));
  return ShapeOf(options, std::move(first));
}

}  // namespace millrace::load
