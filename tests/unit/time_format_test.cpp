// Unit tests for the time formats of incident/time/time.h: each form's exact
// bytes, times before 1970, and that neither TZ nor the C library's calendar
// can change them (the C library's gmtime is the oracle for the calendar).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

#include "incident/time/time.h"

namespace ff {
namespace {

TimeUs at(const std::string& iso) {
  MaybeTime t = parse_iso8601_utc(iso);
  EXPECT_TRUE(t.has_value()) << iso;
  return t.value_or(0);
}

TEST(TimeFormat, TrimmedFractionForTheEngine) {
  EXPECT_EQ(format_time(at("2026-11-02T10:41:07.512004Z")), "2026-11-02T10:41:07.512004Z");
  EXPECT_EQ(format_time(at("2026-11-02T10:41:07.5Z")), "2026-11-02T10:41:07.5Z");
  EXPECT_EQ(format_time(at("2026-11-02T10:41:07Z")), "2026-11-02T10:41:07Z");
}

TEST(TimeFormat, WholeSeconds) {
  EXPECT_EQ(format_time_seconds(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(format_time_seconds(1796014862), "2026-11-30T05:01:02Z");
  EXPECT_EQ(format_time_seconds(-1), "1969-12-31T23:59:59Z");
  // Past 2038 and Slurm's last 32-bit second (NO_VAL - 1).
  EXPECT_EQ(format_time_seconds(0xfffffffdLL), "2106-02-07T06:28:13Z");
}

TEST(TimeFormat, MicrosOnlyWhenThereIsAFraction) {
  EXPECT_EQ(format_time_micros(at("2026-11-02T10:41:07Z")), "2026-11-02T10:41:07Z");
  EXPECT_EQ(format_time_micros(at("2026-11-02T10:41:07.5Z")), "2026-11-02T10:41:07.500000Z");
  EXPECT_EQ(format_time_micros(at("2026-11-02T10:41:07.000001Z")), "2026-11-02T10:41:07.000001Z");
  // Before 1970 the fraction counts from the earlier second.
  EXPECT_EQ(format_time_micros(-1), "1969-12-31T23:59:59.999999Z");
}

TEST(TimeFormat, JournalAlwaysSixDigitsAndOffset) {
  EXPECT_EQ(format_time_journal(at("2026-11-02T10:41:07Z")), "2026-11-02T10:41:07.000000+00:00");
  EXPECT_EQ(format_time_journal(at("2026-11-02T10:41:07.012Z")),
            "2026-11-02T10:41:07.012000+00:00");
}

TEST(TimeFormat, NanosAlwaysNineDigits) {
  EXPECT_EQ(format_time_nanos(0), "1970-01-01T00:00:00.000000000Z");
  EXPECT_EQ(format_time_nanos(1796015400123456789LL), "2026-11-30T05:10:00.123456789Z");
  EXPECT_EQ(format_time_nanos(-1), "1969-12-31T23:59:59.999999999Z");
}

TEST(TimeFormat, SyslogPadsTheDayWithASpace) {
  EXPECT_EQ(format_syslog_time(at("2026-11-02T10:41:07.9Z")), "Nov  2 10:41:07");
  EXPECT_EQ(format_syslog_time(at("2026-01-30T00:00:00Z")), "Jan 30 00:00:00");
  EXPECT_EQ(format_syslog_time(at("2024-02-29T23:59:59Z")), "Feb 29 23:59:59");
}

// What the hand-written formatters wrote (gmtime + strftime / snprintf);
// every form must keep those bytes, so compare over leap days, century
// years and both sides of 1970.
std::string gmtime_text(std::int64_t seconds, const char* format) {
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::size_t n = std::strftime(buf, sizeof buf, format, &tm);
  return std::string(buf, n);
}

TEST(TimeFormat, SameCalendarAsTheCLibrary) {
  // Every 7 days and 3 hours and 17 seconds from 1901 to 2200.
  for (std::int64_t s = -2'145'916'800LL; s < 7'258'118'400LL; s += 7 * 86400 + 3 * 3600 + 17) {
    ASSERT_EQ(format_time_seconds(s), gmtime_text(s, "%Y-%m-%dT%H:%M:%SZ")) << s;
    ASSERT_EQ(format_syslog_time(s * kUsPerSecond), gmtime_text(s, "%b %e %H:%M:%S")) << s;
    ASSERT_EQ(format_time_micros(s * kUsPerSecond + 250),
              gmtime_text(s, "%Y-%m-%dT%H:%M:%S.000250Z"))
        << s;
  }
}

// Sets TZ for one test and puts the old value back.
class ScopedTimeZone {
 public:
  explicit ScopedTimeZone(const char* zone) {
    if (const char* old = std::getenv("TZ")) old_ = old;
    setenv("TZ", zone, 1);
    tzset();
  }
  ~ScopedTimeZone() {
    if (old_)
      setenv("TZ", old_->c_str(), 1);
    else
      unsetenv("TZ");
    tzset();
  }
  ScopedTimeZone(const ScopedTimeZone&) = delete;
  ScopedTimeZone& operator=(const ScopedTimeZone&) = delete;

 private:
  std::optional<std::string> old_;
};

TEST(TimeFormat, TheProcessZoneChangesNothing) {
  TimeUs t = at("2026-11-02T01:41:07.25Z");  // a day earlier in New York
  std::string utc[] = {
      format_time(t),         format_time_seconds(t / kUsPerSecond), format_time_micros(t),
      format_time_journal(t), format_time_nanos(t * 1000),           format_syslog_time(t)};
  for (const char* zone : {"America/New_York", "Asia/Kolkata", "Pacific/Kiritimati"}) {
    ScopedTimeZone tz(zone);
    EXPECT_EQ(format_time(t), utc[0]) << zone;
    EXPECT_EQ(format_time_seconds(t / kUsPerSecond), utc[1]) << zone;
    EXPECT_EQ(format_time_micros(t), utc[2]) << zone;
    EXPECT_EQ(format_time_journal(t), utc[3]) << zone;
    EXPECT_EQ(format_time_nanos(t * 1000), utc[4]) << zone;
    EXPECT_EQ(format_syslog_time(t), utc[5]) << zone;
  }
  EXPECT_EQ(utc[1], "2026-11-02T01:41:07Z");
}

}  // namespace
}  // namespace ff
