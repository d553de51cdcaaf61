// The job attempt described by job.json (see docs/spec/incident.md).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "incident/coverage.h"
#include "incident/time/time.h"

namespace ff {

struct RankInfo {
  int rank = -1;
  std::string node;
  int local_rank = -1;
  // PCI bus ids, canonical as read. A collector that knows only the indices
  // the plugin saw writes those instead; the reader drops them.
  std::vector<std::string> gpus;
  // False: job.json has no 'gpus' for the rank (a Kubernetes pod), rather
  // than a rank known to use none.
  bool gpus_known = true;
  std::string exit_code;
  // The task's process id on its node, from the plugin's record: a kernel
  // line naming that pid (an Xid, the OOM killer) is about this rank. 0 unknown.
  std::int64_t pid = 0;
};

struct GpuInfo {
  int index = -1;
  std::string pci;  // canonical
  std::string uuid;
};

struct NodeInfo {
  MaybeTime boot_time;
  std::vector<GpuInfo> gpus;
};

struct JobInfo {
  std::string schema;
  std::string cluster;
  std::string job_id;
  int attempt = 0;
  std::string state;  // Slurm terminal state; "" when unknown
  std::string exit_code;
  MaybeTime start_time;
  MaybeTime end_time;
  std::string timezone = "UTC";
  std::vector<std::string> nodes;
  std::vector<RankInfo> ranks;
  // False: job.json has no 'ranks' (nothing told which rank ran where),
  // rather than a job known to have none on the nodes it names.
  bool ranks_known = true;
  std::map<std::string, NodeInfo> node_info;
  std::vector<Coverage> coverage;

  // The bounds of the job's window, which sets events outside it aside:
  // start_time and end_time, except when start_time is after end_time. Then
  // one of the two is wrong and nothing tells which, so neither bounds the
  // window and every event is judged (the times still date yearless
  // timestamps). nullopt: no bound on that side.
  MaybeTime window_start() const;
  MaybeTime window_end() const;

  // Makes the lookups below logarithmic: a job of 4,096 nodes has 32,768
  // ranks, and every event asks. Call once nodes and ranks are final (the
  // pipeline does); a lookup on a job changed since scans, as without one.
  void build_index();

  bool has_node(const std::string& n) const;
  // Rank using GPU `pci` on `node`, or -1.
  int rank_for_gpu(const std::string& node, const std::string& pci) const;
  // Rank with `local_rank` on `node`, or -1.
  int rank_for_local(const std::string& node, int local_rank) const;
  const RankInfo* rank_info(int rank) const;
  // PCI id of GPU `index` on `node` (node_info), or "".
  std::string gpu_pci(const std::string& node, int index) const;
  // UUID of the GPU with PCI id `pci` on `node` (node_info), or "": what
  // follows a GPU that moves to another slot or node, for cross-job counts.
  std::string gpu_uuid(const std::string& node, const std::string& pci) const;
  // True when ranks name GPUs on this node, so an unused GPU can be told apart.
  bool knows_gpus_of(const std::string& node) const;
  bool job_uses_gpu(const std::string& node, const std::string& pci) const;

 private:
  // Positions in `ranks` (the first of equal keys, as a scan finds it).
  struct Index {
    std::size_t nodes_size = 0, ranks_size = 0;  // what it was built over
    std::set<std::string> nodes, nodes_with_gpus;
    std::map<int, std::size_t> by_rank;
    std::map<std::pair<std::string, int>, std::size_t> by_local;
    std::map<std::pair<std::string, std::string>, std::size_t> by_gpu;
  };
  const Index* index() const;
  std::optional<Index> index_;
};

// Canonical PCI bus id: "0000:3b:00" / "0000:3b:00.0" / "00000000:3B:00.0"
// all become "00000000:3B:00.0". Returns "" when `raw` is not a bus id.
std::string canonical_pci(const std::string& raw);

}  // namespace ff
