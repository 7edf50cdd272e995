#include "testing/compress.h"

#include <bzlib.h>
#include <lz4frame.h>
#include <zlib.h>
#include <zstd.h>

namespace millrace::testing {

std::string Compress(load::Compression c, const std::string& in) {
  using load::Compression;
  std::string out;
  switch (c) {
    case Compression::kGzip:
    case Compression::kDeflate: {
      z_stream zs{};
      deflateInit2(&zs, 6, Z_DEFLATED, c == Compression::kGzip ? 15 + 16 : 15, 8,
                   Z_DEFAULT_STRATEGY);
      out.resize(deflateBound(&zs, in.size()) + 64);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
      zs.avail_in = static_cast<uInt>(in.size());
      zs.next_out = reinterpret_cast<Bytef*>(out.data());
      zs.avail_out = static_cast<uInt>(out.size());
      deflate(&zs, Z_FINISH);
      out.resize(zs.total_out);
      deflateEnd(&zs);
      return out;
    }
    case Compression::kZstd:
      out.resize(ZSTD_compressBound(in.size()));
      out.resize(ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3));
      return out;
    case Compression::kBzip2: {
      unsigned int size = static_cast<unsigned int>(in.size() * 1.01 + 600);
      out.resize(size);
      BZ2_bzBuffToBuffCompress(out.data(), &size, const_cast<char*>(in.data()),
                               static_cast<unsigned>(in.size()), 9, 0, 0);
      out.resize(size);
      return out;
    }
    case Compression::kLz4Frame:
      out.resize(LZ4F_compressFrameBound(in.size(), nullptr));
      out.resize(LZ4F_compressFrame(out.data(), out.size(), in.data(), in.size(), nullptr));
      return out;
    case Compression::kPlain:
      return in;
  }
  return in;
}

}  // namespace millrace::testing
