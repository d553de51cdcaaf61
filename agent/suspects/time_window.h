// The time arguments of `firstfault history`, `firstfault suspects` and
// GET /api/v1/suspects. They print times with ff::format_time_seconds
// (incident/time/time.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ff::agent {

// A start time: RFC 3339 ("2026-11-30T05:00:00Z", with an offset, or a bare
// date "2026-11-30" meaning its midnight UTC), unix seconds ("1764478800"),
// or an age before `now`: a number with s, m, h, d or w ("90m", "24h", "7d",
// "2w"). nullopt when it is none of these.
std::optional<std::int64_t> parse_since(const std::string& text, std::int64_t now);

}  // namespace ff::agent
