#include "server/binary_protocol.h"

#include <charconv>
#include <cstdio>
#include <cstring>

namespace millrace::server {
namespace {

using engine::TypeId;
using sql::ParamValue;

using sql::kTypeBit;
using sql::kTypeDecimal;
using sql::kTypeEnum;
using sql::kTypeGeometry;
using sql::kTypeInt24;
using sql::kTypeJson;
using sql::kTypeLongBlob;
using sql::kTypeMediumBlob;
using sql::kTypeSet;
using sql::kTypeString;
using sql::kTypeTinyBlob;
using sql::kTypeVarchar;
using sql::kTypeYear;
constexpr uint16_t kUnsignedParam = 0x8000;

Status Truncated(size_t param) {
  return Status::InvalidArgument("COM_STMT_EXECUTE ends inside parameter " +
                                 std::to_string(param + 1));
}

bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

std::string Two(unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%02u", v);
  return buf;
}

// DATE, DATETIME and TIMESTAMP values: length, then year(2) month day [hour minute second
// [microseconds(4)]].
Result<std::string> ReadDateTime(WireReader& r, size_t param) {
  uint8_t length = 0;
  if (!r.Int1(&length)) return Truncated(param);
  if (length != 0 && length != 4 && length != 7 && length != 11) {
    return Status::InvalidArgument("parameter " + std::to_string(param + 1) +
                                   ": a date of length " + std::to_string(length));
  }
  if (length == 0) return std::string("0000-00-00");
  uint16_t year = 0;
  uint8_t month = 0, day = 0, hour = 0, minute = 0, second = 0;
  uint32_t micros = 0;
  if (!r.Int2(&year) || !r.Int1(&month) || !r.Int1(&day)) return Truncated(param);
  if (length >= 7 && (!r.Int1(&hour) || !r.Int1(&minute) || !r.Int1(&second))) {
    return Truncated(param);
  }
  if (length == 11 && !r.Int4(&micros)) return Truncated(param);
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%04u-%s-%s", unsigned{year}, Two(month).c_str(),
                Two(day).c_str());
  std::string out = buf;
  if (length >= 7) out += " " + Two(hour) + ":" + Two(minute) + ":" + Two(second);
  if (length == 11) {
    std::snprintf(buf, sizeof(buf), ".%06u", unsigned{micros});
    out += buf;
  }
  return out;
}

// TIME values: length, then negative(1) days(4) hour minute second [microseconds(4)].
Result<std::string> ReadTime(WireReader& r, size_t param) {
  uint8_t length = 0;
  if (!r.Int1(&length)) return Truncated(param);
  if (length != 0 && length != 8 && length != 12) {
    return Status::InvalidArgument("parameter " + std::to_string(param + 1) +
                                   ": a time of length " + std::to_string(length));
  }
  if (length == 0) return std::string("00:00:00");
  uint8_t negative = 0, hour = 0, minute = 0, second = 0;
  uint32_t days = 0, micros = 0;
  if (!r.Int1(&negative) || !r.Int4(&days) || !r.Int1(&hour) || !r.Int1(&minute) ||
      !r.Int1(&second) || (length == 12 && !r.Int4(&micros))) {
    return Truncated(param);
  }
  std::string out =
      (negative != 0 ? "-" : "") + Two(days * 24 + hour) + ":" + Two(minute) + ":" + Two(second);
  if (length == 12) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), ".%06u", unsigned{micros});
    out += buf;
  }
  return out;
}

Result<ParamValue> ReadParam(WireReader& r, uint16_t type, size_t param) {
  ParamValue p;
  const bool is_unsigned = (type & kUnsignedParam) != 0;
  auto integer = [&](size_t bytes) -> Status {
    uint64_t raw = 0;
    if (!r.IntN(bytes, &raw)) return Truncated(param);
    if (is_unsigned) {
      p.kind = ParamValue::Kind::kUInt;
      p.u = raw;
    } else {
      // Sign-extend from `bytes`.
      const int shift = static_cast<int>(64 - 8 * bytes);
      p.kind = ParamValue::Kind::kInt;
      p.i = static_cast<int64_t>(raw << shift) >> shift;
    }
    return Status::Ok();
  };
  switch (static_cast<uint8_t>(type & 0xff)) {
    case kTypeNull:
      return p;
    case kTypeTiny:
      MR_RETURN_IF_ERROR(integer(1));
      return p;
    case kTypeShort:
    case kTypeYear:
      MR_RETURN_IF_ERROR(integer(2));
      return p;
    case kTypeLong:
    case kTypeInt24:
      MR_RETURN_IF_ERROR(integer(4));
      return p;
    case kTypeLongLong:
      MR_RETURN_IF_ERROR(integer(8));
      return p;
    case kTypeFloat: {
      uint32_t bits = 0;
      if (!r.Int4(&bits)) return Truncated(param);
      float f = 0;
      std::memcpy(&f, &bits, 4);
      p.kind = ParamValue::Kind::kDouble;
      p.d = f;
      return p;
    }
    case kTypeDouble: {
      uint64_t bits = 0;
      if (!r.IntN(8, &bits)) return Truncated(param);
      std::memcpy(&p.d, &bits, 8);
      p.kind = ParamValue::Kind::kDouble;
      return p;
    }
    case kTypeDate:
    case kTypeDateTime:
    case kTypeTimestamp: {
      MR_ASSIGN_OR_RETURN(p.text, ReadDateTime(r, param));
      p.kind = ParamValue::Kind::kText;
      return p;
    }
    case kTypeTime: {
      MR_ASSIGN_OR_RETURN(p.text, ReadTime(r, param));
      p.kind = ParamValue::Kind::kText;
      return p;
    }
    case kTypeDecimal:
    case kTypeNewDecimal:
    case kTypeVarchar:
    case kTypeBit:
    case kTypeJson:
    case kTypeEnum:
    case kTypeSet:
    case kTypeVarString:
    case kTypeString:
    case kTypeGeometry:
    case kTypeBlob:
    case kTypeTinyBlob:
    case kTypeMediumBlob:
    case kTypeLongBlob: {
      std::string_view v;
      if (!r.LenEncString(&v)) return Truncated(param);
      p.text = std::string(v);
      p.kind = ValidUtf8(v) ? ParamValue::Kind::kText : ParamValue::Kind::kBytes;
      return p;
    }
    default:
      return Status::InvalidArgument("parameter " + std::to_string(param + 1) + " has MySQL type " +
                                     std::to_string(type & 0xff) + ", which MySQL does not define");
  }
}

// Reads the unsigned number at text[*pos..] up to a non-digit; false when there is none.
bool Number(std::string_view text, size_t* pos, uint64_t* out) {
  const char* begin = text.data() + *pos;
  auto [end, ec] = std::from_chars(begin, text.data() + text.size(), *out);
  if (ec != std::errc() || end == begin) return false;
  *pos = static_cast<size_t>(end - text.data());
  return true;
}

// Microseconds of a ".ffffff" fraction at text[*pos..] (none: 0).
uint64_t Fraction(std::string_view text, size_t pos) {
  if (pos >= text.size() || text[pos] != '.') return 0;
  uint64_t micros = 0;
  int digits = 0;
  for (size_t i = pos + 1; i < text.size() && digits < 6 && text[i] >= '0' && text[i] <= '9';
       ++i, ++digits)
    micros = micros * 10 + static_cast<uint64_t>(text[i] - '0');
  for (; digits < 6; ++digits)
    micros *= 10;
  return micros;
}

void AppendDateTime(std::string_view text, bool with_time, WireWriter* out) {
  uint64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  size_t pos = 0;
  const bool date = Number(text, &pos, &y) && pos < text.size() && text[pos++] == '-' &&
                    Number(text, &pos, &mo) && pos < text.size() && text[pos++] == '-' &&
                    Number(text, &pos, &d);
  if (!date || y > 9999) {
    out->Int1(0);  // outside MySQL's range (infinity, years past 9999): the zero value
    return;
  }
  if (with_time && pos < text.size() && text[pos] == ' ') {
    ++pos;
    Number(text, &pos, &h) && pos < text.size() && text[pos++] == ':' && Number(text, &pos, &mi) &&
        pos < text.size() && text[pos++] == ':' && Number(text, &pos, &s);
  }
  if (!with_time) {
    out->Int1(4).Int2(static_cast<uint16_t>(y)).Int1(static_cast<uint8_t>(mo));
    out->Int1(static_cast<uint8_t>(d));
    return;
  }
  out->Int1(11).Int2(static_cast<uint16_t>(y)).Int1(static_cast<uint8_t>(mo));
  out->Int1(static_cast<uint8_t>(d)).Int1(static_cast<uint8_t>(h));
  out->Int1(static_cast<uint8_t>(mi)).Int1(static_cast<uint8_t>(s));
  out->Int4(static_cast<uint32_t>(Fraction(text, pos)));
}

void AppendTime(std::string_view text, WireWriter* out) {
  const bool negative = !text.empty() && text.front() == '-';
  size_t pos = negative ? 1 : 0;
  uint64_t h = 0, mi = 0, s = 0;
  Number(text, &pos, &h) && pos < text.size() && text[pos++] == ':' && Number(text, &pos, &mi) &&
      pos < text.size() && text[pos++] == ':' && Number(text, &pos, &s);
  out->Int1(12).Int1(negative ? 1 : 0).Int4(static_cast<uint32_t>(h / 24));
  out->Int1(static_cast<uint8_t>(h % 24)).Int1(static_cast<uint8_t>(mi));
  out->Int1(static_cast<uint8_t>(s)).Int4(static_cast<uint32_t>(Fraction(text, pos)));
}

}  // namespace

Result<uint32_t> StatementIdOf(std::string_view body) {
  WireReader r(body);
  uint32_t id = 0;
  if (!r.Int4(&id)) return Status::InvalidArgument("the command has no statement id");
  return id;
}

Result<ExecuteRequest> ParseExecute(std::string_view body, size_t param_count,
                                    std::vector<uint16_t>* types,
                                    const std::vector<std::optional<std::string>>& long_data) {
  WireReader r(body);
  ExecuteRequest request;
  uint32_t iterations = 0;
  if (!r.Int4(&request.statement_id) || !r.Int1(&request.flags) || !r.Int4(&iterations)) {
    return Status::InvalidArgument("COM_STMT_EXECUTE is shorter than its header");
  }
  if (param_count == 0) return request;
  std::string_view nulls;
  uint8_t bound = 0;
  if (!r.Bytes((param_count + 7) / 8, &nulls) || !r.Int1(&bound)) {
    return Status::InvalidArgument("COM_STMT_EXECUTE has no NULL bitmap for its " +
                                   std::to_string(param_count) + " parameters");
  }
  if (bound != 0) {
    types->assign(param_count, 0);
    for (size_t i = 0; i < param_count; ++i) {
      uint16_t type = 0;
      if (!r.Int2(&type)) return Truncated(i);
      // Two bytes: the type, then 0x80 when unsigned.
      (*types)[i] =
          static_cast<uint16_t>((type & 0xff) | ((type & 0x8000) != 0 ? kUnsignedParam : 0));
    }
  } else if (types->size() != param_count) {
    return Status::InvalidArgument(
        "COM_STMT_EXECUTE gives no parameter types and none were bound before");
  }
  for (size_t i = 0; i < param_count; ++i) {
    const bool is_null = (static_cast<unsigned char>(nulls[i / 8]) >> (i % 8)) & 1;
    if (is_null) {
      request.params.push_back(ParamValue{});
    } else if (i < long_data.size() && long_data[i]) {
      ParamValue p;
      p.text = *long_data[i];
      p.kind = ValidUtf8(p.text) ? ParamValue::Kind::kText : ParamValue::Kind::kBytes;
      request.params.push_back(std::move(p));
    } else {
      MR_ASSIGN_OR_RETURN(ParamValue p, ReadParam(r, (*types)[i], i));
      request.params.push_back(std::move(p));
    }
  }
  return request;
}

std::string BuildPrepareOk(uint32_t statement_id, uint16_t columns, uint16_t params) {
  WireWriter w;
  w.Int1(0).Int4(statement_id).Int2(columns).Int2(params).Int1(0).Int2(0);
  return w.Take();
}

void AppendBinaryRow(const engine::DataChunk& chunk, size_t row,
                     const std::vector<engine::TypeId>& types,
                     const std::vector<MySqlColumn>& columns, WireWriter* out) {
  const size_t n = types.size();
  out->Int1(0);
  // The NULL bitmap of a result row starts at bit 2.
  std::string bitmap((n + 7 + 2) / 8, '\0');
  for (size_t c = 0; c < n; ++c) {
    if (chunk.IsNull(c, row)) bitmap[(c + 2) / 8] |= static_cast<char>(1 << ((c + 2) % 8));
  }
  out->Raw(bitmap);
  for (size_t c = 0; c < n; ++c) {
    if (chunk.IsNull(c, row)) continue;
    switch (columns[c].type) {
      case kTypeTiny:
        out->Int1(static_cast<uint8_t>(types[c] == TypeId::kBoolean ? chunk.GetBool(c, row)
                                                                    : chunk.GetInt64(c, row)));
        break;
      case kTypeShort:
        out->Int2(static_cast<uint16_t>(chunk.GetInt64(c, row)));
        break;
      case kTypeLong:
        out->Int4(static_cast<uint32_t>(chunk.GetInt64(c, row)));
        break;
      case kTypeLongLong:
        out->Int8(static_cast<uint64_t>(chunk.GetInt64(c, row)));
        break;
      case kTypeFloat: {
        const float f = static_cast<float>(chunk.GetDouble(c, row));
        uint32_t bits = 0;
        std::memcpy(&bits, &f, 4);
        out->Int4(bits);
        break;
      }
      case kTypeDouble: {
        const double d = chunk.GetDouble(c, row);
        uint64_t bits = 0;
        std::memcpy(&bits, &d, 8);
        out->Int8(bits);
        break;
      }
      case kTypeDate:
        AppendDateTime(TemporalText(chunk, c, row), false, out);
        break;
      case kTypeDateTime:
      case kTypeTimestamp:
        AppendDateTime(TemporalText(chunk, c, row), true, out);
        break;
      case kTypeTime:
        AppendTime(TemporalText(chunk, c, row), out);
        break;
      default:
        // Decimals, strings, blobs and DuckDB's other types: as the text protocol sends them.
        AppendTextCell(chunk, c, row, types[c], out);
        break;
    }
  }
}

}  // namespace millrace::server
