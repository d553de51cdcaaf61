#include "spank/gpu_map.h"

#include <dirent.h>

#include <cctype>
#include <charconv>
#include <fstream>

namespace firstfault::spank {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

bool ParseInt(std::string_view text, int* value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size();
}

// Bounds a range such as "0-100000" written by mistake.
constexpr int kMaxRangeLength = 1024;

}  // namespace

std::vector<std::string> SplitGpuList(std::string_view list) {
  std::vector<std::string> gpus;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view entry = Trim(list.substr(start, comma - start));
    start = comma + 1;
    if (entry.empty() || entry == "NoDevFiles") continue;
    size_t dash = entry.find('-');
    int first = 0;
    int last = 0;
    if (dash != std::string_view::npos && ParseInt(entry.substr(0, dash), &first) &&
        ParseInt(entry.substr(dash + 1), &last) && first <= last &&
        last - first < kMaxRangeLength) {
      for (int index = first; index <= last; ++index) gpus.push_back(std::to_string(index));
      continue;
    }
    gpus.emplace_back(entry);
  }
  return gpus;
}

std::string NormalizeBusId(std::string_view bus_location) {
  bus_location = Trim(bus_location);
  size_t colon = bus_location.find(':');
  // Expect domain:bus:device.function; the domain is widened to 8 digits like nvidia-smi.
  if (colon == std::string_view::npos || colon == 0 || colon > 8 ||
      bus_location.find(':', colon + 1) == std::string_view::npos) {
    return std::string(bus_location);
  }
  std::string normalized(8 - colon, '0');
  for (char c : bus_location) {
    normalized += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return normalized;
}

std::vector<NvidiaGpu> ReadNvidiaGpus(const std::string& proc_dir) {
  std::vector<NvidiaGpu> gpus;
  DIR* dir = opendir(proc_dir.c_str());
  if (dir == nullptr) return gpus;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    std::ifstream information(proc_dir + "/" + name + "/information");
    if (!information) continue;
    NvidiaGpu gpu;
    gpu.bus_id = NormalizeBusId(name);
    std::string line;
    while (std::getline(information, line)) {
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string_view key = Trim(std::string_view(line).substr(0, colon));
      std::string_view value = Trim(std::string_view(line).substr(colon + 1));
      if (key == "Device Minor") {
        ParseInt(value, &gpu.minor);
      } else if (key == "Bus Location") {
        gpu.bus_id = NormalizeBusId(value);
      } else if (key == "GPU UUID") {
        gpu.uuid = std::string(value);
      }
    }
    gpus.push_back(std::move(gpu));
  }
  closedir(dir);
  return gpus;
}

std::vector<std::string> MapGpusToBusIds(const std::vector<std::string>& gpus,
                                         const std::vector<NvidiaGpu>& driver_gpus) {
  std::vector<std::string> bus_ids;
  if (driver_gpus.empty()) return bus_ids;
  for (const std::string& gpu : gpus) {
    int index = -1;
    bool is_index = ParseInt(gpu, &index);
    std::string bus_id;
    for (const NvidiaGpu& driver_gpu : driver_gpus) {
      if (is_index ? driver_gpu.minor == index : driver_gpu.uuid == gpu) {
        bus_id = driver_gpu.bus_id;
        break;
      }
    }
    bus_ids.push_back(std::move(bus_id));
  }
  return bus_ids;
}

}  // namespace firstfault::spank
