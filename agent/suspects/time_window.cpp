#include "agent/suspects/time_window.h"

#include "incident/time/time.h"

namespace ff::agent {

std::optional<std::int64_t> parse_since(const std::string& text, std::int64_t now) {
  if (text.empty()) return std::nullopt;
  // Unix seconds: ten digits today; anything shorter would be a typo'd age
  // or a date before 1973, so at least nine.
  if (text.size() >= 9 && text.size() <= 12 &&
      text.find_first_not_of("0123456789") == std::string::npos)
    return std::stoll(text);
  char unit = text.back();
  std::string digits = text.substr(0, text.size() - 1);
  if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos &&
      digits.size() <= 9) {
    std::int64_t n = std::stoll(digits);
    switch (unit) {
      case 's':
        return now - n;
      case 'm':
        return now - n * 60;
      case 'h':
        return now - n * 3600;
      case 'd':
        return now - n * 86400;
      case 'w':
        return now - n * 7 * 86400;
      default:
        break;
    }
  }
  std::string stamp = text;
  if (stamp.size() == 10) stamp += "T00:00:00Z";
  if (auto t = parse_iso8601_utc(stamp)) return *t / kUsPerSecond;
  return std::nullopt;
}

}  // namespace ff::agent
