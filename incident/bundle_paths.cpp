#include "incident/bundle_paths.h"

#include <cctype>
#include <cstring>
#include <string_view>

#include "incident/node_file_kind.h"

namespace ff {

namespace {

bool app_name_char(char ch) {
  auto c = static_cast<unsigned char>(ch);
  return std::isalnum(c) || (c != 0 && std::strchr(" ._-+=@%,~", c) != nullptr);
}

bool app_name_start(char c) {
  return app_name_char(c) && c != '.' && c != ' ';
}

// ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$ without "..", and a kind the engine
// reads: what the agent accepts is exactly what the engine reads ("kernel",
// "dmesg", "syslog.1", "app.log").
bool node_file_name(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  if (!std::isalnum(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
      return false;
  // flight_recorder is a directory of dumps, never a file of its own.
  std::string kind = node_file_kind(name);
  return name.find("..") == std::string::npos && kind != "other" && kind != kFlightRecorderDir;
}

}  // namespace

bool valid_app_file_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxAppFileName || !app_name_start(name[0])) return false;
  for (char c : name)
    if (!app_name_char(c)) return false;
  return true;
}

std::string bundle_path_problem(const std::string& path, const std::string& node) {
  if (path.empty()) return "empty file name";
  if (path[0] == '/') return "absolute path";
  if (path == "job.json") return "";
  auto first = path.find('/');
  if (first == std::string::npos) return "file outside job.json, nodes/ and app/";
  std::string top = path.substr(0, first);
  std::string rest = path.substr(first + 1);
  if (top == "app") {
    if (!valid_app_file_name(rest)) return "app file name not allowed";
    return "";
  }
  if (top == "nodes") {
    auto second = rest.find('/');
    if (second == std::string::npos) return "node file without a node directory";
    if (rest.substr(0, second) != node) return "file of another node";
    std::string name = rest.substr(second + 1);
    auto slash = name.find('/');
    if (slash != std::string::npos) {
      if (name.substr(0, slash) != kFlightRecorderDir)
        return "no directory under the node's but flight_recorder/";
      if (!flight_recorder_rank(name.substr(slash + 1)))
        return "flight_recorder file not named by a global rank (decimal, no leading zero)";
      return "";
    }
    if (!node_file_name(name))
      return "node file name not allowed (kernel, syslog, fabricmanager, "
             "slurmd or app, with an optional suffix)";
    return "";
  }
  return "file outside job.json, nodes/ and app/";
}

bool is_flight_recorder_path(const std::string& path) {
  if (path.rfind("nodes/", 0) != 0) return false;
  auto node_end = path.find('/', 6);
  if (node_end == std::string::npos || node_end == 6) return false;
  std::string_view rest = std::string_view(path).substr(node_end + 1);
  if (rest.substr(0, kFlightRecorderDir.size()) != kFlightRecorderDir ||
      rest.size() <= kFlightRecorderDir.size() || rest[kFlightRecorderDir.size()] != '/')
    return false;
  return flight_recorder_rank(rest.substr(kFlightRecorderDir.size() + 1)).has_value();
}

std::string app_file_name_for(const std::string& output_path, const std::string& fallback) {
  std::string path = output_path;
  while (!path.empty() && path.back() == '/') path.pop_back();
  std::string base =
      path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  std::string name;
  bool replaced = false;  // the last byte written was a replacement
  for (char c : base) {
    if (app_name_char(c)) {
      name += c;
      replaced = false;
    } else if (!replaced) {
      name += '_';
      replaced = true;
    }
  }
  std::size_t start = 0;
  while (start < name.size() && !app_name_start(name[start])) ++start;
  name.erase(0, start);
  if (name.size() > kMaxAppFileName) name.resize(kMaxAppFileName);
  return valid_app_file_name(name) ? name : fallback;
}

std::string unique_app_file_name(const std::string& name, std::set<std::string>& taken) {
  if (taken.insert(name).second) return name;
  // "slurm-7.out" → "slurm-7" + ".out"; a name without a (short) extension
  // gets the number at its end.
  auto dot = name.find_last_of('.');
  bool has_ext = dot != std::string::npos && dot > 0 && name.size() - dot <= 16;
  std::string stem = has_ext ? name.substr(0, dot) : name;
  std::string ext = has_ext ? name.substr(dot) : "";
  for (std::size_t n = 2;; ++n) {
    std::string suffix(1, '-');
    suffix += std::to_string(n);
    std::string s = stem;
    if (s.size() + suffix.size() + ext.size() > kMaxAppFileName)
      s.resize(kMaxAppFileName - suffix.size() - ext.size());
    std::string candidate = s + suffix + ext;
    if (taken.insert(candidate).second) return candidate;
  }
}

}  // namespace ff
