// Slurm hostlists ("n[1-3]", "gpu-a[01-03,07],login1") expanded into node
// names, as SLURM_NODELIST and the plugin's alloc records carry them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ff {

// A hostlist longer than this is refused: a corrupt or hostile string must
// not make a node-side program allocate without bound.
constexpr std::size_t kMaxHostlistNames = 65536;

// Expands a hostlist into names in the order written, zero padding kept
// ("a[08-10]" → a08 a09 a10). Several bracket groups multiply
// ("r[1-2]n[1-2]" → r1n1 r1n2 r2n1 r2n2). Throws std::invalid_argument on a
// malformed list or one of more than kMaxHostlistNames names.
std::vector<std::string> expand_hostlist(std::string_view hostlist);

}  // namespace ff
