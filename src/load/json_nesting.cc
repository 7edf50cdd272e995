#include "load/json_nesting.h"

#include <fstream>
#include <vector>

namespace millrace::load {

Status CheckJsonNesting(const std::string& path, int max_depth) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot open " + path + " to read it");
  std::vector<char> block(1 << 16);
  int depth = 0;
  int64_t line = 1;
  int64_t last_line = 1;  // of the last character other than whitespace
  bool in_string = false;
  bool escaped = false;
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const std::streamsize got = in.gcount();
    for (std::streamsize i = 0; i < got; ++i) {
      const char c = block[static_cast<size_t>(i)];
      if (c == '\n') {
        ++line;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        last_line = line;
      }
      if (in_string) {
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (c == '"') {
        in_string = true;
      } else if (c == '[' || c == '{') {
        if (++depth > max_depth) {
          return Status::InvalidArgument("JSON nested deeper than " + std::to_string(max_depth) +
                                         " levels at line " + std::to_string(line) +
                                         ": no document nests so deep; the file is refused whole");
        }
      } else if ((c == ']' || c == '}') && depth > 0) {
        --depth;
      }
    }
  }
  if (in.bad()) return Status::IoError("cannot read " + path);
  // DuckDB's reader has been seen to load the objects before the cut of a truncated array and
  // report success: a file that ends inside a value is refused whole.
  if (depth > 0 || in_string) {
    return Status::InvalidArgument("JSON ends inside " +
                                   std::string(in_string ? "a string" : "an array or object") +
                                   " at its end, line " + std::to_string(last_line) +
                                   " (the file is truncated?): no part of it is loaded");
  }
  return Status::Ok();
}

}  // namespace millrace::load
