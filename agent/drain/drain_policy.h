// The drain policy: after a final or deadline pass of a failed job, each
// root-cause node of the diagnosis is drained (`scontrol update
// NodeName=<node> State=DRAIN Reason="firstfault: ..."`) when it was blamed
// for hardware often enough in the window, or declined with the reason why.
// Every decision, drains and declines alike, is logged and stored
// (drain_actions).
//
// decide_drains is the decision alone: a pure function of its inputs, so
// tests cover every rule without Slurm. DrainPolicy runs it for the agent.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/drain/drain_settings.h"
#include "agent/slurm/slurm_client.h"
#include "agent/store/diagnosis_store.h"
#include "agent/suspects/suspect_report.h"

namespace ff::agent {

struct DrainDecision {
  std::string node;
  std::string device;    // the root cause's device on the node, "" none
  std::string decision;  // "drain", "would_drain" or "declined"
  // drain/would_drain: the Reason for Slurm, "firstfault: <sub_domain>
  // <device> in jobs 12,13,14"; declined: why not.
  std::string reason;
  int blames = 0;  // attributed, trusted hardware root causes in the window, not systemic
  std::vector<std::string> jobs;  // those job attempts ("12", "12.1"), oldest first
  std::string detail;             // the node state when it was asked; "dry run"
};

struct DrainInput {
  std::string job_id;
  int attempt = 0;
  nlohmann::json diagnosis;         // the pass's diagnosis JSON
  std::vector<Sighting> sightings;  // of the window (DiagnosisStore::sightings)
  std::vector<DrainAction> recent;  // drain actions of the last hour
  std::int64_t now = 0;             // unix seconds
  // The node's Slurm state; asked only for a node about to be drained.
  std::function<NodeStateLookup(const std::string& node)> node_state;
};

// One decision per root-cause node of the diagnosis (in its order); none for
// no_failure or a diagnosis whose causes name no node (time limit, cancel).
// A node is drained only when its root cause (the first on the node) is
// `"trusted": true`, and only trusted root causes count as blames: syslog
// lines and the job's own output can be written by the job's user.
// `suspects` gives the systemic-event rule (find_suspects) and, when
// settings.window_days is 0, the window.
std::vector<DrainDecision> decide_drains(const DrainInput& input, const DrainSettings& settings,
                                         const SuspectSettings& suspects);

// The window in seconds: drain.window_days, else the suspects window.
std::int64_t drain_window_s(const DrainSettings& settings, const SuspectSettings& suspects);

class DrainPolicy {
 public:
  DrainPolicy(DrainSettings settings, SuspectSettings suspects, DiagnosisStore& store,
              SlurmClient& slurm);

  // After a stored pass: runs the policy for final and deadline passes of a
  // failed job, acts and records. Never throws: a failure is logged and
  // recorded as "failed: ...", the pass stays as it was.
  void after_pass(const PassRecord& pass);

  const DrainSettings& settings() const { return settings_; }
  // Told every recorded decision (the agent's /metrics counts them).
  void set_on_decision(std::function<void(const DrainAction&)> hook) {
    on_decision_ = std::move(hook);
  }

 private:
  void run(const PassRecord& pass);
  void record(const PassRecord& pass, DrainAction action);

  DrainSettings settings_;
  SuspectSettings suspects_;
  DiagnosisStore& store_;
  SlurmClient& slurm_;
  std::function<void(const DrainAction&)> on_decision_;
  // One decision at a time: two passes ending together must not both see
  // room under max_per_hour and both drain.
  std::mutex mutex_;
};

}  // namespace ff::agent
