// Starting firstfault-collect from slurmstepd. Both ways give the child a clean
// process: its own session, stdio on /dev/null, no inherited descriptors (slurmstepd
// holds the job's sockets and pipes), default signal handling and a fixed environment.
#ifndef FIRSTFAULT_SPANK_PROCESS_LAUNCHER_H_
#define FIRSTFAULT_SPANK_PROCESS_LAUNCHER_H_

#include <chrono>
#include <string>
#include <vector>

namespace firstfault::spank {

// The environment of every command: the collector is a root program of ours and
// must not see the job's variables.
std::vector<std::string> CollectorEnvironment();

// ff::launch_detached (common/launch/detached_launch.h) with this environment:
// double fork + setsid, the command is reparented to init and never waited for.
// Returns "" once the intermediate child is reaped (milliseconds), else why not.
std::string LaunchDetached(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env = CollectorEnvironment());

struct BoundedRun {
  enum class Outcome { kExited, kSignaled, kTimedOut, kNotStarted, kLost };
  Outcome outcome = Outcome::kNotStarted;
  int wait_status = 0;  // when kExited or kSignaled
  std::chrono::milliseconds elapsed{0};
  std::string error;  // when kNotStarted or kLost
};

// Runs the command in a new session and waits at most `timeout`; then SIGTERM to its
// process group, SIGKILL after `kill_grace`, and reap. Never longer than
// timeout + 2 * kill_grace.
BoundedRun RunBounded(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                      std::chrono::milliseconds kill_grace = std::chrono::seconds(1),
                      const std::vector<std::string>& env = CollectorEnvironment());

std::string DescribeBoundedRun(const BoundedRun& run);

}  // namespace firstfault::spank

#endif  // FIRSTFAULT_SPANK_PROCESS_LAUNCHER_H_
