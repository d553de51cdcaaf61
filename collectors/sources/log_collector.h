// Gathers one kind of node log (kernel, syslog, fabricmanager, slurmd) into
// a bundle: every file its globs name, cut to the window, written as
// nodes/<node>/<kind>, <kind>.1, ... (older files get larger numbers, as the
// engine expects of rotated logs), and one coverage entry saying how it went.
#pragma once

#include <filesystem>
#include <vector>

#include "collectors/bundle/bundle_file.h"
#include "collectors/config/node_config.h"
#include "collectors/window/time_window.h"
#include "incident/coverage.h"
#include "incident/time/timestamp_parser.h"

namespace ff::collect {

struct LogCollection {
  Coverage coverage;
  std::vector<BundleFile> files;
  std::uint64_t bytes_read = 0;
};

LogCollection collect_log_kind(const SourceGlobs& source, const std::string& node,
                               const TimeWindow& window, const TimeContext& ctx,
                               const std::filesystem::path& bundle_root);

}  // namespace ff::collect
