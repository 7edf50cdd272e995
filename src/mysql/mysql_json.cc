#include "mysql/mysql_json.h"

#include <cstdint>
#include <cstring>

#include "mysql/binlog_rows.h"
#include "mysql/byte_reader.h"
#include "mysql/mysql_formats.h"

namespace millrace::mysql {
namespace {

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
    if (type == kTypeDate) {
      text = DateText((ymd >> 5) / 13, (ymd >> 5) % 13, ymd & 31);
    } else {
      text = DateTimeText({.year = (ymd >> 5) / 13,
                           .month = (ymd >> 5) % 13,
                           .day = ymd & 31,
                           .hour = hms >> 12,
                           .minute = hms >> 6 & 63,
                           .second = hms & 63,
                           .micros = micros},
                          6);
    }
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

}  // namespace

std::optional<std::string> MySqlJsonText(std::string_view doc) {
  if (doc.empty()) return "null";
  std::string out;
  if (!AppendJsonValue(static_cast<uint8_t>(doc[0]), doc.substr(1), 0, out)) return std::nullopt;
  return out;
}

}  // namespace millrace::mysql
