#include "load/record_count.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace millrace::load {
namespace {

constexpr size_t kBlock = 1 << 16;

struct CloseFile {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

int64_t CsvHeaderLines(Format format, const CsvOptions& csv) {
  int64_t lines = csv.skip_lines;
  if (format == Format::kCsvWithNames) lines += 1;
  if (format == Format::kCsvWithNamesAndTypes) lines += 2;
  return lines;
}

Result<int64_t> CountCsvRecords(const std::string& path, const CsvOptions& csv,
                                int64_t header_lines) {
  std::unique_ptr<std::FILE, CloseFile> file(std::fopen(path.c_str(), "rb"));
  if (!file) return Status::IoError("cannot read '" + path + "'");
  const char end_char = csv.line_delimiter.empty() ? '\n' : csv.line_delimiter.back();
  const char quote = csv.enclose.empty() ? (csv.trim_double_quotes ? '"' : '\0') : csv.enclose[0];
  const char escape = csv.escape.empty() ? '\0' : csv.escape[0];
  const std::string& sep = csv.column_separator;
  std::vector<char> block(kBlock);
  int64_t records = 0;
  int64_t lines_to_skip = header_lines;
  bool content = false;     // the current line has a byte other than \r
  bool quoted = false;      // inside a quoted field
  bool field_start = true;  // the next byte starts a field
  bool escaped = false;     // the previous byte was the escape character, inside quotes
  size_t sep_matched = 0;   // bytes of a multi-byte separator matched so far
  while (true) {
    const size_t got = std::fread(block.data(), 1, block.size(), file.get());
    if (got == 0) break;
    const char* data = block.data();
    if (quote == '\0' && sep.size() == 1) {
      // No quotes: a record per line end; only blank lines need a look.
      for (size_t i = 0; i < got;) {
        const void* found = std::memchr(data + i, end_char, got - i);
        const size_t end =
            found == nullptr ? got : static_cast<size_t>(static_cast<const char*>(found) - data);
        for (size_t k = i; k < end && !content; ++k)
          content = data[k] != '\r';
        if (found == nullptr) break;
        if (lines_to_skip > 0) {
          --lines_to_skip;
        } else if (content) {
          ++records;
        }
        content = false;
        i = end + 1;
      }
      continue;
    }
    for (size_t i = 0; i < got; ++i) {
      const char c = data[i];
      if (quoted) {
        if (escaped) {
          escaped = false;
        } else if (escape != '\0' && escape != quote && c == escape) {
          escaped = true;
        } else if (c == quote) {
          quoted = false;  // a doubled quote reopens at once: "" toggles twice
        }
        continue;
      }
      if (c == end_char) {
        if (lines_to_skip > 0) {
          --lines_to_skip;
        } else if (content) {
          ++records;
        }
        content = false;
        field_start = true;
        sep_matched = 0;
        continue;
      }
      if (c != '\r') content = true;
      if (c == quote && field_start && lines_to_skip == 0) {
        quoted = true;
        field_start = false;
        continue;
      }
      // A doubled quote inside a quoted field: the quote that closed it opens it again.
      if (c == quote && !field_start && i > 0 && data[i - 1] == quote) {
        quoted = true;
        continue;
      }
      sep_matched = c == sep[sep_matched] ? sep_matched + 1 : (c == sep[0] ? 1 : 0);
      field_start = sep_matched == sep.size();
      if (field_start) sep_matched = 0;
    }
  }
  if (std::ferror(file.get())) return Status::IoError("cannot read '" + path + "'");
  if (content && lines_to_skip == 0) ++records;  // the last record, without its line end
  return records;
}

std::optional<int64_t> JsonRecords(const JsonCounts& counts, const JsonOptions& json) {
  if (!json.json_root.empty() || !json.jsonpaths.empty() || counts.top_scalar) return std::nullopt;
  if (counts.top_values == 1 && counts.top_array) return counts.array_elements;
  if (json.strip_outer_array || counts.top_array) return std::nullopt;
  return counts.top_values;
}

}  // namespace millrace::load
