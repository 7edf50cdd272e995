#include "load/json_nesting.h"

#include <array>
#include <cstring>
#include <fstream>
#include <vector>

#include "load/bad_file.h"

namespace millrace::load {
namespace {

constexpr size_t kBlock = 1 << 16;

// The bytes that matter outside strings.
constexpr std::array<bool, 256> Structural() {
  std::array<bool, 256> table{};
  for (unsigned char c : {'"', '[', ']', '{', '}', ','})
    table[c] = true;
  return table;
}
constexpr std::array<bool, 256> kStructural = Structural();

// The line (1-based) of byte `offset` of the file, and of its last byte other than whitespace
// before `offset`: read again only to word an error.
struct Lines {
  int64_t at = 1;
  int64_t last_content = 1;
};
Lines LinesUpTo(const std::string& path, uint64_t offset) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> block(kBlock);
  Lines lines;
  int64_t line = 1;
  uint64_t read = 0;
  while (in && read < offset) {
    in.read(block.data(), static_cast<std::streamsize>(std::min<uint64_t>(kBlock, offset - read)));
    const std::streamsize got = in.gcount();
    for (std::streamsize i = 0; i < got; ++i) {
      const char c = block[static_cast<size_t>(i)];
      if (c == '\n') {
        ++line;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        lines.last_content = line;
      }
    }
    read += static_cast<uint64_t>(got);
  }
  lines.at = line;
  return lines;
}

}  // namespace

Status CheckJsonNesting(const std::string& path, int max_depth, JsonCounts* counts) {
  JsonCounts seen;
  // The first top-level array: open, and whether an element has started in it.
  bool in_first_array = false;
  bool element_started = false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot open " + path + " to read it");
  std::vector<char> block(kBlock);
  int depth = 0;
  bool in_string = false;
  size_t carried_backslashes = 0;  // a run of them ending the previous block, inside a string
  uint64_t consumed = 0;           // bytes of the file before this block
  uint64_t outer_start = 0;        // where the outermost value still open began
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const size_t got = static_cast<size_t>(in.gcount());
    const char* data = block.data();
    size_t i = 0;
    while (i < got) {
      if (in_string) {
        // Strings are most of a document: jump to the next quote, then look behind it for the
        // backslashes that would escape it.
        const void* quote = std::memchr(data + i, '"', got - i);
        if (quote == nullptr) {
          size_t run = 0;
          while (run < got - i && data[got - 1 - run] == '\\')
            ++run;
          carried_backslashes = run == got - i ? carried_backslashes + run : run;
          i = got;
          break;
        }
        const size_t q = static_cast<size_t>(static_cast<const char*>(quote) - data);
        size_t run = 0;
        while (q - run > i && data[q - 1 - run] == '\\')
          ++run;
        if (q - run == i) run += carried_backslashes;
        carried_backslashes = 0;
        i = q + 1;
        if (run % 2 == 0) in_string = false;
        continue;
      }
      const unsigned char c = static_cast<unsigned char>(data[i]);
      if ((depth == 0 || (depth == 1 && in_first_array)) && c != ' ' && c != '\n' && c != '\r' &&
          c != '\t') {
        // Counting happens only between documents and between the elements of the first
        // top-level array, where a file spends few bytes.
        if (depth == 0 && c != ']' && c != '}' && c != ',') {
          ++seen.top_values;
          seen.top_array = seen.top_array || c == '[';
          seen.top_scalar = seen.top_scalar || (c != '{' && c != '[');
        } else if (depth == 1 && c != ']') {
          if (c == ',') {
            element_started = false;
          } else if (!element_started) {
            element_started = true;
            ++seen.array_elements;
          }
        }
        if (!kStructural[c]) {
          // A scalar: its bytes up to the next structural byte or space are one value.
          while (i + 1 < got && !kStructural[static_cast<unsigned char>(data[i + 1])] &&
                 data[i + 1] != ' ' && data[i + 1] != '\n' && data[i + 1] != '\r' &&
                 data[i + 1] != '\t') {
            ++i;
          }
        }
      }
      if (kStructural[c]) {
        if (depth == 0) outer_start = consumed + i;
        if (depth == 0 && c == '[' && seen.top_values == 1) in_first_array = true;
        if (c == '"') {
          in_string = true;
          carried_backslashes = 0;
        } else if (c == '[' || c == '{') {
          if (++depth > max_depth) {
            return BadFileError(
                Status::InvalidArgument("JSON nested deeper than " + std::to_string(max_depth) +
                                        " levels at line " +
                                        std::to_string(LinesUpTo(path, consumed + i).at) +
                                        ": no document nests so deep; the file is refused whole"),
                BadFile::kJsonTooDeep);
          }
        } else if ((c == ']' || c == '}') && depth > 0) {
          if (--depth == 0) in_first_array = false;
        }
      }
      ++i;
    }
    consumed += got;
  }
  if (in.bad()) return Status::IoError("cannot read " + path);
  if (counts != nullptr) *counts = seen;
  // DuckDB's reader has been seen to load the objects before the cut of a truncated array and
  // report success: a file that ends inside a value is refused whole.
  if (depth > 0 || in_string) {
    return BadFileError(
        Status::InvalidArgument(
            "JSON ends inside " + std::string(in_string ? "a string" : "an array or object") +
            ": the value that starts at line " + std::to_string(LinesUpTo(path, outer_start).at) +
            " is not closed by the end of the file, line " +
            std::to_string(LinesUpTo(path, consumed).last_content) +
            " (truncated, or a line cut short?); no part of the file is loaded"),
        BadFile::kJsonTruncated);
  }
  return Status::Ok();
}

}  // namespace millrace::load
