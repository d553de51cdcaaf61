// One file of a bundle as it is staged: its path inside the bundle
// ("nodes/n2/syslog.1", "app/slurm-12.out") and the source it came from.
#pragma once

#include <cstdint>
#include <string>

namespace ff::collect {

struct BundleFile {
  std::string rel;        // path inside the bundle, '/' separated
  std::string collector;  // the coverage entry it belongs to
  std::uint64_t bytes = 0;
  bool cuttable = true;  // logs may lose their oldest lines to fit the size limit
};

}  // namespace ff::collect
