// Fuzzes parse_line_time: every timestamp form at the start of a log line,
// with the three kinds of context (UTC, a DST zone, a boot time for dmesg).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "incident/time/timestamp_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const ff::TimeContext contexts[] = {
      ff::TimeContext{},
      ff::TimeContext{ff::find_zone("Europe/Berlin"),
                      ff::TimeUs{1'711'846'800'000'000},  // 2024-03-31
                      ff::TimeUs{1'711'800'000'000'000}},
      ff::TimeContext{ff::find_zone("America/New_York"), ff::TimeUs{1'704'067'200'000'000},
                      std::nullopt},
  };
  std::string_view line(reinterpret_cast<const char*>(data), size);
  for (const auto& ctx : contexts) {
    ff::ParsedLine p = ff::parse_line_time(line, ctx);
    if (p.body > line.size()) __builtin_trap();  // the body offset must stay inside the line
  }
  return 0;
}
