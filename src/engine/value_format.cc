#include "engine/value_format.h"

#include <array>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>

#include "common/civil_date.h"
#include "common/strings.h"

namespace millrace::engine {
namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;

void AppendUInt128(unsigned __int128 value, std::string* out) {
  char buf[48];
  int pos = sizeof(buf);
  do {
    buf[--pos] = static_cast<char>('0' + static_cast<int>(value % 10));
    value /= 10;
  } while (value != 0);
  out->append(buf + pos, sizeof(buf) - pos);
}

void AppendInt128(__int128 value, std::string* out) {
  if (value < 0) {
    out->push_back('-');
    // -(value + 1) + 1 avoids overflow at the minimum value.
    AppendUInt128(static_cast<unsigned __int128>(-(value + 1)) + 1, out);
    return;
  }
  AppendUInt128(static_cast<unsigned __int128>(value), out);
}

__int128 HugeIntAt(const void* data, size_t row) {
  const auto& h = static_cast<const duckdb_hugeint*>(data)[row];
  return (static_cast<__int128>(h.upper) << 64) | static_cast<__int128>(h.lower);
}

template <typename T>
void AppendNumber(T value, std::string* out) {
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  out->append(buf, ec == std::errc() ? ptr : buf);
}

void AppendFloating(double value, bool is_float, std::string* out) {
  if (std::isnan(value)) {
    out->append("nan");
  } else if (std::isinf(value)) {
    out->append(value < 0 ? "-inf" : "inf");
  } else {
    const size_t start = out->size();
    if (is_float) {
      AppendNumber(static_cast<float>(value), out);
    } else {
      AppendNumber(value, out);
    }
    // DuckDB prints integral floating values with a ".0" (1501.0), unlike to_chars.
    if (out->find_first_of(".e", start) == std::string::npos) out->append(".0");
  }
}

void AppendDate(int64_t days, std::string* out) {
  const CivilDate date = CivilFromDays(days);
  const int64_t y = date.year;
  AppendZeroPadded(static_cast<uint64_t>(y <= 0 ? 1 - y : y), 4, out);
  out->push_back('-');
  AppendZeroPadded(date.month, 2, out);
  out->push_back('-');
  AppendZeroPadded(date.day, 2, out);
  if (y <= 0) out->append(" (BC)");
}

// "HH:MM:SS" plus ".ffffff" without trailing zeros when there is a fraction.
void AppendTimeOfDay(int64_t micros, std::string* out) {
  const int64_t secs = micros / kMicrosPerSecond;
  const int64_t frac = micros % kMicrosPerSecond;
  AppendZeroPadded(static_cast<uint64_t>(secs / 3600), 2, out);
  out->push_back(':');
  AppendZeroPadded(static_cast<uint64_t>(secs / 60 % 60), 2, out);
  out->push_back(':');
  AppendZeroPadded(static_cast<uint64_t>(secs % 60), 2, out);
  if (frac != 0) {
    out->push_back('.');
    AppendZeroPadded(static_cast<uint64_t>(frac), 6, out);
    while (out->back() == '0')
      out->pop_back();
  }
}

void AppendTimestampMicros(int64_t micros, std::string* out) {
  if (micros == std::numeric_limits<int64_t>::max()) {
    out->append("infinity");
    return;
  }
  if (micros == -std::numeric_limits<int64_t>::max()) {
    out->append("-infinity");
    return;
  }
  int64_t days = micros / kMicrosPerDay;
  int64_t rest = micros % kMicrosPerDay;
  if (rest < 0) {
    rest += kMicrosPerDay;
    --days;
  }
  // A BC date keeps its "(BC)" before the time, as DuckDB prints it.
  AppendDate(days, out);
  out->push_back(' ');
  AppendTimeOfDay(rest, out);
}

void AppendInterval(const duckdb_interval& iv, std::string* out) {
  bool any = false;
  auto part = [&](int64_t n, const char* unit) {
    if (n == 0) return;
    if (any) out->push_back(' ');
    AppendNumber(n, out);
    out->push_back(' ');
    out->append(unit);
    if (n != 1 && n != -1) out->push_back('s');
    any = true;
  };
  part(iv.months / 12, "year");
  part(iv.months % 12, "month");
  part(iv.days, "day");
  if (iv.micros != 0) {
    if (any) out->push_back(' ');
    int64_t micros = iv.micros;
    if (micros < 0) {
      out->push_back('-');
      micros = -micros;
    }
    AppendTimeOfDay(micros, out);
    any = true;
  }
  if (!any) out->append("00:00:00");
}

void AppendUuid(const void* data, size_t row, std::string* out) {
  const auto& h = static_cast<const duckdb_hugeint*>(data)[row];
  // DuckDB stores UUIDs with the top bit flipped so they sort as signed integers.
  const uint64_t upper = static_cast<uint64_t>(h.upper) ^ (uint64_t{1} << 63);
  char buf[40];
  std::snprintf(buf, sizeof(buf),
                "%08" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%012" PRIx64, upper >> 32,
                (upper >> 16) & 0xffff, upper & 0xffff, uint64_t{h.lower} >> 48,
                uint64_t{h.lower} & uint64_t{0xffffffffffff});
  out->append(buf);
}

void AppendDecimal(const ColumnType& type, const void* data, size_t row, std::string* out) {
  __int128 value = 0;
  if (type.decimal_width <= 4) {
    value = static_cast<const int16_t*>(data)[row];
  } else if (type.decimal_width <= 9) {
    value = static_cast<const int32_t*>(data)[row];
  } else if (type.decimal_width <= 18) {
    value = static_cast<const int64_t*>(data)[row];
  } else {
    value = HugeIntAt(data, row);
  }
  std::string digits;
  const bool negative = value < 0;
  AppendInt128(negative ? -value : value, &digits);
  if (negative) out->push_back('-');
  if (type.decimal_scale == 0) {
    out->append(digits);
    return;
  }
  if (digits.size() <= type.decimal_scale) {
    digits.insert(0, type.decimal_scale + 1 - digits.size(), '0');
  }
  out->append(digits, 0, digits.size() - type.decimal_scale);
  out->push_back('.');
  out->append(digits, digits.size() - type.decimal_scale, std::string::npos);
}

// Strings inside nested values are quoted only when they would otherwise be ambiguous (as
// DuckDB does since 1.1); top-level strings are raw.
bool NeedsQuotes(std::string_view s) {
  if (s.empty() || s == "NULL" || s == "null") return true;
  if (s.front() == ' ' || s.back() == ' ') return true;
  return s.find_first_of(",'\"[]{}:=\\\n\t") != std::string_view::npos;
}

void AppendNested(duckdb_vector vector, duckdb_logical_type logical, size_t row, std::string* out,
                  bool nested);

void AppendNestedChild(duckdb_vector vector, duckdb_logical_type logical, size_t row,
                       std::string* out) {
  AppendNested(vector, logical, row, out, true);
}

void AppendNested(duckdb_vector vector, duckdb_logical_type logical, size_t row, std::string* out,
                  bool nested) {
  uint64_t* validity = duckdb_vector_get_validity(vector);
  if (validity != nullptr && !duckdb_validity_row_is_valid(validity, row)) {
    out->append("NULL");
    return;
  }
  const ColumnType type = ColumnTypeOf(logical);
  const void* data = duckdb_vector_get_data(vector);
  switch (type.id) {
    case TypeId::kBoolean:
      out->append(static_cast<const bool*>(data)[row] ? "true" : "false");
      return;
    case TypeId::kTinyInt:
    case TypeId::kSmallInt:
    case TypeId::kInteger:
    case TypeId::kBigInt:
    case TypeId::kUTinyInt:
    case TypeId::kUSmallInt:
    case TypeId::kUInteger:
      AppendNumber(IntegerAt(type.id, data, row), out);
      return;
    case TypeId::kUBigInt:
      AppendNumber(static_cast<const uint64_t*>(data)[row], out);
      return;
    case TypeId::kHugeInt:
      AppendInt128(HugeIntAt(data, row), out);
      return;
    case TypeId::kUHugeInt: {
      const auto& h = static_cast<const duckdb_uhugeint*>(data)[row];
      AppendUInt128((static_cast<unsigned __int128>(h.upper) << 64) | h.lower, out);
      return;
    }
    case TypeId::kFloat:
      AppendFloating(static_cast<const float*>(data)[row], true, out);
      return;
    case TypeId::kDouble:
      AppendFloating(static_cast<const double*>(data)[row], false, out);
      return;
    case TypeId::kDecimal:
      AppendDecimal(type, data, row, out);
      return;
    case TypeId::kVarchar:
    case TypeId::kBlob:
    case TypeId::kBit: {
      std::string_view s = StringAt(data, row);
      if (nested && type.id == TypeId::kVarchar && NeedsQuotes(s)) {
        out->push_back('\'');
        for (char ch : s) {
          if (ch == '\'' || ch == '\\') out->push_back('\\');
          out->push_back(ch);
        }
        out->push_back('\'');
      } else {
        out->append(s);
      }
      return;
    }
    case TypeId::kDate: {
      const int32_t days = static_cast<const int32_t*>(data)[row];
      if (days == std::numeric_limits<int32_t>::max()) {
        out->append("infinity");
      } else if (days == -std::numeric_limits<int32_t>::max()) {
        out->append("-infinity");
      } else {
        AppendDate(days, out);
      }
      return;
    }
    case TypeId::kTime:
      AppendTimeOfDay(static_cast<const int64_t*>(data)[row], out);
      return;
    case TypeId::kTimeTz: {
      // 40 bits of microseconds, 24 bits of offset (biased), as DuckDB packs TIME WITH TIME ZONE.
      const uint64_t bits = static_cast<const uint64_t*>(data)[row];
      const int64_t micros = static_cast<int64_t>(bits >> 24);
      constexpr int64_t kMaxOffset = 16 * 60 * 60 - 1;
      const int64_t offset = kMaxOffset - static_cast<int64_t>(bits & 0xffffff);
      AppendTimeOfDay(micros, out);
      char buf[16];
      const int64_t abs = offset < 0 ? -offset : offset;
      std::snprintf(buf, sizeof(buf), "%c%02" PRId64, offset < 0 ? '-' : '+', abs / 3600);
      out->append(buf);
      if (abs % 3600 != 0) {
        std::snprintf(buf, sizeof(buf), ":%02" PRId64, (abs / 60) % 60);
        out->append(buf);
      }
      return;
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampSec:
    case TypeId::kTimestampMs:
      AppendTimestampMicros(EpochMicrosAt(type.id, data, row), out);
      return;
    case TypeId::kTimestampNs: {
      const int64_t nanos = static_cast<const int64_t*>(data)[row];
      int64_t micros = nanos / 1000;
      int64_t extra = nanos % 1000;
      if (extra < 0) {
        extra += 1000;
        --micros;
      }
      AppendTimestampMicros(micros, out);
      if (extra != 0) {
        if (out->find('.', out->size() - 7) == std::string::npos) out->append(".000000");
        // Pad the micro fraction to 6 digits, then add the nanos.
        const size_t dot = out->rfind('.');
        out->append(6 - (out->size() - dot - 1), '0');
        char buf[8];
        std::snprintf(buf, sizeof(buf), "%03" PRId64, extra);
        std::string tail(buf);
        while (!tail.empty() && tail.back() == '0')
          tail.pop_back();
        out->append(tail);
      }
      return;
    }
    case TypeId::kTimestampTz:
      AppendTimestampMicros(static_cast<const int64_t*>(data)[row], out);
      out->append("+00");
      return;
    case TypeId::kInterval:
      AppendInterval(static_cast<const duckdb_interval*>(data)[row], out);
      return;
    case TypeId::kUuid:
      AppendUuid(data, row, out);
      return;
    case TypeId::kEnum: {
      const duckdb_type internal = duckdb_enum_internal_type(logical);
      idx_t index = 0;
      if (internal == DUCKDB_TYPE_UTINYINT) {
        index = static_cast<const uint8_t*>(data)[row];
      } else if (internal == DUCKDB_TYPE_USMALLINT) {
        index = static_cast<const uint16_t*>(data)[row];
      } else {
        index = static_cast<const uint32_t*>(data)[row];
      }
      char* value = duckdb_enum_dictionary_value(logical, index);
      if (nested) out->push_back('\'');
      out->append(value != nullptr ? value : "");
      if (nested) out->push_back('\'');
      duckdb_free(value);
      return;
    }
    case TypeId::kList:
    case TypeId::kMap: {
      const auto& entry = static_cast<const duckdb_list_entry*>(data)[row];
      duckdb_vector child = duckdb_list_vector_get_child(vector);
      duckdb_logical_type child_type = duckdb_list_type_child_type(logical);
      const bool is_map = type.id == TypeId::kMap;
      out->push_back(is_map ? '{' : '[');
      for (idx_t i = 0; i < entry.length; ++i) {
        if (i > 0) out->append(", ");
        if (is_map) {
          // A map's child is STRUCT(key, value).
          duckdb_vector key_vec = duckdb_struct_vector_get_child(child, 0);
          duckdb_vector value_vec = duckdb_struct_vector_get_child(child, 1);
          duckdb_logical_type key_type = duckdb_struct_type_child_type(child_type, 0);
          duckdb_logical_type value_type = duckdb_struct_type_child_type(child_type, 1);
          AppendNestedChild(key_vec, key_type, entry.offset + i, out);
          out->push_back('=');
          AppendNestedChild(value_vec, value_type, entry.offset + i, out);
          duckdb_destroy_logical_type(&key_type);
          duckdb_destroy_logical_type(&value_type);
        } else {
          AppendNestedChild(child, child_type, entry.offset + i, out);
        }
      }
      out->push_back(is_map ? '}' : ']');
      duckdb_destroy_logical_type(&child_type);
      return;
    }
    case TypeId::kArray: {
      const idx_t size = duckdb_array_type_array_size(logical);
      duckdb_vector child = duckdb_array_vector_get_child(vector);
      duckdb_logical_type child_type = duckdb_array_type_child_type(logical);
      out->push_back('[');
      for (idx_t i = 0; i < size; ++i) {
        if (i > 0) out->append(", ");
        AppendNestedChild(child, child_type, row * size + i, out);
      }
      out->push_back(']');
      duckdb_destroy_logical_type(&child_type);
      return;
    }
    case TypeId::kStruct: {
      const idx_t count = duckdb_struct_type_child_count(logical);
      out->push_back('{');
      for (idx_t i = 0; i < count; ++i) {
        if (i > 0) out->append(", ");
        char* name = duckdb_struct_type_child_name(logical, i);
        out->push_back('\'');
        out->append(name != nullptr ? name : "");
        out->append("': ");
        duckdb_free(name);
        duckdb_logical_type child_type = duckdb_struct_type_child_type(logical, i);
        AppendNestedChild(duckdb_struct_vector_get_child(vector, i), child_type, row, out);
        duckdb_destroy_logical_type(&child_type);
      }
      out->push_back('}');
      return;
    }
    case TypeId::kUnion: {
      // Member 0 is the tag; member tag+1 holds the value.
      duckdb_vector tags = duckdb_struct_vector_get_child(vector, 0);
      const uint8_t tag = static_cast<const uint8_t*>(duckdb_vector_get_data(tags))[row];
      duckdb_logical_type member = duckdb_union_type_member_type(logical, tag);
      AppendNested(duckdb_struct_vector_get_child(vector, tag + 1), member, row, out, nested);
      duckdb_destroy_logical_type(&member);
      return;
    }
    default:
      out->append("<unsupported type " + TypeName(type) + ">");
      return;
  }
}

}  // namespace

ColumnType ColumnTypeOf(duckdb_logical_type logical) {
  ColumnType type;
  type.id = static_cast<TypeId>(duckdb_get_type_id(logical));
  if (type.id == TypeId::kDecimal) {
    type.decimal_width = duckdb_decimal_width(logical);
    type.decimal_scale = duckdb_decimal_scale(logical);
  }
  return type;
}

int64_t IntegerAt(TypeId type, const void* data, size_t row) {
  switch (type) {
    case TypeId::kBoolean:
      return static_cast<const bool*>(data)[row] ? 1 : 0;
    case TypeId::kTinyInt:
      return static_cast<const int8_t*>(data)[row];
    case TypeId::kSmallInt:
      return static_cast<const int16_t*>(data)[row];
    case TypeId::kInteger:
      return static_cast<const int32_t*>(data)[row];
    case TypeId::kBigInt:
      return static_cast<const int64_t*>(data)[row];
    case TypeId::kUTinyInt:
      return static_cast<const uint8_t*>(data)[row];
    case TypeId::kUSmallInt:
      return static_cast<const uint16_t*>(data)[row];
    case TypeId::kUInteger:
      return static_cast<const uint32_t*>(data)[row];
    case TypeId::kUBigInt:
      return static_cast<int64_t>(static_cast<const uint64_t*>(data)[row]);
    case TypeId::kHugeInt:
      return static_cast<int64_t>(HugeIntAt(data, row));
    default:
      return 0;
  }
}

double DecimalAsDouble(const ColumnType& type, const void* data, size_t row) {
  double unscaled = 0;
  if (type.decimal_width <= 4) {
    unscaled = static_cast<const int16_t*>(data)[row];
  } else if (type.decimal_width <= 9) {
    unscaled = static_cast<const int32_t*>(data)[row];
  } else if (type.decimal_width <= 18) {
    unscaled = static_cast<double>(static_cast<const int64_t*>(data)[row]);
  } else {
    unscaled = static_cast<double>(HugeIntAt(data, row));
  }
  return unscaled / std::pow(10.0, type.decimal_scale);
}

std::string_view StringAt(const void* data, size_t row) {
  auto* s = const_cast<duckdb_string_t*>(&static_cast<const duckdb_string_t*>(data)[row]);
  return {duckdb_string_t_data(s), duckdb_string_t_length(*s)};
}

int64_t EpochMicrosAt(TypeId type, const void* data, size_t row) {
  switch (type) {
    case TypeId::kDate:
      return int64_t{static_cast<const int32_t*>(data)[row]} * kMicrosPerDay;
    case TypeId::kTimestampSec:
      return static_cast<const int64_t*>(data)[row] * kMicrosPerSecond;
    case TypeId::kTimestampMs:
      return static_cast<const int64_t*>(data)[row] * 1000;
    case TypeId::kTimestampNs:
      return static_cast<const int64_t*>(data)[row] / 1000;
    default:
      return static_cast<const int64_t*>(data)[row];
  }
}

void FormatCell(duckdb_vector vector, duckdb_logical_type logical, size_t row, std::string* out) {
  AppendNested(vector, logical, row, out, false);
}

}  // namespace millrace::engine
