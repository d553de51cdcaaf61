#include "server/bundle_rules.h"

#include <cctype>

#include "common/node_name.h"
#include "read/incident_layout.h"

namespace ff::agent {

namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}

// ^[A-Za-z0-9][A-Za-z0-9._-]{0,max_rest}$, and never "." or "..".
bool plain_name(const std::string& s, std::size_t max_rest) {
  if (s.empty() || s.size() > max_rest + 1) return false;
  if (!std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!is_name_char(c)) return false;
  return s.find("..") == std::string::npos;
}

// The job's output keeps the name the user gave it ("train run.out"): any
// single path component that is not hidden and holds no control character.
bool app_file_name(const std::string& name) {
  if (name.empty() || name.size() > 255 || name[0] == '.') return false;
  for (char ch : name) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f || c == '/' || c == '\\') return false;
  }
  return true;
}

// The engine's own kinds (read/incident_layout): what the agent accepts is
// exactly what the engine reads ("kernel", "dmesg", "syslog.1", "app.log").
bool node_file_name(const std::string& name) {
  return plain_name(name, 127) && ff::node_file_kind(name) != "other";
}

}  // namespace

bool valid_job_id(const std::string& job_id) {
  std::size_t i = 0;
  auto digits = [&]() {
    std::size_t start = i;
    while (i < job_id.size() && std::isdigit(static_cast<unsigned char>(job_id[i]))) ++i;
    return i > start && i - start <= 19;
  };
  if (!digits()) return false;
  if (i == job_id.size()) return true;
  if (job_id[i] != '_') return false;
  ++i;
  return digits() && i == job_id.size();
}

bool valid_node_name(const std::string& node) {
  return ff::valid_node_name(node);
}

bool valid_bundle_id(const std::string& bundle_id) {
  return plain_name(bundle_id, 199);
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
    if (!app_file_name(rest)) return "app file name not allowed";
    return "";
  }
  if (top == "nodes") {
    auto second = rest.find('/');
    if (second == std::string::npos) return "node file without a node directory";
    if (rest.substr(0, second) != node) return "file of another node";
    std::string name = rest.substr(second + 1);
    if (!node_file_name(name))
      return "node file name not allowed (kernel, syslog, fabricmanager, "
             "slurmd or app, with an optional suffix)";
    return "";
  }
  return "file outside job.json, nodes/ and app/";
}

}  // namespace ff::agent
