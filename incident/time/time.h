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

// Formatting. Every form below is UTC, written from the calendar alone: the
// process's TZ and locale never change a byte. Each form is the one its
// reader expects, so they differ only in the fraction and the zone suffix.

// RFC 3339 in UTC with the fraction trimmed of trailing zeros
// ("2026-11-02T10:41:07.512004Z", "2026-11-02T10:41:07Z"): the engine's own
// output, events and diagnoses.
std::string format_time(TimeUs t);

// Whole seconds, "2026-11-30T05:01:02Z": Slurm's times (whole seconds in
// libslurm) and the agent's API and command-line answers.
std::string format_time_seconds(std::int64_t unix_seconds);

// Six fraction digits when the time has a fraction, none on a whole second
// ("2026-11-02T10:41:07.512000Z", "2026-11-02T10:41:07Z"): Kubernetes'
// metav1.Time / MicroTime as the kubernetes collector writes them.
std::string format_time_micros(TimeUs t);

// Always six fraction digits and the offset written out
// ("2026-11-02T10:41:07.000000+00:00"): the shape of `journalctl -o
// short-iso-precise`, so a journal line read through sd-journal looks like
// one exported by journalctl.
std::string format_time_journal(TimeUs t);

// Always nine fraction digits, "2026-11-30T05:10:00.123456789Z", for a time
// in nanoseconds since the epoch: Loki's timestamps.
std::string format_time_nanos(std::int64_t unix_ns);

// RFC 3164 syslog, "Nov  2 10:41:07": English month, day padded with a
// space, no year, no zone (what rsyslog writes by default).
std::string format_syslog_time(TimeUs t);

// Parses RFC 3339 / ISO 8601 with 'Z' or a numeric offset; a time without
// zone is taken as UTC. Returns nullopt on anything else.
MaybeTime parse_iso8601_utc(const std::string& text);

}  // namespace ff
