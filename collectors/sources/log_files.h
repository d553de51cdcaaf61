// The files a source's globs name on this node, rotated ones included
// ("/var/log/syslog*" → syslog.3.gz, syslog.2.gz, syslog.1, syslog), oldest
// first: by modification time, then by rotation number.
#pragma once

#include <string>
#include <vector>

namespace ff::collect {

struct GlobResult {
  std::vector<std::string> files;   // oldest first, each at most once
  std::vector<std::string> errors;  // glob(3) failures other than "no match"
};

GlobResult expand_log_globs(const std::vector<std::string>& globs);

}  // namespace ff::collect
