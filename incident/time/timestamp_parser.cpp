#include "incident/time/timestamp_parser.h"

#include <date/tz.h>

#include <cctype>
#include <cstring>
#include <stdexcept>

namespace ff {
namespace {

bool digit(char c) {
  return c >= '0' && c <= '9';
}

// Reads exactly n digits at s[i]; advances i.
bool num(std::string_view s, std::size_t& i, int n, int& out) {
  if (i + static_cast<std::size_t>(n) > s.size()) return false;
  int v = 0;
  for (int k = 0; k < n; ++k) {
    char c = s[i + static_cast<std::size_t>(k)];
    if (!digit(c)) return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  i += static_cast<std::size_t>(n);
  return true;
}

// Day of month: 1 or 2 digits, possibly space-padded ("Nov  2").
bool day_num(std::string_view s, std::size_t& i, int& out) {
  if (i < s.size() && s[i] == ' ') ++i;
  if (i >= s.size() || !digit(s[i])) return false;
  out = s[i++] - '0';
  if (i < s.size() && digit(s[i])) out = out * 10 + (s[i++] - '0');
  return true;
}

int month_of(std::string_view s, std::size_t i) {
  static const char* names[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (i + 3 > s.size()) return 0;
  for (int m = 0; m < 12; ++m)
    if (std::memcmp(s.data() + i, names[m], 3) == 0) return m + 1;
  return 0;
}

bool hms(std::string_view s, std::size_t& i, int& h, int& m, int& sec) {
  return num(s, i, 2, h) && i < s.size() && s[i++] == ':' && num(s, i, 2, m) && i < s.size() &&
         s[i++] == ':' && num(s, i, 2, sec) && h < 24 && m < 60 && sec <= 60;
}

long long fraction(std::string_view s, std::size_t& i) {
  long long us = 0;
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
    ++i;
    int d = 0;
    while (i < s.size() && digit(s[i])) {
      if (d < 6) us = us * 10 + (s[i] - '0');
      ++d;
      ++i;
    }
    for (; d < 6; ++d) us *= 10;
  }
  return us;
}

// Year that puts month/day nearest the reference time.
int infer_year(unsigned month, unsigned day, const TimeContext& ctx) {
  if (!ctx.reference) return 1970;
  using namespace std::chrono;
  sys_time<microseconds> ref{microseconds{*ctx.reference}};
  date::year_month_day ymd{date::floor<date::days>(ref)};
  int y = int(ymd.year());
  int best = y;
  long long best_d = -1;
  for (int cand = y - 1; cand <= y + 1; ++cand) {
    date::year_month_day c{date::year{cand}, date::month{month}, date::day{day}};
    if (!c.ok()) continue;
    long long d = std::llabs((date::sys_days{c} - date::floor<date::days>(ref)).count());
    if (best_d < 0 || d < best_d) {
      best_d = d;
      best = cand;
    }
  }
  return best;
}

// Skips " host program[pid]: " after a syslog timestamp; returns the body offset.
std::size_t skip_syslog_prefix(std::string_view s, std::size_t i) {
  while (i < s.size() && s[i] == ' ') ++i;
  std::size_t host_end = s.find(' ', i);
  if (host_end == std::string_view::npos) return i;
  std::size_t colon = s.find(": ", host_end + 1);
  if (colon == std::string_view::npos || colon - host_end > 64) return host_end + 1;
  return colon + 2;
}

// "[ 12345.678901]" at s[i]: dmesg seconds since boot.
bool dmesg_stamp(std::string_view s, std::size_t& i, double& secs) {
  std::size_t j = i;
  if (j >= s.size() || s[j] != '[') return false;
  ++j;
  while (j < s.size() && s[j] == ' ') ++j;
  std::size_t start = j;
  while (j < s.size() && digit(s[j])) ++j;
  // More than 10 digits of seconds is no uptime (317 years) and would
  // overflow the microsecond arithmetic (found by fuzz/fuzz_timestamp_parser).
  if (j == start || j - start > 10 || j >= s.size() || s[j] != '.') return false;
  ++j;
  std::size_t fs = j;
  while (j < s.size() && digit(s[j])) ++j;
  if (j == fs || j >= s.size() || s[j] != ']') return false;
  secs = std::strtod(std::string(s.substr(start, j - start)).c_str(), nullptr);
  i = j + 1;
  while (i < s.size() && s[i] == ' ') ++i;
  return true;
}

void finish_body(std::string_view s, ParsedLine& p) {
  std::size_t i = p.body;
  double secs;
  if (dmesg_stamp(s, i, secs)) {
    p.dmesg_seconds = secs;
    p.body = i;
  }
}

}  // namespace

const date::time_zone* find_zone(const std::string& name) {
  if (name.empty() || name == "UTC" || name == "Etc/UTC" || name == "Z") return nullptr;
  try {
    return date::locate_zone(name);
  } catch (const std::exception& e) {
    throw std::runtime_error("unknown time zone '" + name + "'");
  }
}

TimeUs local_to_utc(int year, unsigned month, unsigned day, int h, int m, int s, long long us,
                    const TimeContext& ctx) {
  using namespace std::chrono;
  date::year_month_day ymd{date::year{year}, date::month{month}, date::day{day}};
  auto secs = date::sys_days{ymd}.time_since_epoch() + hours{h} + minutes{m} + seconds{s};
  if (ctx.zone) {
    date::local_seconds local{duration_cast<seconds>(secs)};
    auto sys = ctx.zone->to_sys(local, date::choose::earliest);
    return duration_cast<microseconds>(sys.time_since_epoch()).count() + us;
  }
  return duration_cast<microseconds>(secs).count() + us;
}

namespace {

// Sets p.time from a civil date and time read off a line, in `ctx`'s zone.
// False (and p.bad_time) for a date that does not exist, such as Feb 30: the
// line keeps its place but gets no time.
bool set_civil_time(ParsedLine& p, int y, int mo, int d, int h, int m, int sec, long long us,
                    const TimeContext& ctx) {
  date::year_month_day ymd{date::year{y}, date::month{unsigned(mo)}, date::day{unsigned(d)}};
  if (!ymd.ok()) {
    p.bad_time = true;
    return false;
  }
  p.time = local_to_utc(y, unsigned(mo), unsigned(d), h, m, sec, us, ctx);
  return true;
}

}  // namespace

ParsedLine parse_line_time(std::string_view s, const TimeContext& ctx) {
  ParsedLine p;
  std::size_t i = 0;
  // torchrun's per-worker prefix ("[default3]:", --tee / log_line_prefix):
  // what follows is the worker's own line.
  if (s.size() > 10 && s.compare(0, 8, "[default") == 0) {
    std::size_t close = s.find("]:", 8);
    if (close != std::string_view::npos && close < 16) {
      i = close + 2;
      while (i < s.size() && s[i] == ' ') ++i;
    }
  }
  // PyTorch prefixes: "[rank3]:" then maybe a glog header in brackets.
  if (s.size() > i + 6 && s.compare(i, 5, "[rank") == 0) {
    std::size_t close = s.find("]:", i + 5);
    if (close != std::string_view::npos && close < i + 16) {
      i = close + 2;
      if (i < s.size() && s[i] == '[')
        ++i;
      else {
        p.body = i;
        while (p.body < s.size() && s[p.body] == ' ') ++p.body;
        return p;
      }
    }
  }
  if (i >= s.size()) return p;
  char c = s[i];

  // glog: "E1102 10:41:07.512004 1234 file.cpp:42] msg"
  if ((c == 'I' || c == 'W' || c == 'E' || c == 'F') && i + 5 < s.size() && digit(s[i + 1])) {
    std::size_t j = i + 1;
    int mo, d, h, m, sec;
    if (num(s, j, 2, mo) && num(s, j, 2, d) && j < s.size() && s[j++] == ' ' &&
        hms(s, j, h, m, sec) && mo >= 1 && mo <= 12 && d >= 1 && d <= 31) {
      long long us = fraction(s, j);
      int y = infer_year(unsigned(mo), unsigned(d), ctx);
      if (!set_civil_time(p, y, mo, d, h, m, sec, us, ctx)) return p;
      p.form = "glog";
      std::size_t close = s.find("] ", j);
      p.body = close == std::string_view::npos ? j : close + 2;
      return p;
    }
    return p;
  }

  if (c == '[') {
    std::size_t j = i + 1;
    int y, mo, d, h, m, sec;
    // Slurm: [2026-11-02T10:41:07.512]
    if (j + 19 <= s.size() && digit(s[j]) && s[j + 4] == '-') {
      std::size_t k = j;
      if (num(s, k, 4, y) && s[k++] == '-' && num(s, k, 2, mo) && s[k++] == '-' &&
          num(s, k, 2, d) && (s[k] == 'T' || s[k] == ' ') && (++k, hms(s, k, h, m, sec))) {
        long long us = fraction(s, k);
        if (!set_civil_time(p, y, mo, d, h, m, sec, us, ctx)) return p;
        p.form = "slurm";
        p.body = (k < s.size() && s[k] == ']') ? k + 1 : k;
        while (p.body < s.size() && s[p.body] == ' ') ++p.body;
        return p;
      }
    }
    // dmesg raw: [86123.512004]
    double secs;
    std::size_t k = i;
    if (dmesg_stamp(s, k, secs)) {
      p.dmesg_seconds = secs;
      p.body = k;
      if (ctx.boot_time) {
        p.time = *ctx.boot_time + static_cast<TimeUs>(secs * 1e6 + 0.5);
        p.form = "dmesg";
      } else {
        p.form = "dmesg-no-boot-time";
      }
      return p;
    }
    // Fabric Manager: [Nov 02 2026 10:41:07]
    if (int mon = month_of(s, j); mon && j + 3 < s.size() && s[j + 3] == ' ') {
      std::size_t q = j + 4;
      if (day_num(s, q, d) && q < s.size() && s[q++] == ' ' && num(s, q, 4, y) && q < s.size() &&
          s[q++] == ' ' && hms(s, q, h, m, sec)) {
        long long us = fraction(s, q);
        if (!set_civil_time(p, y, mon, d, h, m, sec, us, ctx)) return p;
        p.form = "fabricmanager";
        p.body = (q < s.size() && s[q] == ']') ? q + 1 : q;
        while (p.body < s.size() && s[p.body] == ' ') ++p.body;
        return p;
      }
    }
    // dmesg -T: [Mon Nov  2 10:41:07 2026]
    if (j + 4 < s.size() && std::isalpha(static_cast<unsigned char>(s[j])) && s[j + 3] == ' ') {
      int mon = month_of(s, j + 4);
      std::size_t q = j + 8;
      if (mon && q <= s.size() && s[j + 7] == ' ' && day_num(s, q, d) && q < s.size() &&
          s[q++] == ' ' && hms(s, q, h, m, sec)) {
        long long us = fraction(s, q);
        if (q < s.size() && s[q] == ' ') ++q;
        if (num(s, q, 4, y) && q < s.size() && s[q] == ']') {
          if (!set_civil_time(p, y, mon, d, h, m, sec, us, ctx)) return p;
          p.form = "dmesg-T";
          p.body = q + 1;
          while (p.body < s.size() && s[p.body] == ' ') ++p.body;
          return p;
        }
      }
    }
    return p;
  }

  // RFC 3339 / ISO 8601 / Python logging: 2026-11-02T10:41:07.512004+00:00, 2026-11-02 08:04:13,168
  if (digit(c) && i + 19 <= s.size() && s[i + 4] == '-' && s[i + 7] == '-') {
    std::size_t k = i;
    int y, mo, d, h, m, sec;
    if (num(s, k, 4, y) && s[k++] == '-' && num(s, k, 2, mo) && s[k++] == '-' && num(s, k, 2, d) &&
        (s[k] == 'T' || s[k] == ' ') && (++k, hms(s, k, h, m, sec))) {
      long long us = fraction(s, k);
      bool zoned = false;
      long long offset_s = 0;
      if (k < s.size() && (s[k] == 'Z' || s[k] == 'z')) {
        zoned = true;
        ++k;
      } else if (k < s.size() && (s[k] == '+' || s[k] == '-')) {
        std::size_t q = k + 1;
        int oh, om = 0;
        if (num(s, q, 2, oh) && (q >= s.size() || s[q] != ':' || (++q, num(s, q, 2, om)))) {
          if (q < s.size() && digit(s[q]) && om == 0) num(s, q, 2, om);
          zoned = true;
          offset_s = (oh * 3600LL + om * 60LL) * (s[k] == '+' ? 1 : -1);
          k = q;
        }
      }
      if (!set_civil_time(p, y, mo, d, h, m, sec, us, zoned ? TimeContext{} : ctx)) return p;
      if (zoned) {
        *p.time -= offset_s * kUsPerSecond;
        p.form = "rfc3339";
        p.body = skip_syslog_prefix(s, k);
      } else {
        p.form = "iso-local";
        p.body = k;
        while (p.body < s.size() && s[p.body] == ' ') ++p.body;
      }
      finish_body(s, p);
      return p;
    }
    return p;
  }

  // RFC 3164: "Nov  2 10:41:07 host prog[pid]: msg"
  if (int mon = month_of(s, i); mon && i + 15 <= s.size() && s[i + 3] == ' ') {
    std::size_t q = i + 4;
    int d, h, m, sec;
    if (day_num(s, q, d) && q < s.size() && s[q++] == ' ' && hms(s, q, h, m, sec)) {
      long long us = fraction(s, q);
      int y = infer_year(unsigned(mon), unsigned(d), ctx);
      if (!set_civil_time(p, y, mon, d, h, m, sec, us, ctx)) return p;
      p.form = "rfc3164";
      p.body = skip_syslog_prefix(s, q);
      finish_body(s, p);
      return p;
    }
  }
  return p;
}

}  // namespace ff
