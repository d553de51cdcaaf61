// Where a log line's time is read. Every form of docs/spec/incident.md:
// RFC 3164 syslog, RFC 3339, dmesg raw and -T, Fabric Manager, glog
// (with PyTorch's "[rankN]:" prefix), Slurm daemons, Python logging.
// Times without a zone are local to the job's `timezone` (DST applies);
// times without a year take the year that puts them nearest the job.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "incident/time/time.h"

namespace date {
class time_zone;
}

namespace ff {

struct TimeContext {
  const date::time_zone* zone = nullptr;  // nullptr = UTC
  MaybeTime reference;                    // a time inside the job (start), for the year
  MaybeTime boot_time;                    // of the node, for dmesg seconds
};

struct ParsedLine {
  MaybeTime time;
  const char* form = "none";            // which timestamp form was recognised
  std::size_t body = 0;                 // offset of the message after time/host/program
  std::optional<double> dmesg_seconds;  // "[12345.678901]" seen in the line
  bool bad_time = false;                // looked like a timestamp but did not parse
};

// Looks only at the start of the line; cheap when there is no timestamp.
ParsedLine parse_line_time(std::string_view line, const TimeContext& ctx);

// Local wall time (no zone) → UTC, in the context's zone.
TimeUs local_to_utc(int year, unsigned month, unsigned day, int h, int m, int s, long long us,
                    const TimeContext& ctx);

// Resolves an IANA zone name; nullptr for UTC; throws std::runtime_error when unknown.
const date::time_zone* find_zone(const std::string& name);

}  // namespace ff
