#include "load/read_error.h"

#include <string_view>

#include "common/strings.h"

namespace millrace::load {
namespace {

// Where a path quoted in an error ends.
bool EndsPath(char c) {
  return c == ' ' || c == '\'' || c == '"' || c == '\n' || c == ',' || c == ')' || c == ']';
}

std::string ReplaceWorkPaths(std::string text, const std::string& key,
                             const std::vector<std::string>& work_paths) {
  for (const std::string& work : work_paths) {
    if (work.empty() || work == key) continue;
    for (size_t at = text.find(work); at != std::string::npos; at = text.find(work, at)) {
      size_t end = at + work.size();
      while (end < text.size() && !EndsPath(text[end]))
        ++end;
      text.replace(at, end - at, key);
      at += key.size();
    }
  }
  return text;
}

// DuckDB's appendices: from its query context ("LINE 1: ...") or its option dump on, nothing
// is for the user.
bool EndsMessage(std::string_view line) {
  return line.starts_with("LINE ") || line.starts_with("  file = ");
}

std::string Cut(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  return std::string(Utf8Prefix(text, max_bytes)) + "... (" + std::to_string(text.size()) +
         " bytes)";
}

}  // namespace

Status DescribeReadError(const Status& error, const std::string& key,
                         const std::vector<std::string>& work_paths) {
  if (error.ok()) return error;
  // Valid UTF-8 first: a message quotes bytes of the file (a value, a column name), and the
  // ledger keeps it in a VARCHAR.
  const std::string text = ReplaceWorkPaths(ToValidUtf8(error.message()), key, work_paths);
  std::string kept;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    if (EndsMessage(line)) break;
    // Its advice names options a job cannot set.
    if (!line.empty() && !line.starts_with("Possible Solution:")) {
      if (!kept.empty()) kept += '\n';
      kept += Cut(line, kMaxLineBytes);
    }
    start = end + 1;
  }
  return Status(error.code(), "file " + key + ": " + Cut(kept, kMaxMessageBytes))
      .WithDetail(error.detail());
}

}  // namespace millrace::load
