#include "load/json_nesting.h"

#include <array>
#include <bit>
#include <cstring>
#include <fstream>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// The bytes of a 64-byte window that are a quote, a backslash, an opening and a closing
// bracket, one bit per byte (bit k: byte k).
struct WindowMasks {
  uint64_t quote = 0;
  uint64_t backslash = 0;
  uint64_t open = 0;
  uint64_t close = 0;
};

WindowMasks MasksOf(const char* data) {
  WindowMasks m;
#if defined(__SSE2__)
  for (int part = 0; part < 4; ++part) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * part));
    auto bits = [&](char c) {
      return static_cast<uint64_t>(
                 static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c)))))
             << (16 * part);
    };
    m.quote |= bits('"');
    m.backslash |= bits('\\');
    m.open |= bits('[') | bits('{');
    m.close |= bits(']') | bits('}');
  }
#else
  for (int k = 0; k < 64; ++k) {
    const uint64_t bit = uint64_t{1} << k;
    switch (data[k]) {
      case '"':
        m.quote |= bit;
        break;
      case '\\':
        m.backslash |= bit;
        break;
      case '[':
      case '{':
        m.open |= bit;
        break;
      case ']':
      case '}':
        m.close |= bit;
        break;
      default:
        break;
    }
  }
#endif
  return m;
}

// Bit k: the XOR of bits 0..k of `x` (which of a window's bytes lie inside a string, given its
// quotes).
uint64_t PrefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

}  // namespace

Status CheckJsonNesting(const std::string& path, int max_depth, JsonCounts* counts) {
  return internal::ScanJsonNesting(path, max_depth, counts, /*windows=*/true);
}

namespace internal {

Status ScanJsonNesting(const std::string& path, int max_depth, JsonCounts* counts, bool windows) {
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
      // Inside a value, away from where records are counted, only strings and brackets matter:
      // 64 bytes at a time, the quotes' running XOR says which bytes are inside strings and the
      // brackets outside them move the depth. A window with a backslash (rare in data) is left
      // to the byte loop below, which follows escapes.
      const bool deep = depth >= 2 || (depth == 1 && !in_first_array);
      if (windows && deep && carried_backslashes == 0 && got - i >= 64) {
        const WindowMasks m = MasksOf(data + i);
        if (m.backslash == 0) {
          const uint64_t inside = PrefixXor(m.quote) ^ (in_string ? ~uint64_t{0} : 0);
          uint64_t brackets = (m.open | m.close) & ~inside;
          size_t end = 64;    // of the window: where the byte loop takes over
          bool stop = false;  // before the window's end, outside any string
          bool too_deep = false;
          while (brackets != 0 && !stop) {
            const int k = std::countr_zero(brackets);
            brackets &= brackets - 1;
            if ((m.open >> k) & 1) {
              if (depth + 1 > max_depth) {
                // The byte loop reads this bracket and reports it.
                end = static_cast<size_t>(k);
                stop = too_deep = true;
              } else {
                ++depth;
              }
            } else if (--depth == 0 || (depth == 1 && in_first_array)) {
              if (depth == 0) in_first_array = false;
              // Back where records are counted: the byte loop takes the next byte.
              end = static_cast<size_t>(k) + 1;
              stop = true;
            }
          }
          in_string = stop ? false : ((inside >> 63) & 1) != 0;
          i += end;
          if (!too_deep) continue;
        }
      }
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

}  // namespace internal
}  // namespace millrace::load
