#include "mysql/mysql_formats.h"

#include "common/civil_date.h"
#include "common/strings.h"

namespace millrace::mysql {
namespace {

// DECIMAL's binary format (strings/decimal.c, decimal2bin): the integer digits, then the
// fractional ones, each side in groups of nine digits stored as 4-byte big-endian numbers, the
// leftover digits of the integer side first and of the fractional side last in the fewest bytes
// that hold them; a negative number has every byte inverted, and the first bit is flipped.
constexpr int kDigitsPerWord = 9;
constexpr int kBytesForDigits[kDigitsPerWord + 1] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};

}  // namespace

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
    std::string text;
    AppendZeroPadded(*v, digits, &text);
    if (text.size() != static_cast<size_t>(digits)) return std::nullopt;
    return text;
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

std::optional<int64_t> ReadFraction(Reader& r, int fsp) {
  if (fsp == 0) return 0;
  const int bytes = (fsp + 1) / 2;
  auto v = r.Big(bytes);
  if (!v) return std::nullopt;
  static constexpr int64_t kUnit[4] = {0, 10000, 100, 1};
  return SignExtend(*v, bytes * 8) * kUnit[bytes];
}

namespace {

// "first<sep>second<sep>third", the last two of two digits: a date's or a time of day's fields.
// A change stream formats every date and time of every row: snprintf's format parsing was ~5%
// of the server's CPU applying a MariaDB backlog.
void AppendThree(std::string& out, int64_t first, int first_width, char sep, int64_t second,
                 int64_t third) {
  AppendZeroPadded(static_cast<uint64_t>(first), first_width, &out);
  out += sep;
  AppendZeroPadded(static_cast<uint64_t>(second), 2, &out);
  out += sep;
  AppendZeroPadded(static_cast<uint64_t>(third), 2, &out);
}

}  // namespace

void AppendFraction(std::string& out, int64_t micros, int fsp) {
  if (fsp == 0) return;
  out += '.';
  char digits[6];
  for (int i = 5; i >= 0; --i, micros /= 10)
    digits[i] = static_cast<char>('0' + micros % 10);
  out.append(digits, static_cast<size_t>(fsp));
}

void AppendDate(std::string& out, int64_t year, int64_t month, int64_t day) {
  AppendThree(out, year, 4, '-', month, day);
}

void AppendTimeOfDay(std::string& out, int64_t hour, int64_t minute, int64_t second) {
  AppendThree(out, hour, 2, ':', minute, second);
}

std::string DateText(int64_t year, int64_t month, int64_t day) {
  std::string out;
  AppendDate(out, year, month, day);
  return out;
}

std::string DateTimeText(const CivilTime& t, int fsp) {
  std::string out;
  out.reserve(30);
  AppendDate(out, t.year, t.month, t.day);
  out += ' ';
  AppendTimeOfDay(out, t.hour, t.minute, t.second);
  AppendFraction(out, t.micros, fsp);
  return out;
}

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
  std::string out(negative ? "-" : "");
  AppendTimeOfDay(out, seconds / 3600, seconds / 60 % 60, seconds % 60);
  AppendFraction(out, micros % 1000000, fsp);
  return out;
}

std::string EpochText(uint64_t seconds, int64_t micros, int fsp) {
  CivilTime t;
  const int64_t s = static_cast<int64_t>(seconds);
  const CivilDate date = CivilFromDays(s / 86400);
  t.year = date.year;
  t.month = date.month;
  t.day = date.day;
  t.hour = s % 86400 / 3600;
  t.minute = s % 3600 / 60;
  t.second = s % 60;
  t.micros = micros;
  return DateTimeText(t, fsp) + "+00";
}

}  // namespace millrace::mysql
