#include "incident/time/time.h"

#include <date/date.h>

#include <chrono>
#include <cstdio>
#include <sstream>

namespace ff {

std::string format_time(TimeUs t) {
  using namespace std::chrono;
  sys_time<microseconds> tp{microseconds{t}};
  auto day = date::floor<date::days>(tp);
  date::year_month_day ymd{day};
  date::hh_mm_ss<microseconds> hms{tp - day};
  char buf[64];
  long long us = hms.subseconds().count();
  int n = std::snprintf(
      buf, sizeof buf, "%04d-%02u-%02uT%02lld:%02lld:%02lld", int(ymd.year()),
      unsigned(ymd.month()), unsigned(ymd.day()), static_cast<long long>(hms.hours().count()),
      static_cast<long long>(hms.minutes().count()), static_cast<long long>(hms.seconds().count()));
  std::string out(buf, static_cast<std::size_t>(n));
  if (us != 0) {
    char frac[16];
    std::snprintf(frac, sizeof frac, ".%06lld", us);
    std::string f(frac);
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  out += 'Z';
  return out;
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
