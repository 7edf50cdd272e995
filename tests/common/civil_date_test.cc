#include "common/civil_date.h"

#include <gtest/gtest.h>

#include <chrono>

namespace millrace {
namespace {

void ExpectDate(int64_t days, int64_t year, unsigned month, unsigned day) {
  const CivilDate date = CivilFromDays(days);
  EXPECT_EQ(date.year, year) << days;
  EXPECT_EQ(date.month, month) << days;
  EXPECT_EQ(date.day, day) << days;
}

TEST(CivilDateTest, KnownDates) {
  ExpectDate(0, 1970, 1, 1);
  ExpectDate(-1, 1969, 12, 31);
  ExpectDate(11016, 2000, 2, 29);   // a leap day of a year divisible by 400
  ExpectDate(-25509, 1900, 2, 28);  // 1900 is not a leap year: March 1 follows
  ExpectDate(-25508, 1900, 3, 1);
  ExpectDate(-719528, 0, 1, 1);     // year 0 is 1 BC
  ExpectDate(-719529, -1, 12, 31);  // 2 BC
  ExpectDate(2932896, 9999, 12, 31);
}

// Every day of 1600-2400 against the standard library's calendar.
TEST(CivilDateTest, AgreesWithTheStandardLibrary) {
  using std::chrono::days;
  using std::chrono::sys_days;
  using std::chrono::year_month_day;
  const int64_t first = sys_days(std::chrono::year{1600} / 1 / 1).time_since_epoch().count();
  const int64_t last = sys_days(std::chrono::year{2400} / 12 / 31).time_since_epoch().count();
  for (int64_t n = first; n <= last; ++n) {
    const year_month_day want{sys_days(days(n))};
    const CivilDate got = CivilFromDays(n);
    ASSERT_EQ(got.year, static_cast<int>(want.year())) << n;
    ASSERT_EQ(got.month, static_cast<unsigned>(want.month())) << n;
    ASSERT_EQ(got.day, static_cast<unsigned>(want.day())) << n;
  }
}

}  // namespace
}  // namespace millrace
