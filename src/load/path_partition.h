// Doris's "path_partition_keys": columns whose values are read from `key=value` directories of
// each file's path (s3://bucket/events/city=paris/year=2026/a.csv gives city 'paris' and year
// '2026'), as text.
//
// The values reach DuckDB through its own hive partitioning: each fetched file is linked under
// a directory tree of the wanted keys only (<work>/p<i>/city=paris/year=2026/<file>), and the
// readers are told to read it (reader_sql.h). Directories of the source path that are not
// wanted never appear, and neither does anything of the work directory.
//
// Contract
// - ParsePathPartitionKeys: "city, year" -> {"city", "year"}. INVALID_ARGUMENT naming
//   "path_partition_keys" for an empty name (or list), a name given twice (in any case), or one
//   holding '=', '/' or '\'.
// - PathPartitionValues: for each key, the value of the last directory `key=value` of `path`
//   (the file's own name is not a directory), the key matched in any case. A key the path has
//   no directory for is INVALID_ARGUMENT with BadFile::kPartitionNotInPath, naming the key; a
//   value that would not survive as a directory name ("", ".", "..") likewise.
// - LinkPartitioned: makes <dir>/<key>=<value>/.../<file name of readable> a symbolic link to
//   `readable` and returns its path; IO_ERROR naming what could not be made.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace millrace::load {

Result<std::vector<std::string>> ParsePathPartitionKeys(std::string_view text);

Result<std::vector<std::string>> PathPartitionValues(std::string_view path,
                                                     const std::vector<std::string>& keys);

Result<std::string> LinkPartitioned(const std::string& readable,
                                    const std::vector<std::string>& keys,
                                    const std::vector<std::string>& values, const std::string& dir);

}  // namespace millrace::load
