// Time as the engine sees it: microseconds since the Unix epoch, UTC.
// Every parsed timestamp is converted to this once, at extraction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ff {

using TimeUs = std::int64_t;
using MaybeTime = std::optional<TimeUs>;

constexpr TimeUs kUsPerSecond = 1'000'000;

// RFC 3339 in UTC with the fraction trimmed of trailing zeros
// ("2026-11-02T10:41:07.512004Z", "2026-11-02T10:41:07Z").
std::string format_time(TimeUs t);

// Parses RFC 3339 / ISO 8601 with 'Z' or a numeric offset; a time without
// zone is taken as UTC. Returns nullopt on anything else.
MaybeTime parse_iso8601_utc(const std::string& text);

}  // namespace ff
