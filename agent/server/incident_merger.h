// Rebuilds jobs/<job>/<attempt>/incident/ from every stored bundle of the
// job attempt. Deterministic: the result depends on the set of bundles, not
// on the order they arrived in.
//
// Which bundle wins: an Epilog bundle beats a step bundle; among bundles of
// one pass the newest, by the time stamp the collector put at the end of the
// bundle_id (`<node>-<job>-<pass>-<unix_ns>`), then by bundle_id. The arrival
// time is never used.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/server/state_layout.h"
#include "agent/slurm/slurm_job.h"
#include "agent/store/diagnosis_store.h"

namespace ff::agent {

// What a pass knows beyond the bundles.
struct MergeFacts {
  std::optional<SlurmJob> slurm;  // scontrol's view, when it answered
  // slurmdbd's record of this attempt: its terminal state when slurmctld's
  // record is of a newer attempt or gone (MinJobAge).
  std::optional<AccountingAttempt> accounting;
  std::string state_override;                   // fast pass: "FAILED"
  std::string exit_code_override;               // fast pass: the batch script's exit:signal
  bool add_job_output = true;                   // copy StdOut/StdErr into app/ when readable here
  std::size_t max_job_output_bytes = 64 << 20;  // the tail is kept
};

struct MergeResult {
  nlohmann::json job;                 // the merged job.json
  std::vector<std::string> problems;  // unreadable fragments, copy failures (logged)
};

// Bundles in the order the merge applies them, weakest first.
std::vector<BundleRecord> merge_order(std::vector<BundleRecord> bundles);

// The merged job.json, folded from the bundles' fragments one at a time in
// merge order, so that only the merged result is held and never every
// fragment at once: each of a job's N nodes sends a fragment naming all N
// nodes, and N fragments held together would be N^2 names (gigabytes at
// 4,096 nodes).
class JobJsonMerge {
 public:
  // `bundles` in merge order; must outlive this object.
  explicit JobJsonMerge(const std::vector<BundleRecord>& bundles);
  // The fragment of bundles[i]; i only increases from one call to the next.
  void add(std::size_t i, const nlohmann::json& fragment);
  nlohmann::json finish(const JobKey& key, const MergeFacts& facts);

 private:
  const std::vector<BundleRecord>& bundles_;
  nlohmann::json job_ = nlohmann::json::object();
  std::set<std::string> nodes_;  // plain order; node order is applied once, in finish()
  nlohmann::json last_nodes_;    // the previous fragment's `nodes`: most are the same list
  std::map<long long, nlohmann::json> ranks_;
  nlohmann::json node_info_ = nlohmann::json::object();
  std::map<std::string, nlohmann::json> own_node_info_;  // node → from its winning bundle
  // (node, collector) → the entries of the last bundle that had any.
  std::map<std::pair<std::string, std::string>, std::pair<std::size_t, std::vector<nlohmann::json>>>
      coverage_;
  std::map<std::string, std::size_t> winner_;  // node → index of its winning bundle
  std::string start_time_, end_time_, state_, exit_code_;
};

// Writes the merged incident to `layout.incident(key)`, replacing the old
// one in one rename. The caller holds the job's lock.
MergeResult rebuild_incident(const StateLayout& layout, const JobKey& key,
                             const std::vector<BundleRecord>& bundles, const MergeFacts& facts);

// "exit:signal" for a raw wait(2) status, as Slurm prints it.
std::string exit_code_from_wait_status(int status);

// Slurm-style node order: "n2" before "n10".
bool node_name_less(const std::string& a, const std::string& b);

}  // namespace ff::agent
