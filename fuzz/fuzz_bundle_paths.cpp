// Fuzzes the closed grammar of uploaded bundle names (job id, node, bundle
// id, file paths). The input is "node\npath". Besides not crashing, an
// accepted path must never escape the bundle: no absolute path, no ".." or
// empty component, and it must belong to job.json, nodes/<node>/ or app/.
// The app/ name the collector derives from any output path (the input) is
// always accepted.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "agent/server/bundle_rules.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  (void)ff::agent::valid_job_id(in);
  (void)ff::agent::valid_bundle_id(in);
  std::set<std::string> taken;
  std::string derived = ff::app_file_name_for(in, "stdout");
  if (!ff::valid_app_file_name(derived) || ff::unique_app_file_name(derived, taken) != derived ||
      !ff::valid_app_file_name(ff::unique_app_file_name(derived, taken)))
    __builtin_trap();
  std::size_t nl = in.find('\n');
  std::string node = nl == std::string::npos ? "gpu-node-01" : in.substr(0, nl);
  std::string path = nl == std::string::npos ? in : in.substr(nl + 1);
  bool node_ok = ff::agent::valid_node_name(node);
  if (!node_ok) return 0;
  if (!ff::agent::bundle_path_problem(path, node).empty()) return 0;

  // Accepted: check it is safe to join under the bundle directory.
  if (path.empty() || path.front() == '/' || path.back() == '/') __builtin_trap();
  std::size_t start = 0;
  while (true) {
    std::size_t slash = path.find('/', start);
    std::string comp =
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (comp.empty() || comp == "." || comp == "..") __builtin_trap();
    if (comp.find('\0') != std::string::npos) __builtin_trap();
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  const std::string node_prefix = "nodes/" + node + "/";
  if (path != "job.json" && path.rfind(node_prefix, 0) != 0 && path.rfind("app/", 0) != 0)
    __builtin_trap();
  return 0;
}
