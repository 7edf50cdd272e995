// Turning a batch of local files and the S3()/local() options into the DuckDB SELECT that reads
// them, with Doris's column conventions.
//
// Contract
// - BuildReadSql returns a parenthesized SELECT usable where a table stands. Columns:
//   csv -> c1..cN, all VARCHAR (as Doris); csv_with_names -> names from the header, VARCHAR;
//   csv_with_names_and_types -> names from line 1, line 2 (types) skipped, VARCHAR;
//   json -> the documents' fields with DuckDB's inferred types (json_root selects the element
//   holding the rows, jsonpaths selects fields named by their last path segment, a quoted
//   segment ($."full name") without its quotes);
//   parquet -> the file's schema. The schema comes from the first file; later files that do
//   not fit fail with DuckDB's error naming the file.
// - `sniff` is used to read the first file's shape; it runs no statement that writes.
// - ReadSqlOptions::file_column (csv formats and parquet): the SELECT has one more column, last,
//   of that name: the path of the file each row came from, as passed in `files`.
// - ReadSqlOptions::json_columns (json without json_root or jsonpaths): the columns to read, as
//   DetectJsonColumns returned them for another file, instead of DuckDB detecting them in each
//   file: fields are then taken by name (one missing reads as NULL, one not listed is ignored),
//   and the detection pass over every file is saved.
// - CsvShape is what BuildReadSql takes from a CSV file to read it: the number of fields of
//   its first record (csv) or the record itself (csv_with_names, _and_types). Files of equal
//   shape can be read by one SELECT exactly as each would be read alone. CsvShapeIn takes the
//   same from the file's bytes held in memory (`path` names it in errors).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engine/database.h"
#include "load/file_params.h"

namespace millrace::load {

struct ReadSqlOptions {
  std::string file_column;
  std::string json_columns;
};

Result<std::string> BuildReadSql(const FileFunctionOptions& options,
                                 const std::vector<std::string>& files, engine::Connection& sniff,
                                 const ReadSqlOptions& read = {});

// For json without json_root or jsonpaths: the columns DuckDB detects in `file` (names and
// types, as read_json's `columns` argument) when all are flat (no JSON, STRUCT, LIST, MAP or
// UNION type: a field null in every sampled row is typed JSON); "" otherwise and for other
// formats.
// `wanted` (lower-case field name -> DuckDB type, the target table's) corrects two guesses
// DuckDB's reader cannot get right from the values alone: a number past 64 bits it guessed
// BIGINT for a HUGEINT column, and an object it guessed a STRUCT for a MAP column. Such a
// field is read as the wanted type (and counts as flat).
Result<std::string> DetectJsonColumns(const FileFunctionOptions& options, const std::string& file,
                                      engine::Connection& sniff,
                                      const std::map<std::string, std::string>& wanted = {});

// True when the file at `path` holds no record to load: it is empty, or (CSV) holds nothing
// but its skipped lines and blank lines. Such a file loads 0 rows, without a reader.
Result<bool> HoldsNoRecord(const FileFunctionOptions& options, const std::string& path);
// JSON whose documents are the records, read by name into flat columns: no json_root or
// jsonpaths.
bool PlainJson(const FileFunctionOptions& options);
Result<std::vector<std::string>> CsvShape(const FileFunctionOptions& options,
                                          const std::string& path);
Result<std::vector<std::string>> CsvShapeIn(const FileFunctionOptions& options,
                                            std::string_view bytes, const std::string& path);

}  // namespace millrace::load
