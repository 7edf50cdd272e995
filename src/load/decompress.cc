#include "load/decompress.h"

#include <bzlib.h>
#include <lz4frame.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "common/file_rewrite.h"
#include "common/stdio_file.h"
#include "load/bad_file.h"

namespace millrace::load {
namespace {

constexpr size_t kChunk = 1 << 16;

// Errors name the stream, not the work copy they are read from: the caller adds the file's key.
Status CorruptError(Compression c, const std::string& detail) {
  return BadFileError(
      Status::DataLoss("not a valid " + std::string(CompressionName(c)) + " stream: " + detail),
      BadFile::kCorruptStream);
}

// Streams `in` through `step` (which consumes input and produces output) and checks that the
// codec saw the end of its stream: input that ends first is a truncated stream. When the stream
// ends with input left over, `reset` starts the next member (gzip and zstd files may hold
// several concatenated streams); without a reset the leftover is an error.
template <typename Step, typename Reset>
Status Pump(const std::string& in, const std::string& out, Compression c, uint64_t max_bytes,
            Step step, Reset reset) {
  StdioFile src = OpenStdio(in, "rb");
  if (!src) return Status::IoError("cannot read '" + in + "'");
  // Written in place (common/file_rewrite.h): `out` may be a work directory's kept file.
  MR_ASSIGN_OR_RETURN(std::unique_ptr<FileRewrite> dst, FileRewrite::Open(out));
  std::vector<char> input(kChunk);
  std::vector<char> output(kChunk);
  bool ended = false;
  uint64_t written = 0;
  int members_ended = 0;       // streams decoded whole so far
  uint64_t member_output = 0;  // bytes the current stream produced
  const std::string name(CompressionName(c));
  auto run = [&](const char* next, size_t avail, size_t* consumed, size_t* produced) -> Status {
    Status r = step(next, avail, output.data(), output.size(), consumed, produced, &ended);
    if (!r.ok() && member_output == 0 && *produced == 0) {
      // The decoder refused a stream's first bytes.
      return members_ended == 0
                 ? CorruptError(c, "the file does not start as a " + name +
                                       " stream (is it compressed at all? name it without the "
                                       "suffix, or set \"compress_type\")")
                 : CorruptError(c, "bytes after the end of the " + name +
                                       " stream are not another " + name +
                                       " stream (trailing garbage)");
    }
    if (!r.ok()) return CorruptError(c, r.message());
    written += *produced;
    member_output += *produced;
    if (ended) {
      ++members_ended;
      member_output = 0;
    }
    if (written > max_bytes) {
      return BadFileError(
          Status::ResourceExhausted(
              "expands past " + std::to_string(max_bytes) + " bytes when " + name +
              " is decoded (a decompression bomb, or set \"max_decompressed_bytes\")"),
          BadFile::kDecompressionBomb);
    }
    if (*produced == 0) return Status::Ok();
    return dst->Write(std::string_view(output.data(), *produced));
  };
  while (true) {
    const size_t n = std::fread(input.data(), 1, input.size(), src.get());
    if (n == 0) break;
    const char* next = input.data();
    size_t avail = n;
    while (avail > 0) {
      if (ended) {
        if (!reset()) return CorruptError(c, "trailing data after the end of the stream");
        ended = false;
      }
      size_t consumed = 0;
      size_t produced = 0;
      MR_RETURN_IF_ERROR(run(next, avail, &consumed, &produced));
      if (consumed == 0 && produced == 0 && !ended) {
        return CorruptError(c, "the decoder makes no progress");
      }
      next += consumed;
      avail -= consumed;
    }
    // Output the decoder still holds for the input it has consumed.
    while (!ended) {
      size_t consumed = 0;
      size_t produced = 0;
      MR_RETURN_IF_ERROR(run(nullptr, 0, &consumed, &produced));
      if (produced == 0) break;
    }
  }
  if (std::ferror(src.get())) return Status::IoError("cannot read '" + in + "'");
  if (!ended) return CorruptError(c, "truncated (the stream ends before its end marker)");
  return dst->Finish();
}

Status InflateZlib(const std::string& in, const std::string& out, Compression c,
                   uint64_t max_bytes) {
  z_stream zs{};
  // kDeflate: 15 + 32 detects a zlib or a gzip header (Hadoop's .deflate is zlib-wrapped).
  // Raw deflate without a header is not accepted: inflate rejects the header and the file fails
  // as corrupt, naming it. kGzip: 15 + 16 accepts a gzip header only.
  int window = c == Compression::kDeflate ? 15 + 32 : 15 + 16;
  if (inflateInit2(&zs, window) != Z_OK) return Status::Internal("zlib init failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, inflateEnd);
  return Pump(
      in, out, c, max_bytes,
      [&](const char* src, size_t n, char* dst, size_t cap, size_t* used, size_t* made,
          bool* ended) -> Status {
        zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(src));
        zs.avail_in = static_cast<uInt>(n);
        zs.next_out = reinterpret_cast<Bytef*>(dst);
        zs.avail_out = static_cast<uInt>(cap);
        const int rc = inflate(&zs, Z_NO_FLUSH);
        *used = n - zs.avail_in;
        *made = cap - zs.avail_out;
        if (rc == Z_STREAM_END) {
          *ended = true;
          return Status::Ok();
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
          return Status::DataLoss(zs.msg != nullptr ? zs.msg : "inflate failed");
        }
        return Status::Ok();
      },
      [&] { return c == Compression::kGzip && inflateReset(&zs) == Z_OK; });
}

Status DecompressBzip2(const std::string& in, const std::string& out, uint64_t max_bytes) {
  bz_stream bz{};
  if (BZ2_bzDecompressInit(&bz, 0, 0) != BZ_OK) return Status::Internal("bzip2 init failed");
  std::unique_ptr<bz_stream, int (*)(bz_stream*)> guard(&bz, BZ2_bzDecompressEnd);
  return Pump(
      in, out, Compression::kBzip2, max_bytes,
      [&](const char* src, size_t n, char* dst, size_t cap, size_t* used, size_t* made,
          bool* ended) -> Status {
        bz.next_in = const_cast<char*>(src);
        bz.avail_in = static_cast<unsigned>(n);
        bz.next_out = dst;
        bz.avail_out = static_cast<unsigned>(cap);
        const int rc = BZ2_bzDecompress(&bz);
        *used = n - bz.avail_in;
        *made = cap - bz.avail_out;
        if (rc == BZ_STREAM_END) {
          *ended = true;
          return Status::Ok();
        }
        if (rc != BZ_OK) return Status::DataLoss("bzip2 error " + std::to_string(rc));
        return Status::Ok();
      },
      [&] {  // pbzip2 writes one stream per block
        BZ2_bzDecompressEnd(&bz);
        return BZ2_bzDecompressInit(&bz, 0, 0) == BZ_OK;
      });
}

Status DecompressLz4(const std::string& in, const std::string& out, uint64_t max_bytes) {
  LZ4F_dctx* dctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
    return Status::Internal("lz4 init failed");
  }
  std::unique_ptr<LZ4F_dctx, size_t (*)(LZ4F_dctx*)> guard(dctx, LZ4F_freeDecompressionContext);
  return Pump(
      in, out, Compression::kLz4Frame, max_bytes,
      [&](const char* src, size_t n, char* dst, size_t cap, size_t* used, size_t* made,
          bool* ended) -> Status {
        size_t dst_size = cap;
        size_t src_size = n;
        const size_t hint = LZ4F_decompress(dctx, dst, &dst_size, src, &src_size, nullptr);
        if (LZ4F_isError(hint)) return Status::DataLoss(LZ4F_getErrorName(hint));
        *used = src_size;
        *made = dst_size;
        *ended = hint == 0;
        return Status::Ok();
      },
      [] { return true; });  // the next frame starts with its own header
}

Status DecompressZstd(const std::string& in, const std::string& out, uint64_t max_bytes) {
  std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> ds(ZSTD_createDStream(),
                                                              ZSTD_freeDStream);
  if (!ds) return Status::Internal("zstd init failed");
  ZSTD_initDStream(ds.get());
  return Pump(
      in, out, Compression::kZstd, max_bytes,
      [&](const char* src, size_t n, char* dst, size_t cap, size_t* used, size_t* made,
          bool* ended) -> Status {
        ZSTD_inBuffer input{src, n, 0};
        ZSTD_outBuffer output{dst, cap, 0};
        const size_t rc = ZSTD_decompressStream(ds.get(), &output, &input);
        if (ZSTD_isError(rc)) return Status::DataLoss(ZSTD_getErrorName(rc));
        *used = input.pos;
        *made = output.pos;
        *ended = rc == 0;
        return Status::Ok();
      },
      [] { return true; });  // ZSTD_decompressStream continues with the next frame
}

}  // namespace

Status DecompressFile(Compression compression, const std::string& in, const std::string& out,
                      uint64_t max_bytes) {
  // What a refused or broken stream expanded to is not left on the disk: Pump's FileRewrite
  // removes what it did not finish.
  switch (compression) {
    case Compression::kBzip2:
      return DecompressBzip2(in, out, max_bytes);
    case Compression::kLz4Frame:
      return DecompressLz4(in, out, max_bytes);
    case Compression::kDeflate:
    case Compression::kGzip:
      return InflateZlib(in, out, compression, max_bytes);
    case Compression::kZstd:
      return DecompressZstd(in, out, max_bytes);
    case Compression::kPlain: {
      std::error_code ec;
      std::filesystem::copy_file(in, out, std::filesystem::copy_options::overwrite_existing, ec);
      if (ec) return Status::IoError("cannot copy '" + in + "': " + ec.message());
      return Status::Ok();
    }
  }
  return Status::Internal("unknown compression");
}

uint64_t DecompressionBudget(uint64_t compressed_size, const std::string& work_dir,
                             std::optional<uint64_t> given) {
  constexpr uint64_t kRatio = 200;
  constexpr uint64_t kFloor = 256ULL << 20;
  uint64_t budget = given.value_or(std::max(
      kFloor, compressed_size > UINT64_MAX / kRatio ? UINT64_MAX : compressed_size * kRatio));
  std::error_code ec;
  const std::filesystem::space_info space = std::filesystem::space(work_dir, ec);
  if (!ec) budget = std::min(budget, space.available / 10 * 9);
  return budget;
}

Result<std::string> PrepareLocalFile(const std::string& path, std::optional<Compression> declared,
                                     const std::string& work_dir, int index,
                                     std::optional<uint64_t> max_decompressed_bytes) {
  const Compression compression = declared.value_or(CompressionFromSuffix(path));
  const std::string base = work_dir + "/f" + std::to_string(index);
  if (compression != Compression::kPlain) {
    // Every codec is decoded here, gzip and zstd included: DuckDB's readers accept a truncated
    // gzip or zstd stream without an error, which would load part of a file silently. A plain
    // file also lets DuckDB read a CSV in parallel.
    const std::string out = base + ".plain";
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(path, ec);
    MR_RETURN_IF_ERROR(
        DecompressFile(compression, path, out,
                       DecompressionBudget(ec ? 0 : size, work_dir, max_decompressed_bytes)));
    return out;
  }
  // A file named .gz that is declared plain must not be decompressed by DuckDB's suffix rule.
  if (CompressionFromSuffix(path) == Compression::kPlain) return path;
  const std::string link = base + ".plain";
  std::error_code ec;
  std::filesystem::remove(link, ec);  // an emptied file of an earlier batch (work_dir.h)
  std::filesystem::create_symlink(std::filesystem::absolute(path), link, ec);
  if (ec)
    return Status::IoError("cannot link '" + path + "' into " + work_dir + ": " + ec.message());
  return link;
}

}  // namespace millrace::load
