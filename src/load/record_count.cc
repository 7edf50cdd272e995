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

// CountCsvRecords over bytes fed in blocks, in order.
class CsvRecordCounter {
 public:
  CsvRecordCounter(const CsvOptions& csv, int64_t header_lines)
      : end_char_(csv.line_delimiter.empty() ? '\n' : csv.line_delimiter.back()),
        quote_(csv.enclose.empty() ? (csv.trim_double_quotes ? '"' : '\0') : csv.enclose[0]),
        escape_(csv.escape.empty() ? '\0' : csv.escape[0]),
        sep_(csv.column_separator),
        lines_to_skip_(header_lines) {}

  void Feed(const char* data, size_t got) {
    if (quote_ == '\0') {
      // No quotes: a record per line end; only blank lines need a look.
      for (size_t i = 0; i < got;) {
        const void* found = std::memchr(data + i, end_char_, got - i);
        const size_t end =
            found == nullptr ? got : static_cast<size_t>(static_cast<const char*>(found) - data);
        for (size_t k = i; k < end && !content_; ++k)
          content_ = data[k] != '\r';
        if (found == nullptr) break;
        EndLine();
        i = end + 1;
      }
      return;
    }
    for (size_t i = 0; i < got; ++i) {
      const char c = data[i];
      if (quoted_) {
        if (escaped_) {
          escaped_ = false;
        } else if (escape_ != '\0' && escape_ != quote_ && c == escape_) {
          escaped_ = true;
        } else if (c == quote_) {
          quoted_ = false;  // a doubled quote opens again just below: "" toggles twice
          after_quote_ = true;
        }
        continue;
      }
      if (c == end_char_) {
        EndLine();
        after_quote_ = false;
        tail_.clear();
        continue;
      }
      if (c == quote_ && lines_to_skip_ == 0 &&
          (after_quote_ || !content_ || EndsWith(tail_, data, i, sep_))) {
        quoted_ = true;
        content_ = true;
        continue;
      }
      after_quote_ = false;
      if (c != '\r') content_ = true;
    }
    // The bytes a separator before the next block's first byte may span.
    tail_.append(data + (got > sep_.size() ? got - sep_.size() : 0), std::min(got, sep_.size()));
    if (tail_.size() > sep_.size()) tail_.erase(0, tail_.size() - sep_.size());
  }

  int64_t Finish() const {
    // The last record, without its line end.
    return records_ + (content_ && lines_to_skip_ == 0 ? 1 : 0);
  }

 private:
  void EndLine() {
    if (lines_to_skip_ > 0) {
      --lines_to_skip_;
    } else if (content_) {
      ++records_;
    }
    content_ = false;
  }

  const char end_char_;
  const char quote_;
  const char escape_;
  const std::string sep_;
  int64_t records_ = 0;
  int64_t lines_to_skip_;
  bool content_ = false;      // the current line has a byte other than \r
  bool quoted_ = false;       // inside a quoted field
  bool after_quote_ = false;  // the previous byte closed a quoted field
  bool escaped_ = false;      // the previous byte was the escape character, inside quotes
  std::string tail_;          // the last bytes of the previous block (see EndsWith)
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
  StdioFile file = OpenStdio(path, "rb");
  if (!file) return Status::IoError("cannot read '" + path + "'");
  CsvRecordCounter counter(csv, header_lines);
  std::vector<char> block(kBlock);
  while (true) {
    const size_t got = std::fread(block.data(), 1, block.size(), file.get());
    if (got == 0) break;
    counter.Feed(block.data(), got);
  }
  if (std::ferror(file.get())) return Status::IoError("cannot read '" + path + "'");
  return counter.Finish();
}

int64_t CountCsvRecordsIn(std::string_view bytes, const CsvOptions& csv, int64_t header_lines) {
  CsvRecordCounter counter(csv, header_lines);
  counter.Feed(bytes.data(), bytes.size());
  return counter.Finish();
}

std::optional<int64_t> JsonRecords(const JsonCounts& counts, const JsonOptions& json) {
  if (!json.json_root.empty() || !json.jsonpaths.empty() || counts.top_scalar) return std::nullopt;
  if (counts.top_values == 1 && counts.top_array) return counts.array_elements;
  if (json.strip_outer_array || counts.top_array) return std::nullopt;
  return counts.top_values;
}

}  // namespace millrace::load
