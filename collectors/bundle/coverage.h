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
};

inline nlohmann::json to_json(const CoverageEntry& c) {
  return {{"collector", c.collector},
          {"node", c.node},
          {"status", c.status},
          {"lines", c.lines},
          {"detail", c.detail}};
}

}  // namespace ff::collect
