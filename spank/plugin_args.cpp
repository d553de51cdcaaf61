#include "spank/plugin_args.h"

#include "common/node_name_pattern.h"

#include <charconv>

namespace firstfault::spank {
namespace {

// Paths are used by root in slurmstepd, whose working directory is not ours to guess.
bool IsAbsolutePath(std::string_view value) {
  return !value.empty() && value.front() == '/';
}

void SetPath(std::string_view key, std::string_view value, std::string* target,
             std::vector<std::string>* problems) {
  if (!IsAbsolutePath(value)) {
    problems->push_back(std::string(key) + "=" + std::string(value) +
                        ": not an absolute path, ignored");
    return;
  }
  *target = std::string(value);
}

}  // namespace

ParsedPluginArgs ParsePluginArgs(const std::vector<std::string_view>& words) {
  ParsedPluginArgs parsed;
  PluginArgs& args = parsed.args;
  std::vector<std::string>& problems = parsed.problems;
  for (std::string_view word : words) {
    if (word.empty()) continue;
    size_t equals = word.find('=');
    if (equals == std::string_view::npos || equals == 0) {
      problems.push_back(std::string(word) + ": not key=value, ignored");
      continue;
    }
    std::string_view key = word.substr(0, equals);
    std::string_view value = word.substr(equals + 1);
    if (key == "spool") {
      SetPath(key, value, &args.spool, &problems);
    } else if (key == "collect") {
      SetPath(key, value, &args.collect, &problems);
    } else if (key == "config") {
      SetPath(key, value, &args.config, &problems);
    } else if (key == "fastpass_timeout") {
      int seconds = -1;
      auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
      if (error != std::errc() || end != value.data() + value.size() || seconds < 0 ||
          seconds > kMaxFastpassTimeoutS) {
        problems.push_back(std::string(word) + ": not a number of seconds in [0, " +
                           std::to_string(kMaxFastpassTimeoutS) + "], ignored");
        continue;
      }
      args.fastpass_timeout_s = seconds;
    } else if (key == "agent") {
      args.agent = std::string(value);
    } else if (key == "log") {
      if (value == "off") {
        args.log = LogLevel::kOff;
      } else if (value == "errors") {
        args.log = LogLevel::kErrors;
      } else if (value == "info") {
        args.log = LogLevel::kInfo;
      } else {
        problems.push_back(std::string(word) + ": log is off, errors or info; ignored");
      }
    } else {
      problems.push_back(std::string(word) + ": unknown argument, ignored");
    }
  }
  return parsed;
}

ParsedPluginArgs ParsePluginArgs(int argc, char** argv) {
  std::vector<std::string_view> words;
  for (int i = 0; argv != nullptr && i < argc; ++i) {
    if (argv[i] != nullptr) words.emplace_back(argv[i]);
  }
  return ParsePluginArgs(words);
}

std::string ExpandNodeName(std::string_view pattern, std::string_view node) {
  return ff::expand_node_name(pattern, node);
}

}  // namespace firstfault::spank
