#include "load/batch.h"

#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "load/reader_sql.h"

namespace millrace::load {
namespace {

// The suffix that names the file's compression (".csv.gz" keeps ".gz"), so a downloaded copy
// is recognized like the original.
std::string SuffixOf(const std::string& key) {
  const size_t slash = key.find_last_of('/');
  const std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
  const size_t dot = name.find_last_of('.');
  if (dot == std::string::npos || dot == 0) return "";
  std::string suffix = name.substr(dot);
  for (char c : suffix) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.') return "";
  }
  return suffix;
}

}  // namespace

Result<std::unique_ptr<WorkDir>> WorkDir::Create(const std::string& root) {
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec) return Status::IoError("cannot create work directory '" + root + "': " + ec.message());
  std::string templ = root + "/batch-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    return Status::IoError("cannot create a work directory under '" + root + "'");
  }
  return std::unique_ptr<WorkDir>(new WorkDir(buf.data()));
}

WorkDir::~WorkDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // best effort: a leftover is cleaned at start-up
}

Result<std::vector<std::string>> FetchFiles(source::FileSource& source, SourceKind kind,
                                            const std::vector<source::FileInfo>& files,
                                            const FetchOptions& options,
                                            const std::string& work_dir) {
  std::vector<std::string> readable(files.size());
  std::vector<Status> errors(files.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto worker = [&] {
    while (!failed) {
      const size_t i = next++;
      if (i >= files.size()) return;
      std::string local = files[i].key;
      if (kind == SourceKind::kS3 || options.copy_local) {
        local = work_dir + "/d" + std::to_string(i) + SuffixOf(files[i].key);
        Status status = source.Download(files[i], local);
        if (!status.ok()) {
          errors[i] = status;
          failed = true;
          return;
        }
      }
      auto prepared = PrepareLocalFile(local, options.compression, work_dir, static_cast<int>(i));
      if (!prepared.ok()) {
        errors[i] = prepared.status();
        failed = true;
        return;
      }
      readable[i] = std::move(prepared).value();
    }
  };
  const int threads =
      std::max(1, std::min<int>(options.parallelism, static_cast<int>(files.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (const Status& error : errors) {
    if (!error.ok()) return error;
  }
  return readable;
}

}  // namespace millrace::load
