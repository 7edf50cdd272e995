// Parameters of the S3() and local() table functions, declared once.
//
// The table below (FileFunctionParams) is the single declaration of every parameter: the
// parser reads it to accept or reject keys, the validator to check values, and
// docs/table_functions.md is generated from it (a test keeps the two in sync).
//
// Contract
// - ParseFileFunctionArgs accepts the Doris parameter names of SPEC section 2. An unknown key
//   is INVALID_ARGUMENT naming it and listing the supported keys; a bad value names the key and
//   the accepted values. Secrets (s3.secret_key, s3.session_token) are registered with the
//   logger as soon as they are parsed, so they are masked everywhere.
// - "jsonpaths" is parsed here (ParseJsonPaths), so a malformed value fails the statement that
//   names it, not the first load.
// - local(): `file_path` is an absolute path or glob; Doris's `backend_id` is accepted and
//   ignored (Millrace has one node).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/param_spec.h"
#include "common/result.h"
#include "s3/s3_client.h"
#include "sql/doris_table_functions.h"

namespace millrace::load {

// kCdcStream is a change stream (cdc_stream(...)): the job layer hands it to the change source
// factory (job_plan.h); file readers never see it.
enum class SourceKind { kS3, kLocal, kCdcStream };

// S3()'s and local()'s parameters are ParamSpecs (common/param_spec.h) whose scopes are these.
inline constexpr uint8_t kS3Scope = 1;
inline constexpr uint8_t kLocalScope = 2;
using millrace::ParamSpec;
using millrace::ParamType;

// Keys Doris accepts that only mean something inside Doris, refused with the reason.
struct RefusedParam {
  std::string_view name;
  std::string_view reason;
};
const std::vector<RefusedParam>& RefusedFileFunctionParams();

// True when `key` (any alias, any case) names a credential of S3() or local() (the access
// key, the secret key, the session token): never shown, in a view, a log line or SHOW CREATE.
bool IsSecretParam(std::string_view key);

const std::vector<ParamSpec>& FileFunctionParams();

enum class Format { kCsv, kCsvWithNames, kCsvWithNamesAndTypes, kJson, kParquet };
enum class Compression { kPlain, kGzip, kZstd, kBzip2, kLz4Frame, kDeflate };

std::string_view FormatName(Format format);
std::string_view CompressionName(Compression compression);
// Infers compression from a file name suffix (.gz, .zst, .bz2, .lz4, .deflate); plain otherwise.
Compression CompressionFromSuffix(std::string_view path);

// A column of "csv_schema": its name and the DuckDB type it is read as.
struct CsvColumn {
  std::string name;
  std::string type;  // INTEGER, DECIMAL(38,10), VARCHAR, ...
};

struct CsvOptions {
  std::string column_separator = "\t";
  std::string line_delimiter = "\n";
  std::string enclose;  // "" : no quote character (Doris default)
  std::string escape;
  bool trim_double_quotes = false;
  int64_t skip_lines = 0;
  // csv_schema: the columns' names and types, in file order; empty for c1..cN (or the header's
  // names), all VARCHAR.
  std::vector<CsvColumn> schema;
};

struct JsonOptions {
  bool read_json_by_line = true;
  bool strip_outer_array = false;
  std::string json_root;  // "$.data" style; "" for the document itself
  // The paths of "jsonpaths" ('["$.id", "$.user.name"]'), in order; empty for all fields.
  std::vector<std::string> jsonpaths;
  bool num_as_string = false;  // numbers read as their text (json_numbers.h)
};

struct FileFunctionOptions {
  SourceKind kind = SourceKind::kS3;
  std::string pattern;  // s3://bucket/glob, or an absolute local path glob
  Format format = Format::kCsv;
  std::optional<Compression> compression;  // nullopt: inferred per file from its suffix
  // The most bytes one compressed file may expand to; nullopt: DecompressionBudget's default.
  std::optional<uint64_t> max_decompressed_bytes;
  CsvOptions csv;
  JsonOptions json;
  // path_partition_keys: columns read from key=value directories of each file's path
  // (path_partition.h), after the file's own columns.
  std::vector<std::string> path_partition_keys;
  s3::S3Config s3;  // for kS3 (s3.connection.timeout and .request.timeout in its retry policy)
  // s3.connection.maximum: most downloads of one task at once (within the server's own bound).
  std::optional<int> max_connections;
};

Result<FileFunctionOptions> ParseFileFunctionArgs(SourceKind kind, const sql::DorisArgs& args);

// The value of "csv_schema" ("k1:int;k2:decimal(38,10);k3:varchar(20)"): Doris's types
// mapped to DuckDB's. INVALID_ARGUMENT naming "csv_schema", the value and what is wrong (a
// field without ':', a name given twice, a type Doris's csv_schema does not take).
Result<std::vector<CsvColumn>> ParseCsvSchema(std::string_view text);

// The value of "jsonpaths": a JSON array of one or more non-empty strings, escapes decoded
// (["$.\"a b\""] is the path $."a b"). Anything else is INVALID_ARGUMENT naming "jsonpaths",
// the value and what is wrong (ParseFileFunctionArgs adds the function's name).
Result<std::vector<std::string>> ParseJsonPaths(std::string_view text);

// The parameter table as Markdown (for docs/table_functions.md).
std::string FileFunctionParamsMarkdown();

}  // namespace millrace::load
