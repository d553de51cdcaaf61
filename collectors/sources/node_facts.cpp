#include "collectors/sources/node_facts.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

namespace ff::collect {

MaybeTime boot_time(const std::string& proc_stat) {
  std::ifstream in(proc_stat);
  std::string key;
  long long value;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("btime ", 0) == 0) {
      try {
        value = std::stoll(line.substr(6));
      } catch (const std::exception&) {
        return std::nullopt;
      }
      return value * kUsPerSecond;
    }
  }
  return std::nullopt;
}

std::vector<GpuInfo> nvidia_gpus(const std::string& root) {
  std::vector<GpuInfo> gpus;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::ifstream in(it->path() / "information");
    GpuInfo gpu;
    std::string line;
    while (std::getline(in, line)) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string key = line.substr(0, colon);
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(" \t"));
      if (key == "Device Minor") {
        try {
          gpu.index = std::stoi(value);
        } catch (const std::exception&) {
        }
      } else if (key == "GPU UUID") {
        gpu.uuid = value;
      } else if (key == "Bus Location") {
        // "0000:3b:00.0" → "00000000:3B:00.0"
        std::string pci = value;
        std::transform(pci.begin(), pci.end(), pci.begin(),
                       [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
        auto first = pci.find(':');
        if (first != std::string::npos && first < 8) pci.insert(0, 8 - first, '0');
        gpu.pci = pci;
      }
    }
    if (gpu.index >= 0 || !gpu.pci.empty()) gpus.push_back(gpu);
  }
  std::sort(gpus.begin(), gpus.end(),
            [](const GpuInfo& a, const GpuInfo& b) { return a.index < b.index; });
  return gpus;
}

std::string local_timezone() {
  std::error_code ec;
  auto target = std::filesystem::read_symlink("/etc/localtime", ec);
  if (!ec) {
    std::string t = target.string();
    auto at = t.find("zoneinfo/");
    if (at != std::string::npos) return t.substr(at + 9);
  }
  std::ifstream in("/etc/timezone");
  std::string zone;
  if (in >> zone && !zone.empty()) return zone;
  return "UTC";
}

}  // namespace ff::collect
