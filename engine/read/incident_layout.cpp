#include "read/incident_layout.h"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace ff {
namespace fs = std::filesystem;

std::string node_file_kind(const std::string& filename) {
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

std::vector<fs::path> sorted_entries(const fs::path& dir, std::vector<ErrorItem>& errors,
                                     const std::string& rel) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    out.push_back(it->path());
  if (ec) errors.push_back({rel, 0, "cannot list directory: " + ec.message()});
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

IncidentLayout list_incident(const fs::path& dir, std::vector<ErrorItem>& errors) {
  IncidentLayout layout;
  std::error_code ec;

  fs::path nodes = dir / "nodes";
  if (fs::is_directory(nodes, ec)) {
    for (const auto& nd : sorted_entries(nodes, errors, "nodes")) {
      if (!fs::is_directory(nd, ec)) continue;
      std::string node = nd.filename().string();
      layout.node_dirs.push_back(node);
      std::vector<SourceFile> files;
      for (const auto& f : sorted_entries(nd, errors, "nodes/" + node)) {
        if (!fs::is_regular_file(f, ec)) {
          errors.push_back({"nodes/" + node + "/" + f.filename().string(), 0,
                            "not a regular file (directory, broken link or device): skipped"});
          continue;
        }
        std::string name = f.filename().string();
        files.push_back({f, "nodes/" + node + "/" + name, node, node_file_kind(name)});
      }
      std::sort(files.begin(), files.end(), [](const SourceFile& a, const SourceFile& b) {
        return rotation_key(a.kind, a.path.filename().string()) <
               rotation_key(b.kind, b.path.filename().string());
      });
      layout.files.insert(layout.files.end(), files.begin(), files.end());
    }
  }
  for (const char* top : {"app", "cluster"}) {
    fs::path p = dir / top;
    if (!fs::is_directory(p, ec)) continue;
    for (const auto& f : sorted_entries(p, errors, top)) {
      if (!fs::is_regular_file(f, ec)) {
        errors.push_back({std::string(top) + "/" + f.filename().string(), 0,
                          "not a regular file (directory, broken link or device): skipped"});
        continue;
      }
      std::string name = f.filename().string();
      std::string kind = top == std::string("app")         ? "app"
                         : name.rfind("slurmctld", 0) == 0 ? "slurmctld"
                                                           : "cluster";
      layout.files.push_back({f, std::string(top) + "/" + name, "", kind});
    }
  }
  fs::path metrics = dir / "metrics";
  if (fs::is_directory(metrics, ec))
    for (const auto& f : sorted_entries(metrics, errors, "metrics")) {
      std::string rel = "metrics/" + f.filename().string();
      if (!fs::is_regular_file(f, ec))
        errors.push_back(
            {rel, 0, "not a regular file (directory, broken link or device): skipped"});
      else if (f.extension() != ".json")
        errors.push_back({rel, 0, "not a .json Prometheus reply: skipped"});
      else
        layout.metrics_files.push_back(rel);
    }
  return layout;
}

}  // namespace ff
