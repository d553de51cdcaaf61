#include "incident/time/time.h"

#include <date/date.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <utility>

namespace ff {

namespace {

using date::floor;
using std::chrono::microseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

// "2026-11-02T10:41:07" for the second `s` (UTC).
std::string date_and_time(date::sys_seconds s) {
  auto day = floor<date::days>(s);
  date::year_month_day ymd{day};
  date::hh_mm_ss<seconds> hms{s - day};
  char buf[64];
  int n = std::snprintf(
      buf, sizeof buf, "%04d-%02u-%02uT%02lld:%02lld:%02lld", int(ymd.year()),
      unsigned(ymd.month()), unsigned(ymd.day()), static_cast<long long>(hms.hours().count()),
      static_cast<long long>(hms.minutes().count()), static_cast<long long>(hms.seconds().count()));
  return std::string(buf, static_cast<std::size_t>(n));
}

// ".000512" for 512 with six digits: the fraction, zero-padded to `digits`.
std::string fraction_text(long long value, int digits) {
  char buf[32];
  int n = std::snprintf(buf, sizeof buf, ".%0*lld", digits, value);
  return std::string(buf, static_cast<std::size_t>(n));
}

// The second a time in microseconds falls in, and the microseconds past it
// (never negative: a time before 1970 counts back to the earlier second).
std::pair<date::sys_seconds, long long> split_micros(TimeUs t) {
  date::sys_time<microseconds> tp{microseconds{t}};
  auto s = floor<seconds>(tp);
  return {s, (tp - s).count()};
}

}  // namespace

std::string format_time(TimeUs t) {
  auto [s, us] = split_micros(t);
  std::string out = date_and_time(s);
  if (us != 0) {
    std::string f = fraction_text(us, 6);
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  out += 'Z';
  return out;
}

std::string format_time_seconds(std::int64_t unix_seconds) {
  // The calendar counts days in an int; keep to the range the microsecond
  // forms have (about 292,000 years either side of 1970).
  constexpr std::int64_t kLimit = std::numeric_limits<TimeUs>::max() / kUsPerSecond;
  unix_seconds = std::clamp(unix_seconds, -kLimit, kLimit);
  return date_and_time(date::sys_seconds{seconds{unix_seconds}}) + 'Z';
}

std::string format_time_micros(TimeUs t) {
  auto [s, us] = split_micros(t);
  return date_and_time(s) + (us != 0 ? fraction_text(us, 6) : "") + 'Z';
}

std::string format_time_journal(TimeUs t) {
  auto [s, us] = split_micros(t);
  return date_and_time(s) + fraction_text(us, 6) + "+00:00";
}

std::string format_time_nanos(std::int64_t unix_ns) {
  date::sys_time<nanoseconds> tp{nanoseconds{unix_ns}};
  auto s = floor<seconds>(tp);
  return date_and_time(s) + fraction_text((tp - s).count(), 9) + 'Z';
}

std::string format_syslog_time(TimeUs t) {
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  date::sys_seconds s = split_micros(t).first;
  auto day = floor<date::days>(s);
  date::year_month_day ymd{day};
  date::hh_mm_ss<seconds> hms{s - day};
  char buf[32];
  int n = std::snprintf(
      buf, sizeof buf, "%s %2u %02lld:%02lld:%02lld", kMonths[unsigned(ymd.month()) - 1],
      unsigned(ymd.day()), static_cast<long long>(hms.hours().count()),
      static_cast<long long>(hms.minutes().count()), static_cast<long long>(hms.seconds().count()));
  return std::string(buf, static_cast<std::size_t>(n));
}

MaybeTime parse_iso8601_utc(const std::string& text) {
  using namespace std::chrono;
  // Accept "YYYY-MM-DDTHH:MM:SS[.frac][Z|+hh:mm|-hh:mm]" and the ' ' separator.
  int y, mo, d, h, mi, s;
  char sep;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d%n", &y, &mo, &d, &sep, &h, &mi, &s,
                  &consumed) != 7 ||
      (sep != 'T' && sep != ' ' && sep != 't'))
    return std::nullopt;
  date::year_month_day ymd{date::year{y}, date::month{unsigned(mo)}, date::day{unsigned(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 60) return std::nullopt;
  std::size_t i = static_cast<std::size_t>(consumed);
  long long us = 0;
  if (i < text.size() && (text[i] == '.' || text[i] == ',')) {
    ++i;
    int digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (digits < 6) us = us * 10 + (text[i] - '0');
      ++digits;
      ++i;
    }
    for (; digits < 6; ++digits) us *= 10;
  }
  long long offset_s = 0;
  if (i < text.size()) {
    char c = text[i];
    if (c == 'Z' || c == 'z') {
      ++i;
    } else if (c == '+' || c == '-') {
      int oh = 0, om = 0;
      if (std::sscanf(text.c_str() + i + 1, "%2d:%2d", &oh, &om) != 2 &&
          std::sscanf(text.c_str() + i + 1, "%2d%2d", &oh, &om) != 2)
        return std::nullopt;
      offset_s = (oh * 3600LL + om * 60LL) * (c == '+' ? 1 : -1);
      i = text.size();
    }
  }
  if (i != text.size()) return std::nullopt;
  auto days = date::sys_days{ymd}.time_since_epoch();
  long long secs = duration_cast<seconds>(days).count() + h * 3600LL + mi * 60LL + s - offset_s;
  return secs * kUsPerSecond + us;
}

}  // namespace ff
