#include "incident/node_file_kind.h"

#include <utility>
#include <vector>

namespace ff {

std::string node_file_kind(const std::string& filename) {
  if (filename == kFlightRecorderDir) return std::string(kFlightRecorderDir);
  static const std::vector<std::pair<std::string, std::string>> prefixes = {
      {"kernel", "kernel"},
      {"kern", "kernel"},
      {"dmesg", "kernel"},
      {"syslog", "syslog"},
      {"messages", "syslog"},
      {"journal", "syslog"},
      {"fabricmanager", "fabricmanager"},
      {"nv-fabricmanager", "fabricmanager"},
      {"slurmd", "slurmd"},
      {"slurmstepd", "slurmd"},
      {"app", "app"}};
  for (const auto& [prefix, kind] : prefixes) {
    // "app.log", "app-3.log", "syslog.1": the prefix ends at a separator
    // ("apport.log" is not an app file).
    if (filename.rfind(prefix, 0) != 0) continue;
    char next = filename.size() > prefix.size() ? filename[prefix.size()] : '\0';
    if (next == '\0' || next == '.' || next == '-' || next == '_') return kind;
  }
  return "other";
}

std::optional<int> flight_recorder_rank(std::string_view name) {
  if (name.empty() || name.size() > 7 || (name.size() > 1 && name[0] == '0')) return std::nullopt;
  int rank = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    rank = rank * 10 + (c - '0');
  }
  return rank;
}

}  // namespace ff
