#include "engine/read/incident_layout.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <tuple>

#include "incident/node_file_kind.h"

namespace ff {
namespace fs = std::filesystem;

namespace {

// Sort key putting rotated files of one kind oldest first.
std::tuple<std::string, int, long long, std::string> rotation_key(const std::string& kind,
                                                                  const std::string& name) {
  std::string n = name;
  if (n.size() > 3 && n.compare(n.size() - 3, 3, ".gz") == 0) n.resize(n.size() - 3);
  // trailing ".N" → numbered rotation; "-YYYYMMDD" → dated rotation
  auto dot = n.find_last_of(".-");
  if (dot != std::string::npos && dot + 1 < n.size() &&
      std::all_of(n.begin() + static_cast<long>(dot) + 1, n.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    long long v = std::stoll(n.substr(dot + 1, 18));
    if (n[dot] == '-' || v > 100000) return {kind, 0, v, name};  // dated: ascending
    return {kind, 1, -v, name};                                  // numbered: descending
  }
  return {kind, 2, 0, name};
}

// The regular files of directory `rel`, by the incident's rule (read/incident_file.h):
// anything else found there is named in `errors` and skipped.
// Under nodes/<node>/, the flight_recorder entry is list_flight_recorder_files'
// (which says what is wrong with it when it is not a directory): never a log.
std::vector<std::string> regular_files(const IncidentRoot& root, const std::string& rel,
                                       std::vector<ErrorItem>& errors, bool dumps_beside = false) {
  std::vector<std::string> names;
  IncidentListing listing = root.list_dir(rel);
  if (!listing.error.empty()) errors.push_back({rel, 0, listing.error + ": not read"});
  for (auto& e : listing.entries) {
    if (dumps_beside && e.name == kFlightRecorderDir) continue;
    if (e.type == IncidentEntry::Type::file)
      names.push_back(std::move(e.name));
    else
      errors.push_back(
          {rel + "/" + e.name, 0,
           (e.type == IncidentEntry::Type::directory ? "a directory, not a regular file"
                                                     : e.problem) +
               ": not read"});
  }
  return names;
}

}  // namespace

IncidentLayout list_incident(const fs::path& dir, std::vector<ErrorItem>& errors) {
  std::string error;
  IncidentRoot root = IncidentRoot::open(dir, error);
  if (!root.ok()) {
    errors.push_back({"", 0, error});
    return {};
  }
  return list_incident(root, errors);
}

IncidentLayout list_incident(const IncidentRoot& root, std::vector<ErrorItem>& errors) {
  IncidentLayout layout;
  const fs::path& dir = root.dir();

  IncidentListing nodes = root.list_dir("nodes");
  if (!nodes.error.empty()) errors.push_back({"nodes", 0, nodes.error + ": not read"});
  for (const auto& nd : nodes.entries) {
    std::string node_rel = "nodes/" + nd.name;
    if (nd.type == IncidentEntry::Type::refused) {
      errors.push_back({node_rel, 0, nd.problem + ": node directory not read"});
      continue;
    }
    if (nd.type != IncidentEntry::Type::directory) continue;  // a stray file beside the nodes
    layout.node_dirs.push_back(nd.name);
    std::vector<SourceFile> files;
    for (const auto& name : regular_files(root, node_rel, errors, true)) {
      std::string rel = node_rel + "/" + name;
      files.push_back({dir / rel, rel, nd.name, node_file_kind(name)});
    }
    std::sort(files.begin(), files.end(), [](const SourceFile& a, const SourceFile& b) {
      return rotation_key(a.kind, a.path.filename().string()) <
             rotation_key(b.kind, b.path.filename().string());
    });
    layout.files.insert(layout.files.end(), files.begin(), files.end());
  }
  for (const std::string top : {"app", "cluster"}) {
    for (const auto& name : regular_files(root, top, errors)) {
      std::string kind = top == "app"                      ? "app"
                         : name.rfind("slurmctld", 0) == 0 ? "slurmctld"
                                                           : "cluster";
      std::string rel = top + "/" + name;
      layout.files.push_back({dir / rel, rel, "", kind});
    }
  }
  for (const auto& name : regular_files(root, "metrics", errors)) {
    std::string rel = "metrics/" + name;
    if (fs::path(name).extension() != ".json")
      errors.push_back({rel, 0, "not a .json Prometheus reply: skipped"});
    else
      layout.metrics_files.push_back(rel);
  }
  layout.flight_recorder_files = list_flight_recorder_files(root, errors);
  return layout;
}

std::vector<FlightRecorderFile> list_flight_recorder_files(const IncidentRoot& root,
                                                           std::vector<ErrorItem>& errors) {
  std::vector<FlightRecorderFile> dumps;
  IncidentListing nodes = root.list_dir("nodes");
  for (const auto& nd : nodes.entries) {
    if (nd.type != IncidentEntry::Type::directory) continue;  // list_incident names these
    std::string rel = "nodes/" + nd.name + "/" + std::string(kFlightRecorderDir);
    IncidentListing listing = root.list_dir(rel);
    if (!listing.found && listing.error.empty()) continue;  // no dumps of this node
    if (!listing.error.empty()) errors.push_back({rel, 0, listing.error + ": not read"});
    std::vector<FlightRecorderFile> of_node;
    for (const auto& e : listing.entries) {
      std::string file_rel = rel + "/" + e.name;
      std::optional<int> rank = flight_recorder_rank(e.name);
      if (e.type != IncidentEntry::Type::file)
        errors.push_back(
            {file_rel, 0,
             (e.type == IncidentEntry::Type::directory ? "a directory, not a regular file"
                                                       : e.problem) +
                 ": not read"});
      else if (!rank)
        errors.push_back({file_rel, 0, "not named by a global rank: not read"});
      else
        of_node.push_back({nd.name, *rank, file_rel});
    }
    std::sort(
        of_node.begin(), of_node.end(),
        [](const FlightRecorderFile& a, const FlightRecorderFile& b) { return a.rank < b.rank; });
    dumps.insert(dumps.end(), of_node.begin(), of_node.end());
  }
  return dumps;
}

}  // namespace ff
