// Pod logs into the incident: GET /api/v1/namespaces/NS/pods/POD/log for
// each container (and its previous instance when it restarted), with the
// API server's timestamps, bounded in bytes and lines.
#pragma once

#include <filesystem>
#include <string>

#include "central/kubernetes/kube_api.h"

namespace ff::sources::k8s {

struct PodLogOptions {
  std::size_t limit_bytes = 16u << 20;  // limitBytes: at most this much per container log
  long tail_lines = 100000;             // tailLines: the end of the log is what explains a failure
  std::string since_time;               // sinceTime (RFC 3339), "" = the whole log
};

struct PodLogRequest {
  std::string ns, pod, container, node;
  bool previous = false;  // the last terminated instance of a restarted container
};

struct PodLogResult {
  std::string rel_path;  // incident-relative file written ("" when nothing was written)
  ApiStatus status = ApiStatus::kError;
  std::string detail;
  std::size_t bytes = 0;
  bool truncated = false;  // limit_bytes or tail_lines was reached
};

// Where a pod's container log goes: nodes/<node>/app.<pod>.<container>[.previous].log,
// the `app` kind of the node the pod ran on (a pod never moves), so the engine
// knows the node of every line; app/<pod>... when the pod had no node.
std::string pod_log_path(const PodLogRequest& r);

PodLogResult fetch_pod_log(const KubeClient& client, const PodLogRequest& r,
                           const PodLogOptions& options, const std::filesystem::path& incident);

}  // namespace ff::sources::k8s
