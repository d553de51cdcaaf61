// Fuzzes expand_hostlist (Slurm hostlist syntax: "gpu[01-04,07],cpu1").
// The expansion is bounded by kMaxHostlistNames whatever the input says.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "common/hostlist.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  try {
    auto names = ff::expand_hostlist(in);
    if (names.size() > ff::kMaxHostlistNames) __builtin_trap();
  } catch (const std::exception&) {
    // A malformed hostlist may be rejected by an exception (see hostlist.h).
  }
  return 0;
}
