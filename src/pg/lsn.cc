#include "pg/lsn.h"

#include <charconv>
#include <cstdio>

namespace millrace::pg {

Result<Lsn> ParseLsn(std::string_view text) {
  const size_t slash = text.find('/');
  auto bad = [&] {
    return Status::InvalidArgument("'" + std::string(text) +
                                   "' is not a WAL position (expected hex/hex, e.g. 0/16B3748)");
  };
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == text.size()) return bad();
  uint32_t hi = 0;
  uint32_t lo = 0;
  const char* begin = text.data();
  const char* mid = begin + slash;
  const char* end = begin + text.size();
  auto [p1, e1] = std::from_chars(begin, mid, hi, 16);
  if (e1 != std::errc() || p1 != mid) return bad();
  auto [p2, e2] = std::from_chars(mid + 1, end, lo, 16);
  if (e2 != std::errc() || p2 != end) return bad();
  return (static_cast<Lsn>(hi) << 32) | lo;
}

std::string FormatLsn(Lsn lsn) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%X/%X", static_cast<uint32_t>(lsn >> 32),
                static_cast<uint32_t>(lsn));
  return buf;
}

}  // namespace millrace::pg
