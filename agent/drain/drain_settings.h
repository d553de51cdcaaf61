// agent.yaml `drain:`: when the agent drains a node by itself. Off by
// default: draining takes capacity away, so an operator opts in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ff::agent {

struct DrainSettings {
  bool enabled = false;
  // Drained once blamed in at least this many failed job attempts of the
  // window (attributed root cause from a trusted source, hardware domain,
  // not systemic).
  int min_blames = 3;
  int window_days = 0;  // 0: the suspects window (14 days unless configured)
  // At most this many nodes drained (or, dry run, would be) in any hour:
  // a bug or a broad outage must not empty the cluster.
  int max_per_hour = 1;
  // Only hardware: application, scheduler, storage and unknown are refused
  // by the configuration (a user's bug or a time limit says nothing about
  // the node).
  std::vector<std::string> domains = {"gpu", "gpu_fabric", "network", "host"};
  // Causes in a drain domain that a job brings on itself: the OOM killer
  // and memory-pressure evictions are `host` faults in the engine's
  // vocabulary, yet a job that asks for too much memory kills any node.
  // They neither drain nor count as blames.
  std::vector<std::string> ignore_sub_domains = {"host.oom_kill", "host.oom_killer",
                                                 "host.oom_context", "host.cgroup_oom",
                                                 "host.node_pressure_eviction"};
  bool dry_run = false;  // decide and record "would_drain", never call scontrol
};

// The domains drain.domains may name.
inline const std::vector<std::string>& drainable_domains() {
  static const std::vector<std::string> kDomains = {"gpu", "gpu_fabric", "network", "host"};
  return kDomains;
}

}  // namespace ff::agent
