#include "common/hostlist.h"

#include <charconv>
#include <stdexcept>

namespace ff {
namespace {

[[noreturn]] void fail(std::string_view hostlist, const std::string& why) {
  throw std::invalid_argument("hostlist '" + std::string(hostlist) + "': " + why);
}

// The top-level comma-separated entries; commas inside brackets belong to a range.
std::vector<std::string_view> split_entries(std::string_view list) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    char c = list[i];
    if (c == '[') {
      if (++depth > 1) fail(list, "nested '['");
    } else if (c == ']') {
      if (--depth < 0) fail(list, "']' without '['");
    } else if ((c == ',' || c == ' ') && depth == 0) {
      if (i > start) out.push_back(list.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) fail(list, "'[' without ']'");
  if (list.size() > start) out.push_back(list.substr(start));
  return out;
}

unsigned long long parse_number(std::string_view list, std::string_view digits) {
  unsigned long long v = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size()) {
    std::string why = "not a number: ";
    why.append(digits);
    fail(list, why);
  }
  return v;
}

// "01-03,07" → {"01","02","03","07"}.
std::vector<std::string> expand_ranges(std::string_view list, std::string_view ranges,
                                       std::size_t budget) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= ranges.size()) {
    std::size_t comma = ranges.find(',', start);
    if (comma == std::string_view::npos) comma = ranges.size();
    std::string_view range = ranges.substr(start, comma - start);
    std::size_t dash = range.find('-');
    std::string_view lo_text = range.substr(0, dash);
    std::string_view hi_text = dash == std::string_view::npos ? lo_text : range.substr(dash + 1);
    unsigned long long lo = parse_number(list, lo_text);
    unsigned long long hi = parse_number(list, hi_text);
    if (hi < lo) fail(list, "range '" + std::string(range) + "' goes backwards");
    if (hi - lo >= budget || out.size() + (hi - lo + 1) > budget)
      fail(list, "more than " + std::to_string(kMaxHostlistNames) + " names");
    // Slurm pads to the width of the lower bound as written ("01-10" → 01..10).
    std::size_t width = lo_text.size();
    // Counted, not `v <= hi`: with hi the largest value, ++v would wrap to 0
    // and never end (found by fuzz/fuzz_hostlist).
    for (unsigned long long k = 0, v = lo; k <= hi - lo; ++k, ++v) {
      std::string digits = std::to_string(v);
      if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
      out.push_back(std::move(digits));
    }
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view hostlist) {
  std::vector<std::string> names;
  for (std::string_view entry : split_entries(hostlist)) {
    std::vector<std::string> partial{""};
    std::size_t i = 0;
    while (i < entry.size()) {
      std::size_t open = entry.find('[', i);
      std::string_view literal = entry.substr(i, open == std::string_view::npos ? open : open - i);
      for (auto& p : partial) p += literal;
      if (open == std::string_view::npos) break;
      std::size_t close = entry.find(']', open);
      std::size_t budget = kMaxHostlistNames - names.size();
      auto values = expand_ranges(hostlist, entry.substr(open + 1, close - open - 1), budget);
      if (partial.size() * values.size() > budget)
        fail(hostlist, "more than " + std::to_string(kMaxHostlistNames) + " names");
      std::vector<std::string> next;
      next.reserve(partial.size() * values.size());
      for (const auto& p : partial)
        for (const auto& v : values) next.push_back(p + v);
      partial = std::move(next);
      i = close + 1;
    }
    if (names.size() + partial.size() > kMaxHostlistNames)
      fail(hostlist, "more than " + std::to_string(kMaxHostlistNames) + " names");
    for (auto& p : partial) names.push_back(std::move(p));
  }
  return names;
}

}  // namespace ff
