// The identity of one bundle: who made it, for which job attempt, in which
// pass. Sent as the `meta` field of the upload (docs/slurm-path.md §4) and
// kept next to the files in the outbox.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "incident/time/time.h"

namespace ff::collect {

struct BundleMeta {
  std::string bundle_id;
  std::string job_id;
  int attempt = 0;
  std::string node;
  std::string pass;    // "step" or "epilog"
  TimeUs created = 0;  // outbox only: retries give up relative to it
};

// "<node>-<job>-<pass>-<unix_ns>": made once per bundle, so a retried upload
// is recognised by the agent.
std::string make_bundle_id(const std::string& node, const std::string& job_id,
                           const std::string& pass);

// The five fields of the wire format.
nlohmann::json wire_meta(const BundleMeta& meta);

nlohmann::json to_json(const BundleMeta& meta);
BundleMeta meta_from_json(const nlohmann::json& j);  // throws on a malformed record

}  // namespace ff::collect
