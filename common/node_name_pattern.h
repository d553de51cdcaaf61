// `%n` in a configured path is the Slurm node name, so that several slurmd on
// one host (multiple-slurmd mode, the test cluster) keep separate spools and
// logs. The plugin, the Epilog and the collector must expand it alike, and the
// plugin and the Epilog link nothing of ff_common: hence header-only.
#pragma once

#include <string>
#include <string_view>

namespace ff {

// `%n` becomes `node`, `%%` becomes `%`; any other `%` is kept as it is.
inline std::string expand_node_name(std::string_view pattern, std::string_view node) {
  std::string expanded;
  expanded.reserve(pattern.size() + node.size());
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() &&
        (pattern[i + 1] == 'n' || pattern[i + 1] == '%')) {
      if (pattern[i + 1] == 'n')
        expanded += node;
      else
        expanded += '%';
      ++i;
      continue;
    }
    expanded += pattern[i];
  }
  return expanded;
}

}  // namespace ff
