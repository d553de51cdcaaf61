// Messages of the plugin through Slurm's own log, filtered by the log= argument.
//
// Both levels go out with slurm_info(): in slurmstepd, slurm_error() also writes to
// the job's stderr (its stderr level is "error"), and a broken collector or spool is
// the administrator's business, not a line in every user's job output. slurmd logs
// info by default (SlurmdDebug=info), so the messages land in its log file, as
// "firstfault: error: ..." and "firstfault: ...".
#ifndef FIRSTFAULT_SPANK_PLUGIN_LOG_H_
#define FIRSTFAULT_SPANK_PLUGIN_LOG_H_

#include <string>

#include "spank/plugin_args.h"

namespace firstfault::spank {

void SetLogLevel(LogLevel level);
void LogError(const std::string& message);
void LogInfo(const std::string& message);

}  // namespace firstfault::spank

#endif  // FIRSTFAULT_SPANK_PLUGIN_LOG_H_
