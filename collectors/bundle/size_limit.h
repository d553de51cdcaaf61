// Keeps a bundle under max_bundle_bytes: when the logs are too large
// together, the largest lose their oldest lines (the end of a log is nearest
// the failure), all cut to one common size, and their sources are reported
// "truncated".
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "collectors/bundle/bundle_file.h"

namespace ff::collect {

// `reserve` bytes are kept free for job.json. Returns the collectors whose
// files were cut.
std::set<std::string> fit_to_size(const std::filesystem::path& bundle_root,
                                  std::vector<BundleFile>& files, std::uint64_t max_bytes,
                                  std::uint64_t reserve = 1 << 20);

}  // namespace ff::collect
