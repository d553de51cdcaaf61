#include "spank/plugin_log.h"

#include "spank/slurm_api.h"

namespace firstfault::spank {
namespace {

// A plain enum value: constant-initialized, nothing to run at dlopen or dlclose.
LogLevel log_level = LogLevel::kErrors;

}  // namespace

void SetLogLevel(LogLevel level) {
  log_level = level;
}

void LogError(const std::string& message) {
  if (log_level != LogLevel::kOff) slurm_info("firstfault: error: %s", message.c_str());
}

void LogInfo(const std::string& message) {
  if (log_level == LogLevel::kInfo) slurm_info("firstfault: %s", message.c_str());
}

}  // namespace firstfault::spank
