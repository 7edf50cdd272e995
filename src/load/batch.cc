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

namespace {

// Fetches files[i] for every i, `parallelism` at a time, until `stop` says to stop.
template <typename Stop>
std::vector<FetchedFile> FetchParallel(source::FileSource& source, SourceKind kind,
                                       const std::vector<source::FileInfo>& files,
                                       const FetchOptions& options, const std::string& work_dir,
                                       Stop stop) {
  std::vector<FetchedFile> out(files.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> stopped{false};
  auto fetch_one = [&](size_t i) -> Result<std::string> {
    std::string local = files[i].key;
    if (kind == SourceKind::kS3 || options.copy_local) {
      local = work_dir + "/d" + std::to_string(i) + SuffixOf(files[i].key);
      Status downloaded = source.Download(files[i], local);
      if (!downloaded.ok()) {
        out[i].download_failed = true;
        return downloaded;
      }
    }
    // A 0-byte file holds no rows, whatever its name says about compression.
    if (files[i].size == 0) return local;
    return PrepareLocalFile(local, options.compression, work_dir, static_cast<int>(i));
  };
  auto worker = [&] {
    while (!stopped) {
      const size_t i = next++;
      if (i >= files.size()) return;
      auto fetched = fetch_one(i);
      if (fetched.ok()) {
        out[i].path = std::move(fetched).value();
      } else {
        out[i].status = fetched.status().WithContext("file " + files[i].key);
        if (stop()) stopped = true;
      }
    }
  };
  const int threads =
      std::max(1, std::min<int>(options.parallelism, static_cast<int>(files.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (auto& t : pool)
    t.join();
  return out;
}

}  // namespace

Result<std::vector<std::string>> FetchFiles(source::FileSource& source, SourceKind kind,
                                            const std::vector<source::FileInfo>& files,
                                            const FetchOptions& options,
                                            const std::string& work_dir) {
  auto fetched = FetchParallel(source, kind, files, options, work_dir, [] { return true; });
  for (const FetchedFile& file : fetched) {
    if (!file.status.ok()) return file.status;
  }
  std::vector<std::string> readable;
  for (FetchedFile& file : fetched)
    readable.push_back(std::move(file.path));
  return readable;
}

std::vector<FetchedFile> FetchEach(source::FileSource& source, SourceKind kind,
                                   const std::vector<source::FileInfo>& files,
                                   const FetchOptions& options, const std::string& work_dir) {
  return FetchParallel(source, kind, files, options, work_dir, [] { return false; });
}

}  // namespace millrace::load
