#include "data_gen.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>

#include "bench_util.h"

namespace millrace::bench {
namespace {

// Row i of the events data set for `seed`. hash() is DuckDB's, deterministic for a version.
std::string EventsSelect(uint64_t seed, int64_t first, int64_t end, EventIds ids) {
  const std::string s = std::to_string(seed);
  // A repeat's id: a multiple of 10 below i (greatest() keeps the modulus above 0 for i = 9).
  const std::string id = ids == EventIds::kUnique
                             ? "i"
                             : "CASE WHEN i % 10 = 9 THEN (hash(i, " + s +
                                   " + 4) % greatest(i // 10, 1)::UBIGINT)::BIGINT * 10 "
                                   "ELSE i END";
  return "SELECT " + id +
         " AS id, "
         "TIMESTAMP '2026-01-01 00:00:00' + to_seconds((i % 31536000)::BIGINT) AS ts, "
         "(hash(i, " +
         s +
         ") % 1000000)::INTEGER AS user_id, "
         "['view', 'click', 'cart', 'buy', 'refund'][(hash(i, " +
         s +
         " + 1) % 5)::INTEGER + 1] "
         "AS kind, "
         "round((hash(i, " +
         s +
         " + 2) % 1000000) / 100.0, 2)::DOUBLE AS amount, "
         "'https://shop.example/p/' || (hash(i, " +
         s +
         " + 3) % 100000)::VARCHAR AS url, "
         "md5((i * 7919 + " +
         s +
         ")::VARCHAR) AS note "
         "FROM range(" +
         std::to_string(first) + ", " + std::to_string(end) + ") r(i)";
}

Result<uint64_t> FileSize(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Status::IoError("cannot stat " + path + ": " + std::strerror(errno));
  }
  return static_cast<uint64_t>(st.st_size);
}

Status WriteRows(engine::Connection& conn, DataFormat format, uint64_t seed, int64_t first,
                 int64_t end, const std::string& path, EventIds ids) {
  return conn.Execute("COPY (" + EventsSelect(seed, first, end, ids) + ") TO " +
                      engine::QuoteLiteral(path) + " " + Info(format).copy_options);
}

}  // namespace

const FormatInfo& Info(DataFormat format) {
  static const FormatInfo kCsv{DataFormat::kCsv,
                               "CSV",
                               ".csv",
                               "csv",
                               {{"column_separator", ","}},
                               "read_csv(%s, header = false, delim = ',')",
                               "(FORMAT csv, HEADER false, DELIMITER ',')"};
  static const FormatInfo kParquet{
      DataFormat::kParquet, "Parquet",         ".parquet", "parquet", {},
      "read_parquet(%s)",   "(FORMAT parquet)"};
  static const FormatInfo kJson{DataFormat::kJson,
                                "JSON lines",
                                ".json",
                                "json",
                                {{"read_json_by_line", "true"}},
                                "read_json(%s, format = 'newline_delimited')",
                                "(FORMAT json)"};
  switch (format) {
    case DataFormat::kCsv:
      return kCsv;
    case DataFormat::kParquet:
      return kParquet;
    case DataFormat::kJson:
      return kJson;
  }
  return kCsv;
}

Result<DataSet> GenerateDataSet(engine::Connection& conn, DataFormat format, int files,
                                uint64_t file_bytes, uint64_t seed, const std::string& dir,
                                EventIds ids) {
  const FormatInfo& info = Info(format);
  // Bytes per row from a sample of the same data, so files come out near `file_bytes`.
  constexpr int64_t kSampleRows = 200'000;
  const std::string sample = dir + "/sample" + info.extension;
  MR_RETURN_IF_ERROR(WriteRows(conn, format, seed, 0, kSampleRows, sample, ids));
  MR_ASSIGN_OR_RETURN(uint64_t sample_bytes, FileSize(sample));
  ::unlink(sample.c_str());
  const int64_t rows_per_file =
      std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(file_bytes) * kSampleRows /
                                                static_cast<double>(sample_bytes)));

  DataSet set;
  set.format = format;
  for (int f = 0; f < files; ++f) {
    char name[64];
    std::snprintf(name, sizeof(name), "/part-%03d%s", f, info.extension.c_str());
    DataFile file{dir + name, 0, rows_per_file};
    MR_RETURN_IF_ERROR(
        WriteRows(conn, format, seed, f * rows_per_file, (f + 1) * rows_per_file, file.path, ids));
    MR_ASSIGN_OR_RETURN(file.bytes, FileSize(file.path));
    set.total_bytes += file.bytes;
    set.total_rows += file.rows;
    set.files.push_back(std::move(file));
  }
  // Rows i % 10 = 9 repeat an id; the others' ids are their own.
  set.distinct_ids =
      ids == EventIds::kUnique ? set.total_rows : set.total_rows - set.total_rows / 10;
  return set;
}

Status UploadFiles(testing::S3rver& s3, const std::string& bucket,
                   const std::vector<std::pair<std::string, std::string>>& path_and_key,
                   int parallel) {
  return ParallelFor(path_and_key.size(), parallel, [&](size_t i) -> Status {
    const auto& [path, key] = path_and_key[i];
    MR_ASSIGN_OR_RETURN(uint64_t size, FileSize(path));
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return Status::IoError("cannot open " + path + ": " + std::strerror(errno));
    std::atomic<bool> short_read{false};
    Status status = s3.PutGenerated(bucket, key, size, [&](uint64_t offset, char* buf, size_t len) {
      size_t done = 0;
      while (done < len) {
        const ssize_t n = ::pread(fd, buf + done, len - done, static_cast<off_t>(offset + done));
        if (n <= 0) {
          short_read.store(true);
          std::memset(buf + done, 0, len - done);
          return;
        }
        done += static_cast<size_t>(n);
      }
    });
    ::close(fd);
    MR_RETURN_IF_ERROR(status);
    if (short_read.load()) return Status::IoError("short read from " + path + " while uploading");
    return Status::Ok();
  });
}

std::string SmallCsvObject(uint64_t seed, int64_t file_no, size_t min_bytes, size_t max_bytes,
                           int64_t* rows) {
  std::mt19937_64 rng(seed * 1'000'003 + static_cast<uint64_t>(file_no));
  const size_t size = min_bytes + rng() % (max_bytes - min_bytes + 1);
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string out;
  int64_t line = 0;
  while (out.size() < size) {
    std::string payload(20 + rng() % 60, ' ');
    for (char& c : payload)
      c = kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
    out += std::to_string(file_no) + "," + std::to_string(line++) + "," + payload + "\n";
  }
  *rows = line;
  return out;
}

std::string SpreadKey(const std::string& prefix, int64_t n) {
  char key[64];
  std::snprintf(key, sizeof(key), "/d%04lld/f%08lld.csv", static_cast<long long>(n / 1000),
                static_cast<long long>(n));
  return prefix + key;
}

Result<PutStats> PutSmallObjects(const PutObjectFn& put, const std::string& prefix, int64_t first,
                                 int64_t count, uint64_t seed, size_t min_bytes, size_t max_bytes,
                                 int parallel) {
  std::atomic<int64_t> rows{0};
  std::atomic<uint64_t> bytes{0};
  MR_RETURN_IF_ERROR(ParallelFor(static_cast<size_t>(count), parallel, [&](size_t i) {
    const int64_t n = first + static_cast<int64_t>(i);
    int64_t object_rows = 0;
    const std::string body = SmallCsvObject(seed, n, min_bytes, max_bytes, &object_rows);
    rows += object_rows;
    bytes += body.size();
    return put(SpreadKey(prefix, n), body);
  }));
  return PutStats{rows.load(), bytes.load()};
}

Result<PutStats> PutSmallObjects(testing::S3rver& s3, const std::string& bucket,
                                 const std::string& prefix, int64_t first, int64_t count,
                                 uint64_t seed, size_t min_bytes, size_t max_bytes, int parallel) {
  return PutSmallObjects([&](const std::string& key,
                             const std::string& body) { return s3.PutObject(bucket, key, body); },
                         prefix, first, count, seed, min_bytes, max_bytes, parallel);
}

}  // namespace millrace::bench
