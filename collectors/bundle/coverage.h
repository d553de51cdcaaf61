// What a collector reports about one source of one node (incident.md
// `coverage`): a source it could not read is evidence missing, never
// evidence of health.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace ff::collect {

struct CoverageEntry {
  std::string collector;  // kernel, syslog, fabricmanager, slurmd, app
  std::string node;
  std::string status;  // ok, missing, error, empty, truncated
  std::uint64_t lines = 0;
  std::string detail;
  // For a live source (the kernel ring buffer, the journal): the span it was
  // read over, RFC 3339 UTC, "" when not known. Inside it a message absent
  // from the source was not logged there, which is how a copy of a kernel
  // message in syslog or in the job's output is told from the kernel's own.
  std::string covers_from;
  std::string covers_until;
};

inline nlohmann::json to_json(const CoverageEntry& c) {
  nlohmann::json j = {{"collector", c.collector},
                      {"node", c.node},
                      {"status", c.status},
                      {"lines", c.lines},
                      {"detail", c.detail}};
  if (!c.covers_from.empty() && !c.covers_until.empty()) {
    j["covers_from"] = c.covers_from;
    j["covers_until"] = c.covers_until;
  }
  return j;
}

}  // namespace ff::collect
