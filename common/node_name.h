// What the agent and the central sources accept as a node name before it
// becomes a path component (`nodes/<node>/`): Slurm names nodes freely, but a
// name from the network, a job.json or a Slurm answer must never be "..", hold
// a '/', or start like an option. Header-only, like node_name_pattern.h.
#pragma once

#include <string_view>

namespace ff {

// ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$
inline bool valid_node_name(std::string_view node) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (node.empty() || node.size() > 64 || !alnum(node[0])) return false;
  for (char c : node)
    if (!alnum(c) && c != '.' && c != '_' && c != '-') return false;
  return true;
}

}  // namespace ff
