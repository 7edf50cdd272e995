#include "load/path_partition.h"

#include <filesystem>

#include "common/strings.h"
#include "load/bad_file.h"

namespace millrace::load {

Result<std::vector<std::string>> ParsePathPartitionKeys(std::string_view text) {
  const std::string shape =
      "\"path_partition_keys\" must be column names separated by commas "
      "(\"city,year\"), got '" +
      std::string(text) + "'";
  std::vector<std::string> keys;
  for (std::string_view part : SplitString(text, ',')) {
    const std::string key(Trim(part));
    if (key.empty()) return Status::InvalidArgument(shape + ": a name is empty");
    if (key.find_first_of("=/\\") != std::string::npos) {
      return Status::InvalidArgument(shape + ": '" + key + "' holds '=', '/' or '\\'");
    }
    for (const std::string& seen : keys) {
      if (EqualsIgnoreCase(seen, key)) {
        return Status::InvalidArgument(shape + ": '" + key + "' is given twice");
      }
    }
    keys.push_back(key);
  }
  return keys;
}

Result<std::vector<std::string>> PathPartitionValues(std::string_view path,
                                                     const std::vector<std::string>& keys) {
  std::vector<std::string_view> directories = SplitString(path, '/');
  if (!directories.empty()) directories.pop_back();  // the file's own name
  std::vector<std::string> values;
  for (const std::string& key : keys) {
    std::optional<std::string_view> value;
    for (std::string_view directory : directories) {
      const size_t eq = directory.find('=');
      if (eq != std::string_view::npos && EqualsIgnoreCase(directory.substr(0, eq), key)) {
        value = directory.substr(eq + 1);  // the last one wins, as the deepest directory
      }
    }
    if (!value) {
      return BadFileError(
          Status::InvalidArgument("path_partition_keys: the path has no '" + key +
                                  "=...' directory to read column " + key + " from"),
          BadFile::kPartitionNotInPath);
    }
    if (value->empty() || *value == "." || *value == "..") {
      return BadFileError(
          Status::InvalidArgument("path_partition_keys: the value '" + std::string(*value) +
                                  "' of " + key + " in the path is not one Millrace can read"),
          BadFile::kPartitionNotInPath);
    }
    values.emplace_back(*value);
  }
  return values;
}

Result<std::string> LinkPartitioned(const std::string& readable,
                                    const std::vector<std::string>& keys,
                                    const std::vector<std::string>& values,
                                    const std::string& dir) {
  std::filesystem::path at(dir);
  for (size_t i = 0; i < keys.size(); ++i)
    at /= keys[i] + "=" + values[i];
  std::error_code ec;
  std::filesystem::create_directories(at, ec);
  if (ec) return Status::IoError("cannot create " + at.string() + ": " + ec.message());
  at /= std::filesystem::path(readable).filename();
  std::filesystem::create_symlink(std::filesystem::absolute(readable), at, ec);
  if (ec)
    return Status::IoError("cannot link " + readable + " at " + at.string() + ": " + ec.message());
  return at.string();
}

}  // namespace millrace::load
