#include "model/job_info.h"

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

bool JobInfo::has_node(const std::string& n) const {
  return std::find(nodes.begin(), nodes.end(), n) != nodes.end();
}

int JobInfo::rank_for_gpu(const std::string& node, const std::string& pci) const {
  if (pci.empty()) return -1;
  for (const auto& r : ranks)
    if (r.node == node && std::find(r.gpus.begin(), r.gpus.end(), pci) != r.gpus.end())
      return r.rank;
  return -1;
}

int JobInfo::rank_for_local(const std::string& node, int local_rank) const {
  for (const auto& r : ranks)
    if (r.node == node && r.local_rank == local_rank) return r.rank;
  return -1;
}

const RankInfo* JobInfo::rank_info(int rank) const {
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
