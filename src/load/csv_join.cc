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

// The joined file, written in blocks of kBlock or more (a small file's bytes alone would be a
// write each).
class JoinedFile {
 public:
  JoinedFile(std::unique_ptr<FileRewrite> out, const std::string& line_delimiter)
      : out_(std::move(out)), line_delimiter_(line_delimiter) {}

  // The next file's bytes, in order; EndFile after its last.
  Status Add(std::string_view bytes) {
    if (first_ && bytes.starts_with(kUtf8Bom)) bytes.remove_prefix(kUtf8Bom.size());
    first_ = false;
    buffer_.append(bytes);
    tail_.append(bytes.substr(bytes.size() - std::min(bytes.size(), line_delimiter_.size())));
    if (tail_.size() > line_delimiter_.size())
      tail_.erase(0, tail_.size() - line_delimiter_.size());
    return buffer_.size() >= kBlock ? Flush() : Status::Ok();
  }
  Status EndFile() {
    if (!tail_.empty() && tail_ != line_delimiter_) buffer_.append(line_delimiter_);
    first_ = true;
    tail_.clear();
    return buffer_.size() >= kBlock ? Flush() : Status::Ok();
  }
  Status Finish() {
    MR_RETURN_IF_ERROR(Flush());
    return out_->Finish();
  }

 private:
  Status Flush() {
    Status written = out_->Write(buffer_);
    buffer_.clear();
    return written;
  }

  const std::unique_ptr<FileRewrite> out_;
  const std::string& line_delimiter_;
  std::string buffer_;
  bool first_ = true;
  std::string tail_;  // the file's last bytes, as many as the line delimiter has
};

}  // namespace

bool CsvJoinable(const FileFunctionOptions& options) {
  const CsvOptions& csv = options.csv;
  return options.format == Format::kCsv && csv.skip_lines == 0 && csv.enclose.empty() &&
         !csv.trim_double_quotes && csv.escape.empty() && options.path_partition_keys.empty();
}

Status JoinCsvFiles(const std::vector<std::string>& paths, const std::string& line_delimiter,
                    const std::string& out, const std::vector<const std::string*>& contents) {
  if (!contents.empty() && contents.size() != paths.size()) {
    return Status::InvalidArgument("joining " + std::to_string(paths.size()) + " files with " +
                                   std::to_string(contents.size()) + " contents");
  }
  MR_ASSIGN_OR_RETURN(std::unique_ptr<FileRewrite> rewrite, FileRewrite::Open(out));
  JoinedFile joined(std::move(rewrite), line_delimiter);
  std::string block;
  for (size_t k = 0; k < paths.size(); ++k) {
    const std::string& path = paths[k];
    if (!contents.empty() && contents[k] != nullptr) {
      MR_RETURN_IF_ERROR(joined.Add(*contents[k]));
      MR_RETURN_IF_ERROR(joined.EndFile());
      continue;
    }
    StdioFile in = OpenStdio(path, "rb");
    if (!in) {
      return Status::IoError("cannot read '" + path + "' to join it: " + std::strerror(errno));
    }
    block.resize(kBlock);
    while (true) {
      const size_t got = std::fread(block.data(), 1, block.size(), in.get());
      if (got == 0) break;
      MR_RETURN_IF_ERROR(joined.Add(std::string_view(block.data(), got)));
    }
    if (std::ferror(in.get())) return Status::IoError("cannot read '" + path + "' to join it");
    MR_RETURN_IF_ERROR(joined.EndFile());
  }
  return joined.Finish();
}

}  // namespace millrace::load
