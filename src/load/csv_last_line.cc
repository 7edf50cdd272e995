#include "load/csv_last_line.h"

#include <fstream>
#include <string>

#include "load/bad_file.h"

namespace millrace::load {
namespace {

// The last line, its own line end and a "\r" before it fit in this many last bytes unless too
// long.
uint64_t Window(uint64_t size, uint64_t max_line_bytes) {
  return std::min<uint64_t>(size, max_line_bytes + 2);
}

// `tail`: the file's last Window(size, max_line_bytes) bytes.
Status CheckTail(std::string_view tail, uint64_t size, char line_end, uint64_t max_line_bytes) {
  if (tail.size() == size) return Status::Ok();  // the whole file is shorter than one line may be
  size_t end = tail.size();
  if (end > 0 && tail[end - 1] == line_end) --end;  // the file's final line end
  if (tail.rfind(line_end, end == 0 ? 0 : end - 1) != std::string_view::npos) return Status::Ok();
  return BadFileError(
      Status::InvalidArgument("the last line of the file is longer than " +
                              std::to_string(max_line_bytes) +
                              " bytes, the longest line the CSV reader takes; no part of the "
                              "file is loaded"),
      BadFile::kLastLineTooLong);
}

}  // namespace

Status CheckCsvLastLineIn(std::string_view bytes, char line_end, uint64_t max_line_bytes) {
  const uint64_t window = Window(bytes.size(), max_line_bytes);
  return CheckTail(bytes.substr(bytes.size() - window), bytes.size(), line_end, max_line_bytes);
}

Status CheckCsvLastLine(const std::string& path, char line_end, uint64_t max_line_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return Status::IoError("cannot open " + path + " to read it");
  const uint64_t size = static_cast<uint64_t>(in.tellg());
  const uint64_t window = Window(size, max_line_bytes);
  std::string tail(window, '\0');
  in.seekg(static_cast<std::streamoff>(size - window));
  if (!in.read(tail.data(), static_cast<std::streamsize>(window))) {
    return Status::IoError("cannot read " + path);
  }
  return CheckTail(tail, size, line_end, max_line_bytes);
}

}  // namespace millrace::load
