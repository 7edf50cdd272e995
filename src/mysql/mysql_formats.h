// MySQL's binary formats of DECIMAL and the temporal types, read into the text Millrace gives
// them, and the text of floating-point numbers; the row image (binlog_values.h) and MySQL 8's
// binary JSON (mysql_json.h) both store values in these formats.
//
// Contract
// - Text forms: DECIMAL the exact decimal with `scale` fractional digits; dates 'YYYY-MM-DD';
//   times of day 'HH:MM:SS'; a fraction '.f' with fsp digits ('' for fsp 0); a duration
//   '[-]HH:MM:SS[.f]', hours beyond 24; epoch seconds 'YYYY-MM-DD HH:MM:SS[.f]+00' in UTC;
//   floats the shortest text that reads back as the same value.
// - DecodeDecimal, ReadFraction and ReadTime2 give nullopt for bytes cut short (and
//   DecodeDecimal for a group holding more digits than its width); the caller names the column.
//   ReadFraction and ReadTime2 read at the Reader and advance it.
// - Thread-safety: pure functions (the readers use the caller's Reader).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mysql/byte_reader.h"

namespace millrace::mysql {

// The bytes of a DECIMAL(precision, scale) in its binary format.
size_t DecimalSize(int precision, int scale);
// A DECIMAL(precision, scale) in its binary format (DecimalSize bytes) as its decimal text.
std::optional<std::string> DecodeDecimal(std::string_view raw, int precision, int scale);

// The fraction of a DATETIME2/TIMESTAMP2 (compat56.cc: my_datetime_packed_from_binary), in
// microseconds: fsp 1-2 in one byte of hundredths, 3-4 in two bytes of 1/10000 s, 5-6 in three
// bytes of microseconds, big-endian.
std::optional<int64_t> ReadFraction(Reader& r, int fsp);
// A TIME2 (compat56.cc: my_time_packed_from_binary) as signed microseconds. Its packed form is
// hour << 12 | minute << 6 | second, shifted left 24 bits over the microseconds, negated for a
// negative time. With fsp < 5 the integer part is stored apart from the fraction: a negative
// time with a fraction stores the fraction's complement under the next integer down.
std::optional<int64_t> ReadTime2(Reader& r, int fsp);

// A calendar date and time of day, as MySQL packs them.
struct CivilTime {
  int64_t year = 0, month = 0, day = 0;
  int64_t hour = 0, minute = 0, second = 0;
  int64_t micros = 0;
};

// The text forms DuckDB casts from, appended to `out`: ".ffffff" cut to fsp digits (nothing for
// fsp 0), YYYY-MM-DD, HH:MM:SS (hours may pass 99). Fields are non-negative.
void AppendFraction(std::string& out, int64_t micros, int fsp);
void AppendDate(std::string& out, int64_t year, int64_t month, int64_t day);
void AppendTimeOfDay(std::string& out, int64_t hour, int64_t minute, int64_t second);
std::string DateText(int64_t year, int64_t month, int64_t day);
// "YYYY-MM-DD HH:MM:SS[.f]"
std::string DateTimeText(const CivilTime& t, int fsp);
// Signed microseconds as a TIME.
std::string DurationText(int64_t micros, int fsp);
// Seconds since 1970-01-01 UTC, and their microseconds, as a TIMESTAMP in UTC.
std::string EpochText(uint64_t seconds, int64_t micros, int fsp);

template <typename T>
std::string ShortestFloat(T value) {
  char text[64];
  auto [end, ec] = std::to_chars(text, text + sizeof(text), value);
  return ec == std::errc() ? std::string(text, end) : std::to_string(value);
}

}  // namespace millrace::mysql
