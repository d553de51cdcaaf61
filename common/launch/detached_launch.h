// Starting a program that outlives its caller and is never waited for: the SPANK
// plugin's step collector (from slurmstepd), the Epilog's collector (from slurmd)
// and the fast pass's detached flush. Each caller is a process that must not be
// held up, and must not hand its own descriptors, signals or session to what it
// starts: slurmd waits for EOF on the Epilog's stdout, slurmstepd kills the job's
// process group, and both hold sockets and pipes of the job.
//
// Double fork + setsid: the program is re-parented to init, in its own session;
// only the intermediate child is reaped, within a time bound. In the program,
// before exec: stdio on /dev/null, every other descriptor closed, an empty signal
// mask and default dispositions. Everything exec needs (argument and environment
// arrays, paths) is built before the first fork, since after fork() in a
// multithreaded process only async-signal-safe calls are allowed. No exception
// leaves launch_detached: the plugin calls it inside slurmstepd.
//
// A tiny library of its own (ff_launch, standard library only, position
// independent) so that the plugin and the Epilog can link it without anything
// else of common/.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ff {

struct DetachedCommand {
  // The file to exec; empty: argv[0]. Set when the name the program sees differs
  // from the file (a re-exec of /proc/self/exe under its usual name).
  std::string program;
  std::vector<std::string> argv;
  // The program's whole environment, "NAME=value" each; see current_environment().
  std::vector<std::string> environment;
  // Applied in the program before exec when set (>= 0, and non-empty).
  mode_t umask = static_cast<mode_t>(-1);
  std::string working_directory;  // a failed chdir is ignored, as by daemon(3)
};

enum class LaunchFailure {
  kNone,
  kEmptyCommand,
  kNotExecutable,     // the program is missing or not executable (errno_value says why)
  kOutOfMemory,       // building the exec arrays failed
  kForkFailed,        // the first fork (errno_value)
  kSecondForkFailed,  // the intermediate child could not fork the program
  kNotReaped,         // the intermediate child did not exit within its bound and was killed
};

struct LaunchResult {
  LaunchFailure failure = LaunchFailure::kNone;
  int errno_value = 0;
  bool ok() const noexcept { return failure == LaunchFailure::kNone; }
};

// Returns once the program is started (typically well under a millisecond of
// waiting) or could not be. A program that fails in exec itself ends with exit
// status 127, unseen by the caller: that is why the program is checked for
// execute permission first.
LaunchResult launch_detached(const DetachedCommand& command) noexcept;

// "cannot execute /usr/libexec/firstfault/firstfault-collect: No such file or
// directory", "fork: Resource temporarily unavailable", ...
std::string describe(const LaunchResult& result, const DetachedCommand& command);

// This process's environment as it is now, for a program that should inherit it.
std::vector<std::string> current_environment();

}  // namespace ff
