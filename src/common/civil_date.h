// Civil dates of the proleptic Gregorian calendar from days since 1970-01-01 (Howard Hinnant's
// civil_from_days), as DuckDB's DATE and MySQL's epoch seconds count them.
//
// Contract
// - CivilFromDays(days) is the date `days` after 1970-01-01 (before it when negative), for any
//   int64 that does not overflow days + 719468. Years before 1 are astronomical: year 0 is
//   1 BC, -1 is 2 BC.
// - Thread-safety: a pure function.
#pragma once

#include <cstdint>

namespace millrace {

struct CivilDate {
  int64_t year = 1970;
  unsigned month = 1;  // 1-12
  unsigned day = 1;    // 1-31
};

constexpr CivilDate CivilFromDays(int64_t days) {
  days += 719468;  // days from 0000-03-01, the start of a 400-year era
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto doe = static_cast<unsigned>(days - era * 146097);                 // [0, 146096]
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                // [0, 365]
  const unsigned mp = (5 * doy + 2) / 153;                                     // March = 0
  CivilDate date;
  date.day = doy - (153 * mp + 2) / 5 + 1;
  date.month = mp < 10 ? mp + 3 : mp - 9;
  date.year = static_cast<int64_t>(yoe) + era * 400 + (date.month <= 2 ? 1 : 0);
  return date;
}

}  // namespace millrace
