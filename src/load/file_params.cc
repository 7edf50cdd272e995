#include "load/file_params.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "common/json.h"
#include "common/logging.h"
#include "common/strings.h"
#include "load/path_partition.h"

namespace millrace::load {
namespace {

constexpr uint8_t kS3 = kS3Scope;
constexpr uint8_t kLocal = kLocalScope;

uint8_t ScopeOf(SourceKind kind) {
  return kind == SourceKind::kS3 ? kS3 : kLocal;
}

const ParamSpec* FindSpec(std::string_view name, SourceKind kind) {
  return FindParam(FileFunctionParams(), name, ScopeOf(kind));
}

std::string FunctionName(SourceKind kind) {
  return kind == SourceKind::kS3 ? "S3()" : "local()";
}

// Doris writes separators with escapes ("\t", "\n", "\x01"); turn them into bytes.
Result<std::string> Unescape(std::string_view key, std::string_view value) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '\\' || i + 1 == value.size()) {
      out += value[i];
      continue;
    }
    const char next = value[++i];
    switch (next) {
      case 't':
        out += '\t';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case '\\':
        out += '\\';
        break;
      case 'x': {
        if (i + 2 >= value.size()) {
          return Status::InvalidArgument("\"" + std::string(key) + "\": bad \\x escape in '" +
                                         std::string(value) + "'");
        }
        unsigned byte = 0;
        auto [ptr, ec] = std::from_chars(value.data() + i + 1, value.data() + i + 3, byte, 16);
        if (ec != std::errc() || ptr != value.data() + i + 3) {
          return Status::InvalidArgument("\"" + std::string(key) + "\": bad \\x escape in '" +
                                         std::string(value) + "'");
        }
        out += static_cast<char>(byte);
        i += 2;
        break;
      }
      default:
        out += '\\';
        out += next;
        break;
    }
  }
  return out;
}

}  // namespace

const std::vector<ParamSpec>& FileFunctionParams() {
  static const std::vector<ParamSpec> kParams = {
      {.name = "uri",
       .description = "s3://bucket/key pattern; globs * ? [...] {a,b}",
       .scopes = kS3,
       .required = true},
      {.name = "file_path",
       .description = "absolute local path pattern; globs * ? [...] {a,b}",
       .scopes = kLocal,
       .required = true},
      {.name = "backend_id",
       .description = "accepted for Doris compatibility and ignored",
       .scopes = kLocal},
      {.name = "format",
       .type = ParamType::kChoice,
       .default_value = "csv",
       .description = "file format",
       .scopes = kS3 | kLocal,
       .choices = {"csv", "csv_with_names", "csv_with_names_and_types", "json", "parquet"}},
      {.name = "column_separator",
       .default_value = "\\t",
       .description = "CSV field separator (escapes \\t, \\x01)",
       .scopes = kS3 | kLocal},
      {.name = "line_delimiter",
       .default_value = "\\n",
       .description = "CSV line delimiter: \\n, \\r\\n or \\r",
       .scopes = kS3 | kLocal},
      {.name = "enclose",
       .description = "CSV quote character; none by default",
       .scopes = kS3 | kLocal},
      {.name = "escape",
       .description = "CSV escape character inside enclosed fields",
       .scopes = kS3 | kLocal},
      {.name = "trim_double_quotes",
       .type = ParamType::kBool,
       .default_value = "false",
       .description = "strip the outer double quotes of each CSV field",
       .scopes = kS3 | kLocal},
      {.name = "skip_lines",
       .type = ParamType::kInt,
       .default_value = "0",
       .description = "lines skipped at the start of each CSV file",
       .scopes = kS3 | kLocal},
      {.name = "csv_schema",
       .description =
           "CSV: names and types of the columns, name1:type1;name2:type2 (tinyint, smallint, int, "
           "bigint, largeint, float, double, decimal(p,s), date, datetime, char, varchar, string, "
           "boolean); a value that does not fit its type, or a column the file lacks, reads as "
           "NULL",
       .scopes = kS3 | kLocal},
      {.name = "enable_text_validate_utf8",
       .type = ParamType::kBool,
       .default_value = "true",
       .description =
           "CSV: text must be UTF-8; accepted, and always so: a file that is not UTF-8 is refused "
           "(false is accepted too, and still validates: a DuckDB VARCHAR holds UTF-8 only)",
       .scopes = kS3 | kLocal},
      {.name = "compress_type",
       .type = ParamType::kChoice,
       .description = "compression; inferred from the file suffix when absent",
       .scopes = kS3 | kLocal,
       .choices = {"plain", "gz", "zstd", "bz2", "lz4frame", "deflate"}},
      {.name = "max_decompressed_bytes",
       .type = ParamType::kInt,
       .description =
           "most bytes one compressed file may expand to; none: 200 times its size, at least 256 "
           "MiB, and never more than the work directory's free space",
       .scopes = kS3 | kLocal},
      {.name = "read_json_by_line",
       .type = ParamType::kBool,
       .default_value = "true",
       .description = "JSON: one document per line",
       .scopes = kS3 | kLocal},
      {.name = "strip_outer_array",
       .type = ParamType::kBool,
       .default_value = "false",
       .description = "JSON: the file is one array whose elements are the rows",
       .scopes = kS3 | kLocal},
      {.name = "json_root",
       .description = "JSON: path of the element holding the rows ($.a.b)",
       .scopes = kS3 | kLocal},
      {.name = "jsonpaths",
       .description = "JSON: paths of the fields to read, e.g. [\"$.id\", \"$.user.name\"]",
       .scopes = kS3 | kLocal},
      {.name = "num_as_string",
       .type = ParamType::kBool,
       .default_value = "false",
       .description =
           "JSON: numbers read as the text of their digits (no rounding through a double); the "
           "INSERT casts them into the column's type",
       .scopes = kS3 | kLocal},
      {.name = "path_partition_keys",
       .description =
           "columns read from key=value directories of each file's path, as text: \"city,year\" "
           "reads city and year from .../city=paris/year=2026/a.csv; a file whose path lacks one "
           "is a bad file",
       .scopes = kS3 | kLocal},
      {.name = "fuzzy_parse",
       .type = ParamType::kBool,
       .default_value = "false",
       .description =
           "JSON: Doris's parse-speed hint (fields in the same order in every document); "
           "accepted, the rows are the same without it",
       .scopes = kS3 | kLocal},
      {.name = "s3.endpoint",
       .description =
           "http(s)://host:port of the S3 service; a bare host:port is http for an IP address or "
           "localhost, https for any other host",
       .scopes = kS3,
       .aliases = {"AWS_ENDPOINT", "endpoint", "aws.endpoint"}},
      {.name = "s3.region",
       .default_value = "us-east-1",
       .description = "S3 region",
       .scopes = kS3,
       .aliases = {"AWS_REGION", "region", "aws.region"}},
      {.name = "s3.access_key",
       .description = "access key (none: anonymous requests; the server's own environment never "
                      "signs)",
       .scopes = kS3,
       .secret = true,
       .aliases = {"AWS_ACCESS_KEY", "access_key"}},
      {.name = "s3.secret_key",
       .description = "secret key",
       .scopes = kS3,
       .secret = true,
       .aliases = {"AWS_SECRET_KEY", "secret_key"}},
      {.name = "s3.session_token",
       .description = "session token of temporary credentials",
       .scopes = kS3,
       .secret = true,
       .aliases = {"session_token"}},
      {.name = "use_path_style",
       .type = ParamType::kBool,
       .default_value = "false",
       .description =
           "path-style addressing (endpoint/bucket/key); an IP or localhost endpoint always is",
       .scopes = kS3,
       .aliases = {"s3.path-style-access"}},
      // Doris's connection settings reach the client; 0 would mean "never", so it is refused.
      {.name = "s3.connection.maximum",
       .type = ParamType::kInt,
       .description = "most connections (downloads) of one task at once, its read ahead of the "
                      "next batch included; the server's own bound still holds",
       .scopes = kS3,
       .min = 1},
      {.name = "s3.connection.timeout",
       .type = ParamType::kInt,
       .description = "milliseconds to establish a connection (none: 5000)",
       .scopes = kS3,
       .min = 1},
      {.name = "s3.connection.request.timeout",
       .type = ParamType::kInt,
       .description =
           "milliseconds a request may go without a byte moving before it is retried (none: "
           "30000)",
       .scopes = kS3,
       .min = 1},
      {.name = "force_parsing_by_standard_uri",
       .type = ParamType::kBool,
       .default_value = "false",
       .description = "accepted: Millrace always parses the uri as a standard s3://bucket/key",
       .scopes = kS3},
      {.name = "provider",
       .type = ParamType::kChoice,
       .default_value = "s3",
       .description = "the store's kind, as Doris scripts name it: any S3-compatible one is read "
                      "the same; azure is refused (Azure Blob Storage does not speak S3)",
       .scopes = kS3,
       .choices = {"s3", "oss", "cos", "obs", "bos", "gcp", "minio", "tos", "azure"}},
  };
  return kParams;
}

const std::vector<RefusedParam>& RefusedFileFunctionParams() {
  static const std::vector<RefusedParam> kRefused = {
      {"resource", "Doris resources are not kept here: give the endpoint and keys in S3()"},
      {"table_id", "it names a table of a Doris cluster"},
      {"s3.role_arn", "Millrace signs with the access key and secret key given, never a role"},
      {"s3.external_id", "Millrace signs with the access key and secret key given, never a role"},
      {"s3.credentials_provider_type",
       "Millrace signs with the access key and secret key given, or sends anonymous requests"},
  };
  return kRefused;
}

bool IsSecretParam(std::string_view key) {
  return millrace::IsSecretParam(FileFunctionParams(), key);
}

std::string_view FormatName(Format format) {
  switch (format) {
    case Format::kCsv:
      return "csv";
    case Format::kCsvWithNames:
      return "csv_with_names";
    case Format::kCsvWithNamesAndTypes:
      return "csv_with_names_and_types";
    case Format::kJson:
      return "json";
    case Format::kParquet:
      return "parquet";
  }
  return "csv";
}

std::string_view CompressionName(Compression compression) {
  switch (compression) {
    case Compression::kPlain:
      return "plain";
    case Compression::kGzip:
      return "gz";
    case Compression::kZstd:
      return "zstd";
    case Compression::kBzip2:
      return "bz2";
    case Compression::kLz4Frame:
      return "lz4frame";
    case Compression::kDeflate:
      return "deflate";
  }
  return "plain";
}

Compression CompressionFromSuffix(std::string_view path) {
  auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".gz") || ends_with(".gzip")) return Compression::kGzip;
  if (ends_with(".zst") || ends_with(".zstd")) return Compression::kZstd;
  if (ends_with(".bz2")) return Compression::kBzip2;
  if (ends_with(".lz4")) return Compression::kLz4Frame;
  if (ends_with(".deflate")) return Compression::kDeflate;
  return Compression::kPlain;
}

Result<FileFunctionOptions> ParseFileFunctionArgs(SourceKind kind, const sql::DorisArgs& given) {
  const std::string fn = FunctionName(kind);
  // Each key under the parameter's own name (keys match any alias, in any case); two keys for
  // one parameter are an error, as are the keys only Doris itself understands.
  sql::DorisArgs args;
  std::map<std::string_view, std::string> named_by;  // parameter -> the key that gave it
  for (const auto& [key, value] : given) {
    for (const RefusedParam& refused : RefusedFileFunctionParams()) {
      if (EqualsIgnoreCase(refused.name, key)) {
        return Status::InvalidArgument(fn + ": \"" + key +
                                       "\" is not supported: " + std::string(refused.reason));
      }
    }
    const ParamSpec* spec = FindSpec(key, kind);
    if (spec == nullptr) {
      args.emplace(key, value);  // reported below, by the user's name
      continue;
    }
    if (auto [it, fresh] = named_by.emplace(spec->name, key); !fresh) {
      return Status::InvalidArgument(fn + ": \"" + it->second + "\" and \"" + key +
                                     "\" name the same parameter (" + std::string(spec->name) +
                                     "); give it once");
    }
    args.emplace(std::string(spec->name), value);
  }
  // Validate every key and value against the table first, so errors name the user's key.
  ParamValues values;
  for (const auto& [key, value] : args) {
    const ParamSpec* spec = FindSpec(key, kind);
    if (spec == nullptr) {
      return Status::InvalidArgument(fn + ": unknown parameter \"" + key + "\"; supported: " +
                                     ParamNames(FileFunctionParams(), ScopeOf(kind)));
    }
    if (spec->secret) Logger::Default().AddSecret(value);
    // Formats Doris reads and Millrace does not: refused in Doris's own words.
    if (spec->name == "format") {
      for (std::string_view other : {"orc", "avro", "arrow", "hive_text", "wal"}) {
        if (EqualsIgnoreCase(value, other)) {
          return Status::InvalidArgument(fn + ": format:" + value + " is not supported.");
        }
      }
    }
    MR_RETURN_IF_ERROR(values.Add(*spec, key, value).WithContext(fn));
  }
  MR_RETURN_IF_ERROR(values.Complete(FileFunctionParams(), ScopeOf(kind)).WithContext(fn));
  auto get = [&](std::string_view key) { return values.Text(key); };
  auto get_bool = [&](std::string_view key) { return values.Bool(key); };
  auto get_int = [&](std::string_view key) { return values.Int(key); };
  FileFunctionOptions options;
  options.kind = kind;
  options.pattern = get(kind == SourceKind::kS3 ? "uri" : "file_path");
  if (options.pattern.empty()) {
    return Status::InvalidArgument(fn + ": \"" +
                                   std::string(kind == SourceKind::kS3 ? "uri" : "file_path") +
                                   "\" must not be empty");
  }
  if (kind == SourceKind::kS3) {
    MR_RETURN_IF_ERROR(s3::S3Uri::Parse(options.pattern).status().WithContext(fn + " \"uri\""));
  } else if (options.pattern.front() != '/') {
    return Status::InvalidArgument(fn + ": \"file_path\" must be an absolute path, got '" +
                                   options.pattern + "'");
  }

  const std::string format = get("format");
  if (format == "csv") options.format = Format::kCsv;
  if (format == "csv_with_names") options.format = Format::kCsvWithNames;
  if (format == "csv_with_names_and_types") options.format = Format::kCsvWithNamesAndTypes;
  if (format == "json") options.format = Format::kJson;
  if (format == "parquet") options.format = Format::kParquet;

  if (const std::string compress = get("compress_type"); !compress.empty()) {
    for (Compression c : {Compression::kPlain, Compression::kGzip, Compression::kZstd,
                          Compression::kBzip2, Compression::kLz4Frame, Compression::kDeflate}) {
      if (CompressionName(c) == compress) options.compression = c;
    }
  }

  if (const std::optional<int64_t> bound = get_int("max_decompressed_bytes")) {
    options.max_decompressed_bytes = static_cast<uint64_t>(*bound);
  }
  MR_ASSIGN_OR_RETURN(options.csv.column_separator,
                      Unescape("column_separator", get("column_separator")));
  MR_ASSIGN_OR_RETURN(options.csv.line_delimiter,
                      Unescape("line_delimiter", get("line_delimiter")));
  if (options.csv.column_separator.empty()) {
    return Status::InvalidArgument(fn + ": \"column_separator\" must not be empty");
  }
  const std::string& newline = options.csv.line_delimiter;
  if (newline != "\n" && newline != "\r\n" && newline != "\r") {
    return Status::InvalidArgument(fn + ": \"line_delimiter\" must be \\n, \\r\\n or \\r");
  }
  options.csv.enclose = get("enclose");
  options.csv.escape = get("escape");
  if (options.csv.enclose.size() > 1 || options.csv.escape.size() > 1) {
    return Status::InvalidArgument(fn + ": \"enclose\" and \"escape\" take one character");
  }
  options.csv.trim_double_quotes = get_bool("trim_double_quotes");
  options.csv.skip_lines = get_int("skip_lines").value_or(0);

  if (const std::string schema = get("csv_schema"); !schema.empty()) {
    auto parsed = ParseCsvSchema(schema);
    if (!parsed.ok()) return parsed.status().WithContext(fn);
    options.csv.schema = std::move(parsed).value();
  }

  if (const std::string keys = get("path_partition_keys"); !keys.empty()) {
    auto parsed = ParsePathPartitionKeys(keys);
    if (!parsed.ok()) return parsed.status().WithContext(fn);
    options.path_partition_keys = std::move(parsed).value();
  }

  options.json.read_json_by_line = get_bool("read_json_by_line");
  options.json.num_as_string = get_bool("num_as_string");
  options.json.strip_outer_array = get_bool("strip_outer_array");
  options.json.json_root = get("json_root");
  if (const std::string paths = get("jsonpaths"); !paths.empty()) {
    auto parsed = ParseJsonPaths(paths);
    if (!parsed.ok()) return parsed.status().WithContext(fn);
    options.json.jsonpaths = std::move(parsed).value();
  }

  if (kind == SourceKind::kS3) {
    options.s3.endpoint = get("s3.endpoint");
    options.s3.region = get("s3.region");
    options.s3.use_path_style = get_bool("use_path_style");
    const std::optional<int64_t> maximum = get_int("s3.connection.maximum");
    const std::optional<int64_t> connect = get_int("s3.connection.timeout");
    const std::optional<int64_t> request = get_int("s3.connection.request.timeout");
    if (maximum) options.max_connections = static_cast<int>(std::min<int64_t>(*maximum, 1 << 20));
    if (connect) options.s3.retry.connect_timeout = std::chrono::milliseconds(*connect);
    if (request) options.s3.retry.request_timeout = std::chrono::milliseconds(*request);
    if (get("provider") == "azure") {
      return Status::InvalidArgument(fn +
                                     ": \"provider\" = \"AZURE\" is not supported: Azure Blob "
                                     "Storage does not speak the S3 protocol, and Millrace reads "
                                     "S3-compatible stores only");
    }
    // Only what the statement gives signs its requests: the server's own credentials (its
    // environment) would let any user reach any endpoint it names with them.
    options.s3.credentials.access_key = get("s3.access_key");
    options.s3.credentials.secret_key = get("s3.secret_key");
    options.s3.credentials.session_token = get("s3.session_token");
    // Both or neither (anonymous, unsigned requests), as Doris checks them.
    if (options.s3.credentials.access_key.empty() != options.s3.credentials.secret_key.empty()) {
      return Status::InvalidArgument(fn + ": Both the access key and the secret key must be set.");
    }
  }
  return options;
}

Result<std::vector<CsvColumn>> ParseCsvSchema(std::string_view text) {
  // Doris's csv_schema types and the DuckDB types they read as.
  static const std::vector<std::pair<std::string_view, std::string_view>> kTypes = {
      {"tinyint", "TINYINT"}, {"smallint", "SMALLINT"}, {"int", "INTEGER"},
      {"bigint", "BIGINT"},   {"largeint", "HUGEINT"},  {"float", "FLOAT"},
      {"double", "DOUBLE"},   {"date", "DATE"},         {"datetime", "TIMESTAMP"},
      {"char", "VARCHAR"},    {"varchar", "VARCHAR"},   {"string", "VARCHAR"},
      {"boolean", "BOOLEAN"}};
  const std::string shape =
      "\"csv_schema\" must be name1:type1;name2:type2;..., got '" + std::string(text) + "'";
  std::vector<CsvColumn> columns;
  for (std::string_view part : SplitString(text, ';')) {
    const std::string field(Trim(part));
    if (field.empty()) continue;  // a trailing ';'
    const size_t colon = field.find(':');
    if (colon == std::string::npos) {
      return Status::InvalidArgument(shape + ": '" + field + "' has no ':' between name and type");
    }
    CsvColumn column{std::string(Trim(std::string_view(field).substr(0, colon))), ""};
    const std::string type = ToLower(Trim(std::string_view(field).substr(colon + 1)));
    if (column.name.empty()) return Status::InvalidArgument(shape + ": a column has no name");
    for (const CsvColumn& seen : columns) {
      if (EqualsIgnoreCase(seen.name, column.name)) {
        return Status::InvalidArgument(shape + ": column '" + column.name + "' is named twice");
      }
    }
    // decimal(p,s) keeps its precision and scale; char(n)/varchar(n) are text of any length.
    const std::string base = type.substr(0, type.find('('));
    if (base == "decimal" || base == "decimalv3") {
      int precision = 0;
      int scale = 0;
      char close = 0;
      if (std::sscanf(type.c_str() + base.size(), "(%d,%d%c", &precision, &scale, &close) != 3 ||
          close != ')' || precision < 1 || precision > 38 || scale < 0 || scale > precision) {
        return Status::InvalidArgument(shape + ": '" + type +
                                       "' is not decimal(p,s) with 1 <= p <= 38 and 0 <= s <= p");
      }
      column.type = "DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) + ")";
    } else if ((base == "char" || base == "varchar") || base == type) {
      for (const auto& [doris, duck] : kTypes) {
        if (base == doris) column.type = duck;
      }
    }
    if (column.type.empty()) {
      return Status::InvalidArgument(shape + ": type '" + type + "' of column '" + column.name +
                                     "' is not one of tinyint, smallint, int, bigint, largeint, "
                                     "float, double, decimal(p,s), date, datetime, char, "
                                     "varchar, string, boolean");
    }
    columns.push_back(std::move(column));
  }
  if (columns.empty()) return Status::InvalidArgument(shape + ": no column");
  return columns;
}

Result<std::vector<std::string>> ParseJsonPaths(std::string_view text) {
  const std::string shape =
      "\"jsonpaths\" must be a JSON array of strings such as "
      "[\"$.id\", \"$.user.name\"], got '" +
      std::string(text) + "'";
  auto doc = ParseJson(text);
  if (!doc.ok()) return doc.status().WithContext(shape);
  if (!doc->is_array()) {
    return Status::InvalidArgument(shape + ": it is of type " + std::string(doc->type_name()));
  }
  if (doc->empty()) return Status::InvalidArgument(shape + ": the array is empty");
  std::vector<std::string> paths;
  for (const nlohmann::json& path : *doc) {
    const std::string position = "element " + std::to_string(paths.size() + 1);
    if (!path.is_string()) {
      return Status::InvalidArgument(shape + ": " + position + " is of type " +
                                     std::string(path.type_name()) + ", not string");
    }
    if (path.get_ref<const std::string&>().empty()) {
      return Status::InvalidArgument(shape + ": " + position + " is empty");
    }
    paths.push_back(path.get<std::string>());
  }
  return paths;
}

std::string FileFunctionParamsMarkdown() {
  return ParamsMarkdown(FileFunctionParams(), "parameter", {{kS3, "S3()"}, {kLocal, "local()"}});
}

}  // namespace millrace::load
