// The Kubernetes/Kueue execution-context connector: one attempt of a Kueue
// workload, a batch Job / JobSet / PyTorchJob, or a set of pods, read from
// the API server and written as an incident directory:
//   job.json                 the attempt (nodes, ranks, state, window, coverage)
//   cluster/kubernetes.log   time-ordered lines the engine's patterns read:
//                            container terminations, evictions, preemptions,
//                            workload/job conditions, Events, node conditions
//   nodes/<node>/app.*       pod logs (pod_logs.h)
// The line format of kubernetes.log is a contract with rules/patterns.yaml
// (see format_* in k8s_collect.cpp and docs/operations.md).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "central/kubernetes/kube_api.h"
#include "central/kubernetes/pod_logs.h"
#include "incident/coverage.h"

namespace ff::sources::k8s {

struct Target {
  enum class Kind { kWorkload, kJob, kPods };
  Kind kind = Kind::kWorkload;
  std::string ns;
  std::string name;      // workload or job name; for kPods the label selector
  std::string job_kind;  // kJob: job (batch/v1), jobset, pytorchjob
};

// "NS/NAME" (NS/SELECTOR for pods; the selector may itself hold '/').
// Throws std::invalid_argument naming what is wrong.
Target parse_target(Target::Kind kind, const std::string& spec,
                    const std::string& job_kind = "job");

struct CollectOptions {
  Target target;
  std::filesystem::path out;  // the incident directory to write
  std::string cluster;        // job.json "cluster"; "" = the kubeconfig's cluster name
  bool pod_logs = true;
  PodLogOptions logs;
  std::size_t max_pods = 5000;
  std::size_t max_events = 20000;
};

struct CollectResult {
  bool target_found = false;  // the workload/job (or at least one pod) was read
  std::string problem;        // why not, when it was not
  std::string job_id;
  std::string state;  // the mapped terminal state, "" when still running or unknown
  int attempt = 0;
  std::vector<std::string> nodes;
  std::size_t pods = 0;
  std::size_t log_lines = 0;  // lines in cluster/kubernetes.log
  std::size_t log_files = 0;  // pod log files written
  std::vector<Coverage> coverage;
};

// Reads everything and writes the incident (job.json always, with coverage,
// even when the target could not be read). Never throws for API problems;
// throws std::runtime_error only when the output cannot be written.
CollectResult collect_incident(const KubeClient& client, const CollectOptions& options);

}  // namespace ff::sources::k8s
