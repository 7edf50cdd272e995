#include "mysql/binlog_rows.h"

#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <optional>

namespace millrace::mysql {

using change::TupleValue;
using change::TypeMapping;
using change::ValueForm;

namespace {

// Optional metadata fields of a TABLE_MAP event (Table_map_event::Optional_metadata_field_type).
enum : uint8_t {
  kSignedness = 1,
  kDefaultCharset = 2,
  kColumnCharset = 3,
  kColumnName = 4,
  kSetStrValue = 5,
  kEnumStrValue = 6,
  kGeometryType = 7,
  kSimplePrimaryKey = 8,
  kPrimaryKeyWithPrefix = 9,
  kEnumAndSetDefaultCharset = 10,
  kEnumAndSetColumnCharset = 11,
};

// Rows event types (Log_event_type).
enum : uint8_t {
  kWriteRowsV1 = 23,
  kUpdateRowsV1 = 24,
  kDeleteRowsV1 = 25,
  kWriteRowsV2 = 30,
  kUpdateRowsV2 = 31,
  kDeleteRowsV2 = 32,
  kWriteRowsCompressedV1 = 166,
  kDeleteRowsCompressed = 171,
};

std::string TypeName(uint8_t type) {
  switch (type) {
    case kTypeTiny:
      return "TINYINT";
    case kTypeShort:
      return "SMALLINT";
    case kTypeInt24:
      return "MEDIUMINT";
    case kTypeLong:
      return "INT";
    case kTypeLongLong:
      return "BIGINT";
    case kTypeFloat:
      return "FLOAT";
    case kTypeDouble:
      return "DOUBLE";
    case kTypeNewDecimal:
      return "DECIMAL";
    case kTypeBit:
      return "BIT";
    case kTypeDate:
      return "DATE";
    case kTypeDateTime:
    case kTypeDateTime2:
      return "DATETIME";
    case kTypeTimestamp:
    case kTypeTimestamp2:
      return "TIMESTAMP";
    case kTypeTime:
    case kTypeTime2:
      return "TIME";
    case kTypeYear:
      return "YEAR";
    case kTypeString:
      return "CHAR";
    case kTypeVarchar:
    case kTypeVarString:
      return "VARCHAR";
    case kTypeBlob:
      return "BLOB";
    case kTypeEnum:
      return "ENUM";
    case kTypeSet:
      return "SET";
    case kTypeJson:
      return "JSON";
    case kTypeGeometry:
      return "GEOMETRY";
    default:
      return "type " + std::to_string(type);
  }
}

// A cursor over bytes; every read checks the bytes are there.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}

  bool done() const { return pos_ >= data_.size(); }
  size_t left() const { return data_.size() - pos_; }

  std::optional<std::string_view> Bytes(size_t n) {
    if (left() < n) return std::nullopt;
    std::string_view out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  // An n-byte little-endian unsigned integer, n <= 8.
  std::optional<uint64_t> Little(size_t n) {
    auto bytes = Bytes(n);
    if (!bytes) return std::nullopt;
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;)
      v = v << 8 | static_cast<uint8_t>((*bytes)[i]);
    return v;
  }
  // An n-byte big-endian unsigned integer, n <= 8: the temporal, DECIMAL and BIT formats.
  std::optional<uint64_t> Big(size_t n) {
    auto bytes = Bytes(n);
    if (!bytes) return std::nullopt;
    uint64_t v = 0;
    for (char c : *bytes)
      v = v << 8 | static_cast<uint8_t>(c);
    return v;
  }
  // A packed (length-encoded) integer; 251, the NULL marker, is not one.
  std::optional<uint64_t> Packed() {
    auto first = Little(1);
    if (!first) return std::nullopt;
    if (*first < 251) return first;
    if (*first == 252) return Little(2);
    if (*first == 253) return Little(3);
    if (*first == 254) return Little(8);
    return std::nullopt;
  }
  std::optional<std::string_view> PackedBytes() {
    auto n = Packed();
    if (!n) return std::nullopt;
    return Bytes(*n);
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

bool BitSet(std::string_view bitmap, size_t i) {
  return (static_cast<uint8_t>(bitmap[i / 8]) >> (i % 8)) & 1;
}

// n sign-extended from `bits` bits.
int64_t SignExtend(uint64_t n, int bits) {
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((n ^ sign) - sign);
}

std::string ColumnLabel(const BinlogColumn& column, size_t index) {
  const std::string name = column.name.empty() ? "#" + std::to_string(index + 1) : column.name;
  return "column " + name + " (" + TypeName(column.type) + ")";
}

// ---- Character sets ----

enum class Charset { kBinary, kLatin1, kUtf8, kOther };

bool InRange(uint32_t id, uint32_t low, uint32_t high) {
  return id >= low && id <= high;
}

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

// MySQL's latin1 is cp1252, with the five bytes cp1252 leaves undefined mapped to the C1
// controls of the same number (strings/ctype-latin1.c, cs_to_uni).
constexpr uint16_t kLatin1High[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

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

std::string Bytea(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\\x";
  out.reserve(2 + bytes.size() * 2);
  for (char ch : bytes) {
    const uint8_t c = static_cast<uint8_t>(ch);
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

// ---- TABLE_MAP ----

bool IsNumeric(uint8_t type, bool mariadb) {
  switch (type) {
    case kTypeTiny:
    case kTypeShort:
    case kTypeInt24:
    case kTypeLong:
    case kTypeLongLong:
    case kTypeNewDecimal:
    case kTypeFloat:
    case kTypeDouble:
      return true;
    case kTypeYear:  // MariaDB's YEAR is an unsigned TINYINT underneath
      return mariadb;
    default:
      return false;
  }
}

// The columns the DEFAULT_CHARSET / COLUMN_CHARSET fields count: strings, not ENUM and SET.
bool IsCharacter(uint8_t type) {
  switch (type) {
    case kTypeString:
    case kTypeVarString:
    case kTypeVarchar:
    case kTypeBlob:
    case kTypeGeometry:
      return true;
    default:
      return false;
  }
}

bool IsEnumOrSet(uint8_t type) {
  return type == kTypeEnum || type == kTypeSet;
}

// Reads column `index`'s metadata into its type and metadata.
Status ReadColumnMetadata(Reader& meta, size_t index, BinlogColumn& column) {
  auto cut = [&] {
    return Status::DataLoss("TABLE_MAP: the metadata of " + ColumnLabel(column, index) +
                            " is cut short");
  };
  switch (column.type) {
    case kTypeFloat:
    case kTypeDouble:
    case kTypeBlob:
    case kTypeGeometry:
    case kTypeJson:
    case kTypeTimestamp2:
    case kTypeDateTime2:
    case kTypeTime2: {
      auto m = meta.Little(1);
      if (!m) return cut();
      column.metadata = static_cast<uint16_t>(*m);
      return Status::Ok();
    }
    case kTypeVarchar:
    case kTypeVarString: {
      auto m = meta.Little(2);
      if (!m) return cut();
      column.metadata = static_cast<uint16_t>(*m);
      return Status::Ok();
    }
    case kTypeNewDecimal: {
      auto m = meta.Big(2);  // precision, then scale
      if (!m) return cut();
      column.metadata = static_cast<uint16_t>(*m);
      const int precision = column.metadata >> 8, scale = column.metadata & 0xFF;
      if (precision < 1 || precision > 65 || scale > 30 || scale > precision)
        return Status::DataLoss("TABLE_MAP: " + ColumnLabel(column, index) + " has precision " +
                                std::to_string(precision) + " and scale " + std::to_string(scale));
      return Status::Ok();
    }
    case kTypeBit: {
      auto bits = meta.Little(1);
      auto bytes = meta.Little(1);
      if (!bits || !bytes) return cut();
      if (*bits > 7 || *bytes > 8 || *bytes * 8 + *bits > 64 || *bytes * 8 + *bits == 0)
        return Status::DataLoss("TABLE_MAP: " + ColumnLabel(column, index) + " has " +
                                std::to_string(*bytes * 8 + *bits) + " bits");
      column.metadata = static_cast<uint16_t>(*bytes << 8 | *bits);
      return Status::Ok();
    }
    case kTypeString: {
      auto byte0 = meta.Little(1);
      auto byte1 = meta.Little(1);
      if (!byte0 || !byte1) return cut();
      // A CHAR longer than 255 bytes keeps the two high bits of its length in the real type's
      // byte, inverted (MySQL bug #37426); ENUM and SET keep the type whole.
      uint32_t real = static_cast<uint32_t>(*byte0), length = static_cast<uint32_t>(*byte1);
      if ((real & 0x30) != 0x30) {
        length |= ((real & 0x30) ^ 0x30) << 4;
        real |= 0x30;
      }
      if (real != kTypeString && real != kTypeEnum && real != kTypeSet)
        return Status::DataLoss("TABLE_MAP: " + ColumnLabel(column, index) + " has the real type " +
                                std::to_string(real));
      column.type = static_cast<uint8_t>(real);
      column.metadata = static_cast<uint16_t>(length);
      if (column.type == kTypeEnum && length != 1 && length != 2)
        return Status::DataLoss("TABLE_MAP: " + ColumnLabel(column, index) + " is stored in " +
                                std::to_string(length) + " bytes");
      if (column.type == kTypeSet && (length < 1 || (length > 4 && length != 8)))
        return Status::DataLoss("TABLE_MAP: " + ColumnLabel(column, index) + " is stored in " +
                                std::to_string(length) + " bytes");
      return Status::Ok();
    }
    case kTypeTiny:
    case kTypeShort:
    case kTypeInt24:
    case kTypeLong:
    case kTypeLongLong:
    case kTypeNull:
    case kTypeDate:
    case kTypeYear:
    case kTypeTimestamp:
    case kTypeDateTime:
    case kTypeTime:
      return Status::Ok();
    default:
      return Status::NotSupported("TABLE_MAP: " + ColumnLabel(column, index) +
                                  " is a column type Millrace does not decode");
  }
}

// The optional metadata fields, as read; each vector is empty when its field was not sent.
struct OptionalMetadata {
  std::string_view signedness;
  bool has_charsets = false;
  std::vector<uint32_t> charsets;  // one per character column
  bool has_enum_set_charsets = false;
  std::vector<uint32_t> enum_set_charsets;  // one per ENUM or SET column
  bool has_names = false;
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> set_values;
  std::vector<std::vector<std::string>> enum_values;
  std::vector<size_t> key;
};

// A DEFAULT_CHARSET-style field (the default collation, then pairs of a column's number among
// the counted columns and its collation) or a COLUMN_CHARSET-style one (a collation for each
// counted column), spread over `count` columns.
Result<std::vector<uint32_t>> ReadCharsets(std::string_view payload, bool with_default,
                                           size_t count) {
  auto bad = [] { return Status::DataLoss("TABLE_MAP: a character set field is malformed"); };
  Reader r(payload);
  std::vector<uint32_t> out;
  if (with_default) {
    auto fallback = r.Packed();
    if (!fallback) return bad();
    out.assign(count, static_cast<uint32_t>(*fallback));
    while (!r.done()) {
      auto index = r.Packed();
      auto collation = r.Packed();
      if (!index || !collation || *index >= count) return bad();
      out[*index] = static_cast<uint32_t>(*collation);
    }
  } else {
    while (!r.done()) {
      auto collation = r.Packed();
      if (!collation) return bad();
      out.push_back(static_cast<uint32_t>(*collation));
    }
  }
  if (out.size() != count) return bad();
  return out;
}

Result<std::vector<std::vector<std::string>>> ReadStringLists(std::string_view payload) {
  Reader r(payload);
  std::vector<std::vector<std::string>> out;
  while (!r.done()) {
    auto count = r.Packed();
    if (!count || *count > payload.size()) return Status::DataLoss("TABLE_MAP: bad ENUM/SET list");
    std::vector<std::string>& values = out.emplace_back();
    for (uint64_t i = 0; i < *count; ++i) {
      auto value = r.PackedBytes();
      if (!value) return Status::DataLoss("TABLE_MAP: an ENUM/SET list is cut short");
      values.emplace_back(*value);
    }
  }
  return out;
}

Result<OptionalMetadata> ReadOptionalMetadata(std::string_view block, size_t character_columns,
                                              size_t enum_set_columns) {
  OptionalMetadata out;
  Reader r(block);
  while (!r.done()) {
    auto field = r.Little(1);
    auto payload = r.PackedBytes();
    if (!field || !payload)
      return Status::DataLoss("TABLE_MAP: the optional metadata is cut short");
    switch (*field) {
      case kSignedness:
        out.signedness = *payload;
        break;
      case kDefaultCharset:
      case kColumnCharset: {
        auto charsets = ReadCharsets(*payload, *field == kDefaultCharset, character_columns);
        if (!charsets.ok()) return charsets.status();
        out.charsets = std::move(*charsets);
        out.has_charsets = true;
        break;
      }
      case kEnumAndSetDefaultCharset:
      case kEnumAndSetColumnCharset: {
        auto charsets =
            ReadCharsets(*payload, *field == kEnumAndSetDefaultCharset, enum_set_columns);
        if (!charsets.ok()) return charsets.status();
        out.enum_set_charsets = std::move(*charsets);
        out.has_enum_set_charsets = true;
        break;
      }
      case kColumnName: {
        Reader names(*payload);
        while (!names.done()) {
          auto name = names.PackedBytes();
          if (!name) return Status::DataLoss("TABLE_MAP: the column names are cut short");
          out.names.emplace_back(*name);
        }
        out.has_names = true;
        break;
      }
      case kSetStrValue:
      case kEnumStrValue: {
        auto lists = ReadStringLists(*payload);
        if (!lists.ok()) return lists.status();
        (*field == kSetStrValue ? out.set_values : out.enum_values) = std::move(*lists);
        break;
      }
      case kSimplePrimaryKey:
      case kPrimaryKeyWithPrefix: {
        Reader keys(*payload);
        while (!keys.done()) {
          auto index = keys.Packed();
          // The prefix length of a key part over a column prefix: the whole column is kept.
          if (index && *field == kPrimaryKeyWithPrefix && !keys.Packed()) index.reset();
          if (!index) return Status::DataLoss("TABLE_MAP: the primary key field is cut short");
          out.key.push_back(static_cast<size_t>(*index));
        }
        break;
      }
      default:  // GEOMETRY_TYPE, MySQL's COLUMN_VISIBILITY and later fields: not needed
        break;
    }
  }
  return out;
}

// ---- Values ----

// DECIMAL's binary format (strings/decimal.c, decimal2bin): the integer digits, then the
// fractional ones, each side in groups of nine digits stored as 4-byte big-endian numbers, the
// leftover digits of the integer side first and of the fractional side last in the fewest bytes
// that hold them; a negative number has every byte inverted, and the first bit is flipped.
constexpr int kDigitsPerWord = 9;
constexpr int kBytesForDigits[kDigitsPerWord + 1] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};

size_t DecimalSize(int precision, int scale) {
  const int intg = precision - scale;
  return (intg / kDigitsPerWord) * 4 + kBytesForDigits[intg % kDigitsPerWord] +
         (scale / kDigitsPerWord) * 4 + kBytesForDigits[scale % kDigitsPerWord];
}

std::optional<std::string> DecodeDecimal(std::string_view raw, int precision, int scale) {
  std::string bytes(raw);
  const bool negative = !(static_cast<uint8_t>(bytes[0]) & 0x80);
  bytes[0] = static_cast<char>(bytes[0] ^ 0x80);
  if (negative)
    for (char& c : bytes)
      c = static_cast<char>(~c);
  Reader r(bytes);
  // One group as its digits, zero-padded to the group's width.
  auto group = [&](int digits) -> std::optional<std::string> {
    auto v = r.Big(digits == kDigitsPerWord ? 4 : kBytesForDigits[digits]);
    if (!v) return std::nullopt;
    char text[16];
    std::snprintf(text, sizeof(text), "%0*" PRIu64, digits, *v);
    if (std::strlen(text) != static_cast<size_t>(digits)) return std::nullopt;
    return std::string(text);
  };
  const int intg = precision - scale;
  std::string integer, fraction;
  if (intg % kDigitsPerWord != 0) {
    auto g = group(intg % kDigitsPerWord);
    if (!g) return std::nullopt;
    integer += *g;
  }
  for (int i = 0; i < intg / kDigitsPerWord; ++i) {
    auto g = group(kDigitsPerWord);
    if (!g) return std::nullopt;
    integer += *g;
  }
  for (int i = 0; i < scale / kDigitsPerWord; ++i) {
    auto g = group(kDigitsPerWord);
    if (!g) return std::nullopt;
    fraction += *g;
  }
  if (scale % kDigitsPerWord != 0) {
    auto g = group(scale % kDigitsPerWord);
    if (!g) return std::nullopt;
    fraction += *g;
  }
  const size_t first = integer.find_first_not_of('0');
  integer = first == std::string::npos ? "0" : integer.substr(first);
  std::string out;
  if (negative && (integer != "0" || fraction.find_first_not_of('0') != std::string::npos))
    out = "-";
  out += integer;
  if (scale > 0) out += "." + fraction;
  return out;
}

// The fraction of a DATETIME2/TIMESTAMP2 (compat56.cc: my_datetime_packed_from_binary), in
// microseconds: fsp 1-2 in one byte of hundredths, 3-4 in two bytes of 1/10000 s, 5-6 in three
// bytes of microseconds, big-endian.
std::optional<int64_t> ReadFraction(Reader& r, int fsp) {
  if (fsp == 0) return 0;
  const int bytes = (fsp + 1) / 2;
  auto v = r.Big(bytes);
  if (!v) return std::nullopt;
  static constexpr int64_t kUnit[4] = {0, 10000, 100, 1};
  return SignExtend(*v, bytes * 8) * kUnit[bytes];
}

std::string FractionText(int64_t micros, int fsp) {
  if (fsp == 0) return "";
  char text[8];
  std::snprintf(text, sizeof(text), "%06" PRId64, micros);
  return "." + std::string(text, static_cast<size_t>(fsp));
}

std::string DateText(int64_t year, int64_t month, int64_t day) {
  char text[32];
  std::snprintf(text, sizeof(text), "%04" PRId64 "-%02" PRId64 "-%02" PRId64, year, month, day);
  return text;
}

std::string TimeOfDayText(int64_t hour, int64_t minute, int64_t second) {
  char text[32];
  std::snprintf(text, sizeof(text), "%02" PRId64 ":%02" PRId64 ":%02" PRId64, hour, minute, second);
  return text;
}

// A TIME2 (compat56.cc: my_time_packed_from_binary) as signed microseconds. Its packed form is
// hour << 12 | minute << 6 | second, shifted left 24 bits over the microseconds, negated for a
// negative time. With fsp < 5 the integer part is stored apart from the fraction: a negative
// time with a fraction stores the fraction's complement under the next integer down.
std::optional<int64_t> ReadTime2(Reader& r, int fsp) {
  constexpr int64_t kIntOffset = 0x800000;
  int64_t intpart = 0, frac = 0;
  if (fsp >= 5) {
    auto v = r.Big(6);
    if (!v) return std::nullopt;
    const int64_t packed = static_cast<int64_t>(*v) - (kIntOffset << 24);
    const int64_t magnitude = packed < 0 ? -packed : packed;
    intpart = packed < 0 ? -(magnitude >> 24) : magnitude >> 24;
    frac = packed < 0 ? -(magnitude & 0xFFFFFF) : magnitude & 0xFFFFFF;
  } else {
    auto v = r.Big(3);
    if (!v) return std::nullopt;
    intpart = static_cast<int64_t>(*v) - kIntOffset;
    if (fsp > 0) {
      const int bytes = (fsp + 1) / 2;
      auto f = r.Big(bytes);
      if (!f) return std::nullopt;
      frac = static_cast<int64_t>(*f);
      if (intpart < 0 && frac != 0) {
        ++intpart;
        frac -= int64_t{1} << (8 * bytes);
      }
      frac *= bytes == 1 ? 10000 : 100;
    }
  }
  const bool negative = intpart < 0 || frac < 0;
  const int64_t hms = intpart < 0 ? -intpart : intpart;
  const int64_t seconds = (hms >> 12) * 3600 + (hms >> 6 & 63) * 60 + (hms & 63);
  const int64_t micros = seconds * 1000000 + (frac < 0 ? -frac : frac);
  return negative ? -micros : micros;
}

std::string DurationText(int64_t micros, int fsp) {
  const bool negative = micros < 0;
  if (negative) micros = -micros;
  const int64_t seconds = micros / 1000000;
  return (negative ? "-" : "") + TimeOfDayText(seconds / 3600, seconds / 60 % 60, seconds % 60) +
         FractionText(micros % 1000000, fsp);
}

// Days since 1970-01-01 to a civil date (Howard Hinnant's days_from_civil, inverted).
void CivilFromDays(int64_t days, int64_t& year, int64_t& month, int64_t& day) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  day = doy - (153 * mp + 2) / 5 + 1;
  month = mp < 10 ? mp + 3 : mp - 9;
  year = yoe + era * 400 + (month <= 2);
}

std::string EpochText(uint64_t seconds, int64_t micros, int fsp) {
  int64_t year, month, day;
  const int64_t s = static_cast<int64_t>(seconds);
  CivilFromDays(s / 86400, year, month, day);
  return DateText(year, month, day) + " " + TimeOfDayText(s % 86400 / 3600, s % 3600 / 60, s % 60) +
         FractionText(micros, fsp) + "+00";
}

template <typename T>
std::string ShortestFloat(T value) {
  char text[64];
  auto [end, ec] = std::to_chars(text, text + sizeof(text), value);
  return ec == std::errc() ? std::string(text, end) : std::to_string(value);
}

TupleValue Text(std::string text) {
  return {TupleValue::Kind::kText, std::move(text)};
}
TupleValue Null() {
  return {TupleValue::Kind::kNull, {}};
}

// A string column's bytes as the value's text, by its character set.
TupleValue StringValue(const BinlogColumn& column, std::string_view bytes) {
  switch (CharsetOf(column.charset)) {
    case Charset::kBinary:
      return Text(Bytea(bytes));
    case Charset::kLatin1:
      return Text(Latin1ToUtf8(bytes));
    default:
      return Text(std::string(bytes));
  }
}

// ---- MySQL 8's binary JSON (sql/json_binary.h) ----
//
// A document is a type byte and a value. Objects and arrays: an element count and a byte size
// (2 bytes each in the small format, 4 in the large), then for an object a key entry per member
// (the key's offset and its 2-byte length), then a value entry per element (a type byte and the
// value itself when it fits, a literal or a 16-bit integer, and in the large format a 32-bit one,
// else the value's offset). Offsets count from the element count. Scalars: integers
// little-endian, doubles as 8 IEEE bytes, strings after a length of 7 bits a byte (the high bit
// says another byte follows), MySQL values of other types ("opaque") as a type byte, such a
// length and the type's own bytes.
enum : uint8_t {
  kJsonSmallObject = 0x0,
  kJsonLargeObject = 0x1,
  kJsonSmallArray = 0x2,
  kJsonLargeArray = 0x3,
  kJsonLiteral = 0x4,
  kJsonInt16 = 0x5,
  kJsonUint16 = 0x6,
  kJsonInt32 = 0x7,
  kJsonUint32 = 0x8,
  kJsonInt64 = 0x9,
  kJsonUint64 = 0xA,
  kJsonDouble = 0xB,
  kJsonString = 0xC,
  kJsonOpaque = 0xF,
};
constexpr int kJsonMaxDepth = 150;  // MySQL refuses documents deeper than 100

void AppendJsonString(std::string_view text, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (char ch : text) {
    const uint8_t c = static_cast<uint8_t>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  out += '"';
}

// The length before a JSON string or opaque value: 7 bits a byte, low bits first.
std::optional<uint64_t> ReadJsonLength(Reader& r) {
  uint64_t length = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    auto byte = r.Little(1);
    if (!byte) return std::nullopt;
    length |= (*byte & 0x7F) << shift;
    if (!(*byte & 0x80)) return length;
  }
  return std::nullopt;
}

// An opaque value: DECIMAL as a number, the temporal types as strings in MySQL's JSON form (their
// packed 8-byte form, see compat56.cc), other types not decoded.
bool AppendJsonOpaque(uint8_t type, std::string_view data, std::string& out) {
  if (type == kTypeNewDecimal) {
    if (data.size() < 2) return false;
    const int precision = static_cast<uint8_t>(data[0]), scale = static_cast<uint8_t>(data[1]);
    if (precision < 1 || precision > 65 || scale > precision ||
        data.size() < 2 + DecimalSize(precision, scale))
      return false;
    auto text = DecodeDecimal(data.substr(2, DecimalSize(precision, scale)), precision, scale);
    if (!text) return false;
    out += *text;
    return true;
  }
  if (type != kTypeDate && type != kTypeDateTime && type != kTypeTimestamp && type != kTypeTime)
    return false;
  Reader r(data);
  auto v = r.Little(8);
  if (!v) return false;
  const int64_t packed = static_cast<int64_t>(*v);
  const int64_t magnitude = packed < 0 ? -packed : packed;
  const int64_t micros = magnitude & 0xFFFFFF;
  const int64_t whole = magnitude >> 24;
  std::string text;
  if (type == kTypeTime) {
    const int64_t seconds = (whole >> 12 & 1023) * 3600 + (whole >> 6 & 63) * 60 + (whole & 63);
    text = DurationText((packed < 0 ? -1 : 1) * (seconds * 1000000 + micros), 6);
  } else {
    const int64_t ymd = whole >> 17, hms = whole & 0x1FFFF;
    text = DateText((ymd >> 5) / 13, (ymd >> 5) % 13, ymd & 31);
    if (type != kTypeDate)
      text += " " + TimeOfDayText(hms >> 12, hms >> 6 & 63, hms & 63) + FractionText(micros, 6);
  }
  AppendJsonString(text, out);
  return true;
}

bool AppendJsonValue(uint8_t type, std::string_view data, int depth, std::string& out);

// An object or array whose bytes (from the element count) are `data`.
bool AppendJsonContainer(bool object, bool large, std::string_view data, int depth,
                         std::string& out) {
  if (depth > kJsonMaxDepth) return false;
  const size_t word = large ? 4 : 2;
  Reader header(data);
  auto count = header.Little(word);
  auto size = header.Little(word);
  if (!count || !size || *size > data.size() || *count > *size) return false;
  data = data.substr(0, *size);
  const size_t key_entry = word + 2, value_entry = 1 + word;
  const size_t keys_at = 2 * word, values_at = keys_at + (object ? *count * key_entry : 0);
  if (values_at + *count * value_entry > data.size()) return false;
  out += object ? '{' : '[';
  for (uint64_t i = 0; i < *count; ++i) {
    if (i > 0) out += ", ";
    if (object) {
      Reader key(data.substr(keys_at + i * key_entry));
      auto offset = key.Little(word);
      auto length = key.Little(2);
      if (!offset || !length || *offset + *length > data.size()) return false;
      AppendJsonString(data.substr(*offset, *length), out);
      out += ": ";
    }
    Reader entry(data.substr(values_at + i * value_entry));
    const uint8_t type = static_cast<uint8_t>(*entry.Little(1));
    const bool inlined = type == kJsonLiteral || type == kJsonInt16 || type == kJsonUint16 ||
                         (large && (type == kJsonInt32 || type == kJsonUint32));
    if (inlined) {
      if (!AppendJsonValue(type, data.substr(values_at + i * value_entry + 1, word), depth + 1,
                           out))
        return false;
      continue;
    }
    auto offset = entry.Little(word);
    if (!offset || *offset >= data.size()) return false;
    if (!AppendJsonValue(type, data.substr(*offset), depth + 1, out)) return false;
  }
  out += object ? '}' : ']';
  return true;
}

bool AppendJsonValue(uint8_t type, std::string_view data, int depth, std::string& out) {
  Reader r(data);
  auto integer = [&](size_t bytes, bool is_signed) {
    auto v = r.Little(bytes);
    if (!v) return false;
    out += is_signed ? std::to_string(SignExtend(*v, static_cast<int>(bytes * 8)))
                     : std::to_string(*v);
    return true;
  };
  switch (type) {
    case kJsonSmallObject:
    case kJsonLargeObject:
    case kJsonSmallArray:
    case kJsonLargeArray:
      return AppendJsonContainer(type <= kJsonLargeObject, type & 1, data, depth, out);
    case kJsonLiteral: {
      auto v = r.Little(1);
      if (!v || *v > 2) return false;
      out += *v == 0 ? "null" : *v == 1 ? "true" : "false";
      return true;
    }
    case kJsonInt16:
      return integer(2, true);
    case kJsonUint16:
      return integer(2, false);
    case kJsonInt32:
      return integer(4, true);
    case kJsonUint32:
      return integer(4, false);
    case kJsonInt64:
      return integer(8, true);
    case kJsonUint64:
      return integer(8, false);
    case kJsonDouble: {
      auto v = r.Little(8);
      if (!v) return false;
      double d;
      std::memcpy(&d, &*v, sizeof(d));
      out += ShortestFloat(d);
      return true;
    }
    case kJsonString: {
      auto length = ReadJsonLength(r);
      auto text = length ? r.Bytes(*length) : std::nullopt;
      if (!text) return false;
      AppendJsonString(*text, out);
      return true;
    }
    case kJsonOpaque: {
      auto field_type = r.Little(1);
      auto length = field_type ? ReadJsonLength(r) : std::nullopt;
      auto bytes = length ? r.Bytes(*length) : std::nullopt;
      return bytes && AppendJsonOpaque(static_cast<uint8_t>(*field_type), *bytes, out);
    }
    default:
      return false;
  }
}

// A MySQL 8 JSON column's value as JSON text; nullopt for bytes that are not a document Millrace
// reads. An empty value is the JSON null.
std::optional<std::string> MySqlJsonText(std::string_view doc) {
  if (doc.empty()) return "null";
  std::string out;
  if (!AppendJsonValue(static_cast<uint8_t>(doc[0]), doc.substr(1), 0, out)) return std::nullopt;
  return out;
}

// Decodes one non-NULL value of `column` at the reader.
Result<TupleValue> DecodeValue(const BinlogColumn& column, size_t index, Reader& r) {
  auto cut = [&] {
    return Status::DataLoss("rows event: the value of " + ColumnLabel(column, index) +
                            " is cut short");
  };
  auto integer = [&](size_t bytes) -> Result<TupleValue> {
    auto v = r.Little(bytes);
    if (!v) return cut();
    if (column.is_unsigned) return Text(std::to_string(*v));
    return Text(std::to_string(SignExtend(*v, static_cast<int>(bytes * 8))));
  };
  const int fsp = column.metadata;
  switch (column.type) {
    case kTypeTiny:
      return integer(1);
    case kTypeShort:
      return integer(2);
    case kTypeInt24:
      return integer(3);
    case kTypeLong:
      return integer(4);
    case kTypeLongLong:
      return integer(8);
    case kTypeFloat:
    case kTypeDouble: {
      if (column.metadata != (column.type == kTypeFloat ? 4 : 8))
        return Status::DataLoss("rows event: " + ColumnLabel(column, index) + " is " +
                                std::to_string(column.metadata) + " bytes long");
      auto v = r.Little(column.metadata);
      if (!v) return cut();
      if (column.type == kTypeFloat) {
        float f;
        const uint32_t bits = static_cast<uint32_t>(*v);
        std::memcpy(&f, &bits, sizeof(f));
        return Text(ShortestFloat(f));
      }
      double d;
      std::memcpy(&d, &*v, sizeof(d));
      return Text(ShortestFloat(d));
    }
    case kTypeNewDecimal: {
      const int precision = column.metadata >> 8, scale = column.metadata & 0xFF;
      auto raw = r.Bytes(DecimalSize(precision, scale));
      if (!raw) return cut();
      auto text = DecodeDecimal(*raw, precision, scale);
      if (!text)
        return Status::DataLoss("rows event: " + ColumnLabel(column, index) +
                                " holds digits out of range");
      return Text(std::move(*text));
    }
    case kTypeBit: {
      const int bits = (column.metadata >> 8) * 8 + (column.metadata & 0xFF);
      auto v = r.Big(static_cast<size_t>((bits + 7) / 8));
      if (!v) return cut();
      return Text(std::to_string(*v));
    }
    case kTypeYear: {
      auto v = r.Little(1);
      if (!v) return cut();
      return Text(*v == 0 ? "0000" : std::to_string(1900 + *v));
    }
    case kTypeDate: {
      auto v = r.Little(3);
      if (!v) return cut();
      const int64_t day = *v & 31, month = *v >> 5 & 15, year = static_cast<int64_t>(*v >> 9);
      if (month == 0 || day == 0) return Null();
      return Text(DateText(year, month, day));
    }
    case kTypeDateTime2: {
      auto v = r.Big(5);
      if (!v) return cut();
      auto micros = ReadFraction(r, fsp);
      if (!micros) return cut();
      // 1 sign bit, 17 bits year * 13 + month, 5 day, 5 hour, 6 minute, 6 second.
      const int64_t packed = static_cast<int64_t>(*v) - 0x8000000000LL;
      const int64_t ymd = packed >> 17, hms = packed & 0x1FFFF;
      const int64_t day = ymd & 31, month = (ymd >> 5) % 13, year = (ymd >> 5) / 13;
      if (month == 0 || day == 0) return Null();
      return Text(DateText(year, month, day) + " " +
                  TimeOfDayText(hms >> 12, hms >> 6 & 63, hms & 63) + FractionText(*micros, fsp));
    }
    case kTypeTimestamp2: {
      auto seconds = r.Big(4);
      if (!seconds) return cut();
      auto micros = ReadFraction(r, fsp);
      if (!micros) return cut();
      if (*seconds == 0 && *micros == 0) return Null();  // the zero TIMESTAMP
      return Text(EpochText(*seconds, *micros, fsp));
    }
    case kTypeTime2: {
      auto micros = ReadTime2(r, fsp);
      if (!micros) return cut();
      return Text(DurationText(*micros, fsp));
    }
    case kTypeTimestamp: {
      auto seconds = r.Little(4);
      if (!seconds) return cut();
      if (*seconds == 0) return Null();
      return Text(EpochText(*seconds, 0, 0));
    }
    case kTypeDateTime: {
      auto v = r.Little(8);
      if (!v) return cut();
      const uint64_t date = *v / 1000000, time = *v % 1000000;
      const int64_t year = date / 10000, month = date / 100 % 100, day = date % 100;
      if (month == 0 || day == 0) return Null();
      return Text(DateText(year, month, day) + " " +
                  TimeOfDayText(time / 10000, time / 100 % 100, time % 100));
    }
    case kTypeTime: {
      auto v = r.Little(3);
      if (!v) return cut();
      const int64_t hhmmss = SignExtend(*v, 24);
      const int64_t magnitude = hhmmss < 0 ? -hhmmss : hhmmss;
      const int64_t seconds =
          magnitude / 10000 * 3600 + magnitude / 100 % 100 * 60 + magnitude % 100;
      return Text(DurationText(hhmmss < 0 ? -seconds * 1000000 : seconds * 1000000, 0));
    }
    case kTypeString: {
      auto length = r.Little(column.metadata > 255 ? 2 : 1);
      if (!length) return cut();
      auto bytes = r.Bytes(*length);
      if (!bytes) return cut();
      if (CharsetOf(column.charset) == Charset::kBinary && *length < column.metadata) {
        // The binlog drops BINARY's trailing zero bytes; the column holds them.
        std::string padded(*bytes);
        padded.resize(column.metadata, '\0');
        return Text(Bytea(padded));
      }
      return StringValue(column, *bytes);
    }
    case kTypeVarchar:
    case kTypeVarString: {
      auto length = r.Little(column.metadata > 255 ? 2 : 1);
      if (!length) return cut();
      auto bytes = r.Bytes(*length);
      if (!bytes) return cut();
      return StringValue(column, *bytes);
    }
    case kTypeBlob:
    case kTypeGeometry:
    case kTypeJson: {
      if (column.metadata < 1 || column.metadata > 4)
        return Status::DataLoss("rows event: " + ColumnLabel(column, index) + " has a " +
                                std::to_string(column.metadata) + "-byte length");
      auto length = r.Little(column.metadata);
      if (!length) return cut();
      auto bytes = r.Bytes(*length);
      if (!bytes) return cut();
      if (column.type == kTypeGeometry) return Text(Bytea(*bytes));
      if (column.type == kTypeJson) {
        auto text = MySqlJsonText(*bytes);
        if (!text)
          return Status::DataLoss("rows event: " + ColumnLabel(column, index) +
                                  " holds a binary JSON document Millrace cannot read");
        return Text(std::move(*text));
      }
      return StringValue(column, *bytes);
    }
    case kTypeEnum: {
      auto v = r.Little(column.metadata);
      if (!v) return cut();
      if (*v == 0) return Text("");
      if (*v > column.enum_values.size())
        return Status::DataLoss("rows event: " + ColumnLabel(column, index) + " holds member " +
                                std::to_string(*v) + " of " +
                                std::to_string(column.enum_values.size()));
      return Text(column.enum_values[*v - 1]);
    }
    case kTypeSet: {
      auto v = r.Little(column.metadata);
      if (!v) return cut();
      std::string text;
      for (size_t bit = 0; bit < 64; ++bit) {
        if (!(*v >> bit & 1)) continue;
        if (bit >= column.enum_values.size())
          return Status::DataLoss("rows event: " + ColumnLabel(column, index) + " holds member " +
                                  std::to_string(bit + 1) + " of " +
                                  std::to_string(column.enum_values.size()));
        if (!text.empty()) text += ',';
        text += column.enum_values[bit];
      }
      return Text(std::move(text));
    }
    case kTypeNull:
      return Null();
    default:
      return Status::NotSupported("rows event: " + ColumnLabel(column, index) +
                                  " is a column type Millrace does not decode");
  }
}

// One row image: the NULL bitmap over the present columns, then their values.
Result<change::Tuple> DecodeImage(const BinlogTable& table, std::string_view present, Reader& r) {
  const size_t n = table.columns.size();
  size_t count = 0;
  for (size_t i = 0; i < n; ++i)
    count += BitSet(present, i);
  auto nulls = r.Bytes((count + 7) / 8);
  if (!nulls)
    return Status::DataLoss("rows event for " + table.schema + "." + table.name +
                            ": a row's NULL bitmap is cut short");
  change::Tuple tuple(n, TupleValue{TupleValue::Kind::kUnchanged, {}});
  size_t j = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!BitSet(present, i)) continue;
    if (BitSet(*nulls, j++)) {
      tuple[i] = Null();
      continue;
    }
    auto value = DecodeValue(table.columns[i], i, r);
    if (!value.ok()) return value.status().WithContext("table " + table.schema + "." + table.name);
    tuple[i] = std::move(*value);
  }
  return tuple;
}

}  // namespace

Result<TableMapBytes> SplitTableMapEvent(std::string_view body, bool mariadb) {
  auto cut = [] { return Status::DataLoss("TABLE_MAP event is cut short"); };
  Reader r(body);
  TableMapBytes out;
  out.mariadb = mariadb;
  auto table_id = r.Little(6);
  if (!table_id || !r.Bytes(2)) return cut();  // the flags: reserved
  out.table_id = *table_id;
  for (std::string* name : {&out.schema, &out.name}) {
    auto length = r.Little(1);
    if (!length) return cut();
    auto text = r.Bytes(*length);
    if (!text || !r.Bytes(1)) return cut();  // the name, then its terminating zero
    *name = std::string(*text);
  }
  auto count = r.Packed();
  if (!count) return cut();
  auto types = r.Bytes(*count);
  auto metadata = types ? r.PackedBytes() : std::nullopt;
  auto nulls = metadata ? r.Bytes((*count + 7) / 8) : std::nullopt;
  if (!nulls) return cut();
  out.column_types = *types;
  out.metadata = *metadata;
  out.null_bitmap = *nulls;
  out.optional_metadata = body.substr(body.size() - r.left());
  return out;
}

Result<RowsBytes> SplitRowsEvent(uint8_t event_type, std::string_view body) {
  RowsBytes out;
  switch (event_type) {
    case kWriteRowsV1:
    case kWriteRowsV2:
      out.kind = RowsKind::kWrite;
      break;
    case kUpdateRowsV1:
    case kUpdateRowsV2:
      out.kind = RowsKind::kUpdate;
      break;
    case kDeleteRowsV1:
    case kDeleteRowsV2:
      out.kind = RowsKind::kDelete;
      break;
    default:
      if (event_type >= kWriteRowsCompressedV1 && event_type <= kDeleteRowsCompressed)
        return Status::NotSupported(
            "compressed rows events are not supported: set log_bin_compress = OFF");
      return Status::InvalidArgument("event type " + std::to_string(event_type) +
                                     " is not a rows event");
  }
  auto cut = [] { return Status::DataLoss("rows event is cut short"); };
  Reader r(body);
  auto table_id = r.Little(6);
  auto flags = table_id ? r.Little(2) : std::nullopt;
  if (!flags) return cut();
  out.table_id = *table_id;
  out.flags = static_cast<uint16_t>(*flags);
  if (event_type >= kWriteRowsV2) {
    // Version 2 carries extra data, its length counting the length's own two bytes.
    auto extra = r.Little(2);
    if (!extra || *extra < 2 || !r.Bytes(*extra - 2)) return cut();
  }
  auto count = r.Packed();
  if (!count) return cut();
  out.column_count = *count;
  auto columns = r.Bytes((*count + 7) / 8);
  if (!columns) return cut();
  out.columns = *columns;
  if (out.kind == RowsKind::kUpdate) {
    auto after = r.Bytes((*count + 7) / 8);
    if (!after) return cut();
    out.after_columns = *after;
  }
  out.rows = body.substr(body.size() - r.left());
  return out;
}

Result<BinlogTable> DecodeTableMap(const TableMapBytes& bytes) {
  BinlogTable table;
  table.table_id = bytes.table_id;
  table.schema = bytes.schema;
  table.name = bytes.name;
  const std::string label = "TABLE_MAP of " + bytes.schema + "." + bytes.name;
  const size_t n = bytes.column_types.size();
  if (bytes.null_bitmap.size() != (n + 7) / 8)
    return Status::DataLoss(label + ": the NULL bitmap has " +
                            std::to_string(bytes.null_bitmap.size()) + " bytes for " +
                            std::to_string(n) + " columns");
  Reader meta(bytes.metadata);
  size_t numeric = 0, character = 0, enum_set = 0;
  for (size_t i = 0; i < n; ++i) {
    BinlogColumn& column = table.columns.emplace_back();
    column.type = static_cast<uint8_t>(bytes.column_types[i]);
    column.nullable = BitSet(bytes.null_bitmap, i);
    MR_RETURN_IF_ERROR(ReadColumnMetadata(meta, i, column).WithContext(label));
    numeric += IsNumeric(column.type, bytes.mariadb);
    character += IsCharacter(column.type);
    enum_set += IsEnumOrSet(column.type);
  }
  if (!meta.done())
    return Status::DataLoss(label + ": " + std::to_string(meta.left()) +
                            " bytes of column metadata are left over");

  auto optional = ReadOptionalMetadata(bytes.optional_metadata, character, enum_set);
  if (!optional.ok()) return optional.status().WithContext(label);
  const std::string setting = "set binlog_row_metadata = FULL on the source server";
  if (!optional->has_names)
    return Status::FailedPrecondition(label + ": the event has no column names: " + setting);
  if (optional->names.size() != n ||
      (numeric > 0 && optional->signedness.size() < (numeric + 7) / 8) ||
      (character > 0 && !optional->has_charsets) ||
      (enum_set > 0 && !optional->has_enum_set_charsets))
    return Status::DataLoss(label + ": the optional metadata does not cover the " +
                            std::to_string(n) + " columns");

  size_t numeric_i = 0, character_i = 0, enum_i = 0;
  for (size_t i = 0; i < n; ++i) {
    BinlogColumn& column = table.columns[i];
    column.name = optional->names[i];
    if (IsNumeric(column.type, bytes.mariadb)) {
      // Most significant bit first; a set bit is UNSIGNED.
      const uint8_t byte = static_cast<uint8_t>(optional->signedness[numeric_i / 8]);
      column.is_unsigned = (byte >> (7 - numeric_i % 8)) & 1;
      ++numeric_i;
    }
    if (IsCharacter(column.type)) column.charset = optional->charsets[character_i++];
    if (IsEnumOrSet(column.type)) column.charset = optional->enum_set_charsets[enum_i++];
  }
  // The ENUM and SET member lists, in the order of their own kind of column.
  size_t enum_list = 0, set_list = 0;
  for (size_t i = 0; i < n; ++i) {
    BinlogColumn& column = table.columns[i];
    if (!IsEnumOrSet(column.type)) continue;
    const bool is_enum = column.type == kTypeEnum;
    const auto& lists = is_enum ? optional->enum_values : optional->set_values;
    size_t& next = is_enum ? enum_list : set_list;
    if (next >= lists.size())
      return Status::FailedPrecondition(label + ": the event has no members for " +
                                        ColumnLabel(column, i) + ": " + setting);
    column.enum_values = lists[next++];
    // The members are in the column's character set; values are UTF-8.
    if (CharsetOf(column.charset) == Charset::kLatin1)
      for (std::string& member : column.enum_values)
        member = Latin1ToUtf8(member);
  }
  for (size_t i = 0; i < n; ++i) {
    const BinlogColumn& column = table.columns[i];
    if (!IsCharacter(column.type) && !IsEnumOrSet(column.type)) continue;
    if (CharsetOf(column.charset) == Charset::kOther)
      return Status::NotSupported(label + ": " + ColumnLabel(column, i) + " has collation " +
                                  std::to_string(column.charset) +
                                  ", a character set other than binary, latin1, ascii, "
                                  "utf8mb3 and utf8mb4");
  }
  for (size_t k : optional->key) {
    if (k >= n)
      return Status::DataLoss(label + ": the primary key names column " + std::to_string(k + 1) +
                              " of " + std::to_string(n));
    table.key.push_back(k);
  }
  return table;
}

Result<std::vector<RowChange>> DecodeRows(const BinlogTable& table, const RowsBytes& rows) {
  const size_t n = table.columns.size();
  const std::string label = "rows event for " + table.schema + "." + table.name;
  if (rows.column_count != n)
    return Status::DataLoss(label + ": " + std::to_string(rows.column_count) +
                            " columns, the table map has " + std::to_string(n));
  const size_t bitmap = (n + 7) / 8;
  if (rows.columns.size() != bitmap ||
      (rows.kind == RowsKind::kUpdate && rows.after_columns.size() != bitmap))
    return Status::DataLoss(label + ": a present-columns bitmap is not " + std::to_string(bitmap) +
                            " bytes");
  std::vector<RowChange> out;
  Reader r(rows.rows);
  while (!r.done()) {
    RowChange& change = out.emplace_back();
    if (rows.kind != RowsKind::kWrite) {
      auto before = DecodeImage(table, rows.columns, r);
      if (!before.ok()) return before.status();
      change.before = std::move(*before);
    }
    if (rows.kind != RowsKind::kDelete) {
      auto after =
          DecodeImage(table, rows.kind == RowsKind::kUpdate ? rows.after_columns : rows.columns, r);
      if (!after.ok()) return after.status();
      change.after = std::move(*after);
    }
  }
  return out;
}

TypeMapping MapColumn(const BinlogColumn& column) {
  const bool u = column.is_unsigned;
  const Charset charset = CharsetOf(column.charset);
  switch (column.type) {
    case kTypeTiny:
      return u ? TypeMapping{"UTINYINT", "smallint"} : TypeMapping{"TINYINT", "tinyint"};
    case kTypeShort:
      return u ? TypeMapping{"USMALLINT", "int"} : TypeMapping{"SMALLINT", "smallint"};
    case kTypeInt24:
      return u ? TypeMapping{"UINTEGER", "int"} : TypeMapping{"INTEGER", "int"};
    case kTypeLong:
      return u ? TypeMapping{"UINTEGER", "bigint"} : TypeMapping{"INTEGER", "int"};
    case kTypeLongLong:
      return u ? TypeMapping{"UBIGINT", "largeint"} : TypeMapping{"BIGINT", "bigint"};
    case kTypeFloat:
      return {"FLOAT", "float"};
    case kTypeDouble:
      return {"DOUBLE", "double"};
    case kTypeNewDecimal: {
      const int precision = column.metadata >> 8, scale = column.metadata & 0xFF;
      if (precision > 38) return {"VARCHAR", "string"};  // wider than DuckDB's DECIMAL
      const std::string ps = std::to_string(precision) + "," + std::to_string(scale);
      return {"DECIMAL(" + ps + ")", "decimal(" + ps + ")"};
    }
    case kTypeBit:
      return {"UBIGINT", "largeint"};
    case kTypeYear:
      return {"SMALLINT", "smallint"};
    case kTypeDate:
      return {"DATE", "date"};
    case kTypeDateTime:
    case kTypeDateTime2:
      return {"TIMESTAMP", "datetime(6)"};
    case kTypeTimestamp:
    case kTypeTimestamp2:
      return {"TIMESTAMPTZ", "datetime(6)"};
    case kTypeTime:
    case kTypeTime2:
      return {"VARCHAR", "string"};  // beyond 24 hours and negative: no DuckDB TIME holds it
    case kTypeString:
    case kTypeVarchar:
    case kTypeVarString: {
      if (charset == Charset::kBinary) return {"BLOB", "string", ValueForm::kBytea};
      // Doris counts bytes; latin1's bytes grow to up to three in UTF-8 (the euro sign).
      const uint32_t bytes = column.metadata * (charset == Charset::kLatin1 ? 3u : 1u);
      const bool fixed = column.type == kTypeString && bytes <= 255;
      if (bytes > 65533) return {"VARCHAR", "string"};
      return {"VARCHAR", (fixed ? "char(" : "varchar(") + std::to_string(bytes) + ")"};
    }
    case kTypeBlob:
      if (charset == Charset::kBinary) return {"BLOB", "string", ValueForm::kBytea};
      return {"VARCHAR", "string"};
    case kTypeGeometry:
      return {"BLOB", "string", ValueForm::kBytea};
    case kTypeJson:
      return {"JSON", "json"};
    case kTypeEnum:
    case kTypeSet:
    default:
      return {"VARCHAR", "string"};
  }
}

}  // namespace millrace::mysql
