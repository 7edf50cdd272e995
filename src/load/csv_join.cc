#include "load/csv_join.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "common/file_rewrite.h"
#include "common/stdio_file.h"

namespace millrace::load {
namespace {

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
constexpr size_t kBlock = 1 << 16;

}  // namespace

bool CsvJoinable(const FileFunctionOptions& options) {
  const CsvOptions& csv = options.csv;
  return options.format == Format::kCsv && csv.skip_lines == 0 && csv.enclose.empty() &&
         !csv.trim_double_quotes && csv.escape.empty() && options.path_partition_keys.empty();
}

Status JoinCsvFiles(const std::vector<std::string>& paths, const std::string& line_delimiter,
                    const std::string& out) {
  MR_ASSIGN_OR_RETURN(std::unique_ptr<FileRewrite> joined, FileRewrite::Open(out));
  std::string block(kBlock, '\0');
  for (const std::string& path : paths) {
    StdioFile in = OpenStdio(path, "rb");
    if (!in) {
      return Status::IoError("cannot read '" + path + "' to join it: " + std::strerror(errno));
    }
    bool first = true;
    std::string tail;  // the file's last bytes, as many as the line delimiter has
    while (true) {
      const size_t got = std::fread(block.data(), 1, block.size(), in.get());
      if (got == 0) break;
      std::string_view bytes(block.data(), got);
      if (first && bytes.starts_with(kUtf8Bom)) bytes.remove_prefix(kUtf8Bom.size());
      first = false;
      MR_RETURN_IF_ERROR(joined->Write(bytes));
      tail.append(bytes.substr(bytes.size() - std::min(bytes.size(), line_delimiter.size())));
      if (tail.size() > line_delimiter.size()) tail.erase(0, tail.size() - line_delimiter.size());
    }
    if (std::ferror(in.get())) return Status::IoError("cannot read '" + path + "' to join it");
    if (!tail.empty() && tail != line_delimiter) MR_RETURN_IF_ERROR(joined->Write(line_delimiter));
  }
  return joined->Finish();
}

}  // namespace millrace::load
