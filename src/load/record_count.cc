#include "load/record_count.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "common/stdio_file.h"

namespace millrace::load {
namespace {

constexpr size_t kBlock = 1 << 16;

// True when the bytes before data[i] are `sep`: a field starts at i. `tail` holds the bytes of
// the previous block for a separator that spans the boundary.
bool EndsWith(const std::string& tail, const char* data, size_t i, const std::string& sep) {
  if (i >= sep.size()) return std::memcmp(data + i - sep.size(), sep.data(), sep.size()) == 0;
  const std::string before = tail + std::string(data, i);
  return before.size() >= sep.size() &&
         before.compare(before.size() - sep.size(), sep.size(), sep) == 0;
}

}  // namespace

int64_t CsvHeaderLines(Format format, const CsvOptions& csv) {
  int64_t lines = csv.skip_lines;
  if (format == Format::kCsvWithNames) lines += 1;
  if (format == Format::kCsvWithNamesAndTypes) lines += 2;
  return lines;
}

Result<int64_t> CountCsvRecords(const std::string& path, const CsvOptions& csv,
                                int64_t header_lines) {
  StdioFile file = OpenStdio(path, "rb");
  if (!file) return Status::IoError("cannot read '" + path + "'");
  const char end_char = csv.line_delimiter.empty() ? '\n' : csv.line_delimiter.back();
  const char quote = csv.enclose.empty() ? (csv.trim_double_quotes ? '"' : '\0') : csv.enclose[0];
  const char escape = csv.escape.empty() ? '\0' : csv.escape[0];
  const std::string& sep = csv.column_separator;
  std::vector<char> block(kBlock);
  int64_t records = 0;
  int64_t lines_to_skip = header_lines;
  bool content = false;      // the current line has a byte other than \r
  bool quoted = false;       // inside a quoted field
  bool after_quote = false;  // the previous byte closed a quoted field
  bool escaped = false;      // the previous byte was the escape character, inside quotes
  std::string tail;          // the last bytes of the previous block (see EndsWith)
  while (true) {
    const size_t got = std::fread(block.data(), 1, block.size(), file.get());
    if (got == 0) break;
    const char* data = block.data();
    if (quote == '\0') {
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
          quoted = false;  // a doubled quote opens again just below: "" toggles twice
          after_quote = true;
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
        after_quote = false;
        tail.clear();
        continue;
      }
      if (c == quote && lines_to_skip == 0 &&
          (after_quote || !content || EndsWith(tail, data, i, sep))) {
        quoted = true;
        content = true;
        continue;
      }
      after_quote = false;
      if (c != '\r') content = true;
    }
    // The bytes a separator before the next block's first byte may span.
    tail.append(data + (got > sep.size() ? got - sep.size() : 0), std::min(got, sep.size()));
    if (tail.size() > sep.size()) tail.erase(0, tail.size() - sep.size());
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
