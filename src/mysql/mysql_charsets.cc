#include "mysql/mysql_charsets.h"

#include "mysql/binlog_rows.h"

namespace millrace::mysql {
namespace {

bool InRange(uint32_t id, uint32_t low, uint32_t high) {
  return id >= low && id <= high;
}

// MySQL's latin1 is cp1252, with the five bytes cp1252 leaves undefined mapped to the C1
// controls of the same number (strings/ctype-latin1.c, cs_to_uni).
constexpr uint16_t kLatin1High[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

}  // namespace

// By collation number, as information_schema.COLLATION_CHARACTER_SET_APPLICABILITY of MariaDB
// 10.11 lists them (its UCA 14 collations are numbered in blocks of 256 per character set), and
// MySQL 8's utf8mb4_0900 collations, numbered from 255 (utf8mb4_0900_ai_ci, its default), a
// range MariaDB leaves unused.
Charset CharsetOf(uint32_t collation) {
  switch (collation) {
    case kBinaryCollation:
      return Charset::kBinary;
    case 5:
    case 8:
    case 15:
    case 31:
    case 47:
    case 48:
    case 49:
    case 94:
    case 1032:
    case 1071:
      return Charset::kLatin1;
    case 11:  // ascii
    case 65:
    case 1035:
    case 1089:
    case 33:  // utf8mb3
    case 83:
    case 223:
    case 1057:
    case 1107:
    case 1216:
    case 1238:
    case 45:  // utf8mb4
    case 46:
    case 1069:
    case 1070:
    case 1248:
    case 1270:
      return Charset::kUtf8;
    default:
      break;
  }
  if (InRange(collation, 192, 215) || InRange(collation, 576, 578) ||  // utf8mb3
      InRange(collation, 224, 247) || InRange(collation, 608, 610))    // utf8mb4
    return Charset::kUtf8;
  if (InRange(collation, 2048, 2559) || InRange(collation, 255, 323)) return Charset::kUtf8;
  return Charset::kOther;
}

std::string Latin1ToUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 2);
  for (char ch : text) {
    const uint8_t c = static_cast<uint8_t>(ch);
    const uint32_t cp = (c >= 0x80 && c < 0xA0) ? kLatin1High[c - 0x80] : c;
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | cp >> 6);
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xE0 | cp >> 12);
      out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

}  // namespace millrace::mysql
