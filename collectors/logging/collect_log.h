// Where the collector's own messages go: <spool>/log/collect.log (rotating,
// so a node never fills up with them) and stderr when someone is watching.
#pragma once

#include <filesystem>

namespace ff::collect {

void setup_logging(const std::filesystem::path& log_dir);

}  // namespace ff::collect
