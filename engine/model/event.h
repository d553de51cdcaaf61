// An event: one recognised fact from one log line, with full provenance.
// Extraction creates events; filter rules annotate them; refinement groups
// them into symptoms and root-cause candidates. Events are never deleted:
// a rule that decides an event does not matter marks it `ignored`.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "incident/time/time.h"

namespace ff {

struct Event {
  std::uint64_t seq = 0;       // position in the fixed read order; ties are broken by it
  std::string kind;            // event kind ("xid", "nccl.timeout", ...), see rules/kinds.yaml
  std::string pattern;         // name of the extraction pattern that produced it
  std::string node;            // node the event happened on; "" = job-level
  std::string source;          // incident-relative path of the file
  std::string source_kind;     // kernel, syslog, fabricmanager, slurmd, app, slurmctld, ...
  std::uint64_t line = 0;      // 1-based line number in the (decompressed) file
  MaybeTime time;              // wall time, UTC; nullopt when the line carries none
  bool time_inferred = false;  // time taken from neighbouring lines of the same file
  // When it can have happened: [earliest, latest]. Equal to `time` for a
  // line with its own timestamp; for a line without one, after the previous
  // timed line of its file and before the next one (or the job's end).
  // Ordering decisions that matter ("late", "stale") use these bounds, never
  // the point estimate alone. nullopt = unbounded on that side.
  MaybeTime earliest, latest;
  // Provenance: whether the job's user could have written this line. Syslog
  // files (`logger`) and the job's own output are writable by the user;
  // the kernel's ring buffer, daemon logs and the scheduler are not.
  bool trusted = false;
  std::string text;  // the raw line (capped in length, see kMaxEventText)
  // The message after timestamp/host/program prefixes: where it starts in
  // `text`, so the bytes are held once (a job of thousands of nodes keeps
  // hundreds of thousands of events). A line longer than kMaxEventText keeps
  // its message's first kMaxEventText bytes apart, so the same message
  // behind prefixes of different lengths is still the same message.
  std::uint32_t body_at = 0;
  std::string long_body;
  std::string_view body() const {
    if (!long_body.empty()) return long_body;
    std::string_view t(text);
    return t.substr(std::min<std::size_t>(body_at, t.size()));
  }
  std::map<std::string, std::string> fields;  // named captures + rule annotations

  int rank = -1;       // global rank, when known
  std::string device;  // canonical PCI bus id "00000000:3B:00.0", when known

  bool ignored = false;  // filtered out (stale, other job, unused GPU, ...)
  std::string ignore_reason;
  std::vector<std::string> also_in;  // the same message seen in other files ("file:line")
  std::uint64_t burst = 0;           // id of the burst this event belongs to (0 = none)

  // Field lookup that returns "" for a missing field.
  const std::string& field(const std::string& name) const {
    static const std::string empty;
    auto it = fields.find(name);
    return it == fields.end() ? empty : it->second;
  }
};

constexpr std::size_t kMaxEventText = 2048;

// Order used everywhere an ordering of events matters: by time (events
// without a time go last), then by read order. Deterministic by construction.
inline bool event_time_less(const Event& a, const Event& b) {
  if (a.time.has_value() != b.time.has_value()) return a.time.has_value();
  if (a.time && *a.time != *b.time) return *a.time < *b.time;
  return a.seq < b.seq;
}

}  // namespace ff
