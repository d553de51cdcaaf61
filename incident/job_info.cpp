#include "incident/job_info.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace ff {

namespace {
bool window_inverted(const JobInfo& job) {
  return job.start_time && job.end_time && *job.start_time > *job.end_time;
}
}  // namespace

MaybeTime JobInfo::window_start() const {
  return window_inverted(*this) ? std::nullopt : start_time;
}

MaybeTime JobInfo::window_end() const {
  return window_inverted(*this) ? std::nullopt : end_time;
}

void JobInfo::build_index() {
  Index ix;
  ix.nodes_size = nodes.size();
  ix.ranks_size = ranks.size();
  ix.nodes.insert(nodes.begin(), nodes.end());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const RankInfo& r = ranks[i];
    ix.by_rank.emplace(r.rank, i);
    ix.by_local.emplace(std::make_pair(r.node, r.local_rank), i);
    for (const auto& g : r.gpus) ix.by_gpu.emplace(std::make_pair(r.node, g), i);
    if (!r.gpus.empty()) ix.nodes_with_gpus.insert(r.node);
  }
  index_ = std::move(ix);
}

const JobInfo::Index* JobInfo::index() const {
  if (!index_ || index_->nodes_size != nodes.size() || index_->ranks_size != ranks.size())
    return nullptr;
  return &*index_;
}

bool JobInfo::has_node(const std::string& n) const {
  if (const Index* ix = index()) return ix->nodes.count(n) > 0;
  return std::find(nodes.begin(), nodes.end(), n) != nodes.end();
}

int JobInfo::rank_for_gpu(const std::string& node, const std::string& pci) const {
  if (pci.empty()) return -1;
  if (const Index* ix = index()) {
    auto it = ix->by_gpu.find({node, pci});
    return it == ix->by_gpu.end() ? -1 : ranks[it->second].rank;
  }
  for (const auto& r : ranks)
    if (r.node == node && std::find(r.gpus.begin(), r.gpus.end(), pci) != r.gpus.end())
      return r.rank;
  return -1;
}

int JobInfo::rank_for_local(const std::string& node, int local_rank) const {
  if (const Index* ix = index()) {
    auto it = ix->by_local.find({node, local_rank});
    return it == ix->by_local.end() ? -1 : ranks[it->second].rank;
  }
  for (const auto& r : ranks)
    if (r.node == node && r.local_rank == local_rank) return r.rank;
  return -1;
}

const RankInfo* JobInfo::rank_info(int rank) const {
  if (const Index* ix = index()) {
    auto it = ix->by_rank.find(rank);
    return it == ix->by_rank.end() ? nullptr : &ranks[it->second];
  }
  for (const auto& r : ranks)
    if (r.rank == rank) return &r;
  return nullptr;
}

std::string JobInfo::gpu_pci(const std::string& node, int index) const {
  auto it = node_info.find(node);
  if (it == node_info.end()) return "";
  for (const auto& g : it->second.gpus)
    if (g.index == index) return g.pci;
  return "";
}

std::string JobInfo::gpu_uuid(const std::string& node, const std::string& pci) const {
  auto it = node_info.find(node);
  if (it == node_info.end() || pci.empty()) return "";
  for (const auto& g : it->second.gpus)
    if (g.pci == pci) return g.uuid;
  return "";
}

bool JobInfo::knows_gpus_of(const std::string& node) const {
  if (const Index* ix = index()) return ix->nodes_with_gpus.count(node) > 0;
  for (const auto& r : ranks)
    if (r.node == node && !r.gpus.empty()) return true;
  return false;
}

bool JobInfo::job_uses_gpu(const std::string& node, const std::string& pci) const {
  return rank_for_gpu(node, pci) >= 0;
}

std::string canonical_pci(const std::string& raw) {
  // domain:bus:device[.function]; domain may be 4 or 8 hex digits.
  unsigned dom = 0, bus = 0, dev = 0, fn = 0;
  int n = 0;
  std::string s = raw;
  if (s.rfind("PCI:", 0) == 0) s = s.substr(4);
  if (std::sscanf(s.c_str(), "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &n) == 4 &&
      static_cast<std::size_t>(n) == s.size()) {
  } else if (std::sscanf(s.c_str(), "%x:%x:%x%n", &dom, &bus, &dev, &n) == 3 &&
             static_cast<std::size_t>(n) == s.size()) {
    fn = 0;
  } else {
    return "";
  }
  if (bus > 0xff || dev > 0x1f || fn > 7) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08X:%02X:%02X.%X", dom, bus, dev, fn);
  return buf;
}

}  // namespace ff
