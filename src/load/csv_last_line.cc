#include "load/csv_last_line.h"

#include <fstream>
#include <string>

#include "load/bad_file.h"

namespace millrace::load {

Status CheckCsvLastLine(const std::string& path, char line_end, uint64_t max_line_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return Status::IoError("cannot open " + path + " to read it");
  const uint64_t size = static_cast<uint64_t>(in.tellg());
  // The last line, its own line end and a "\r" before it fit in this window unless too long.
  const uint64_t window = std::min<uint64_t>(size, max_line_bytes + 2);
  std::string tail(window, '\0');
  in.seekg(static_cast<std::streamoff>(size - window));
  if (!in.read(tail.data(), static_cast<std::streamsize>(window))) {
    return Status::IoError("cannot read " + path);
  }
  if (window == size) return Status::Ok();  // the whole file is shorter than one line may be
  size_t end = tail.size();
  if (end > 0 && tail[end - 1] == line_end) --end;  // the file's final line end
  if (tail.rfind(line_end, end == 0 ? 0 : end - 1) != std::string::npos) return Status::Ok();
  return BadFileError(
      Status::InvalidArgument("the last line of the file is longer than " +
                              std::to_string(max_line_bytes) +
                              " bytes, the longest line the CSV reader takes; no part of the "
                              "file is loaded"),
      BadFile::kLastLineTooLong);
}

}  // namespace millrace::load
