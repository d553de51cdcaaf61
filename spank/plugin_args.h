// The plugstack.conf arguments of spank_firstfault.so, e.g.
//   optional spank_firstfault.so spool=/var/spool/firstfault/%n collect=/usr/libexec/... log=info
// Parsing never fails: a bad argument is reported and the default is kept,
// because a plugin that refuses its arguments would stop every job on the node.
#ifndef FIRSTFAULT_SPANK_PLUGIN_ARGS_H_
#define FIRSTFAULT_SPANK_PLUGIN_ARGS_H_

#include <string>
#include <string_view>
#include <vector>

namespace firstfault::spank {

enum class LogLevel { kOff, kErrors, kInfo };

struct PluginArgs {
  std::string spool = "/var/spool/firstfault";  // may contain %n
  std::string collect = "/usr/libexec/firstfault/firstfault-collect";
  std::string config;           // node.yaml for the collector; empty: its own default
  int fastpass_timeout_s = 15;  // 0: no fast pass at all
  std::string agent;            // informational: the collector reads the URL from its config
  LogLevel log = LogLevel::kErrors;
};

// Upper bound of fastpass_timeout: the batch step, and so the job, waits this long.
inline constexpr int kMaxFastpassTimeoutS = 300;

struct ParsedPluginArgs {
  PluginArgs args;
  std::vector<std::string> problems;  // one sentence per ignored argument
};

ParsedPluginArgs ParsePluginArgs(const std::vector<std::string_view>& words);
ParsedPluginArgs ParsePluginArgs(int argc, char** argv);

// Replaces %n by the node name and %% by %; any other %x is kept as written.
std::string ExpandNodeName(std::string_view pattern, std::string_view node);

}  // namespace firstfault::spank

#endif  // FIRSTFAULT_SPANK_PLUGIN_ARGS_H_
