#include "load/json_numbers.h"

#include <fstream>
#include <vector>

#include "common/file_rewrite.h"

namespace millrace::load {
namespace {

constexpr size_t kBlock = 1 << 16;

bool StartsNumber(char c) {
  return c == '-' || (c >= '0' && c <= '9');
}
bool InNumber(char c) {
  return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
}

}  // namespace

Status QuoteJsonNumbers(const std::string& in_path, const std::string& out_path) {
  std::ifstream in(in_path, std::ios::binary);
  if (!in) return Status::IoError("cannot open " + in_path + " to read it");
  // Written in place (common/file_rewrite.h): `out_path` may be a work directory's kept file.
  MR_ASSIGN_OR_RETURN(std::unique_ptr<FileRewrite> out, FileRewrite::Open(out_path));
  std::vector<char> block(kBlock);
  std::string written;
  written.reserve(kBlock + kBlock / 2);
  // The state carries across blocks: a string, an escape or a number may straddle two.
  bool in_string = false;
  bool escaped = false;
  bool in_number = false;
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const size_t got = static_cast<size_t>(in.gcount());
    written.clear();
    for (size_t i = 0; i < got; ++i) {
      const char c = block[i];
      if (in_string) {
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
        }
        written += c;
        continue;
      }
      if (in_number && !InNumber(c)) {
        written += '"';
        in_number = false;
      } else if (!in_number && StartsNumber(c)) {
        written += '"';
        in_number = true;
      }
      in_string = c == '"';
      written += c;
    }
    MR_RETURN_IF_ERROR(out->Write(written));
  }
  if (in_number) MR_RETURN_IF_ERROR(out->Write("\""));
  if (in.bad()) return Status::IoError("cannot read " + in_path);
  return out->Finish();
}

}  // namespace millrace::load
