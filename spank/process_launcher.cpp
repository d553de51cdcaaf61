#include "spank/process_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/launch/detached_launch.h"

namespace firstfault::spank {
namespace {

using Clock = std::chrono::steady_clock;

// argv/envp for exec, built before fork: after fork() in a multithreaded slurmstepd
// only async-signal-safe calls are allowed.
std::vector<char*> PointerArray(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (const std::string& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

void SleepMilliseconds(long milliseconds) {
  timespec duration{milliseconds / 1000, (milliseconds % 1000) * 1000000L};
  while (nanosleep(&duration, &duration) != 0 && errno == EINTR) {
  }
}

// Polls waitpid until the child ends or the deadline passes. True when it ended;
// *lost when someone else reaped it (slurmstepd's own wait3, SIGCHLD ignored).
bool WaitUntil(pid_t pid, Clock::time_point deadline, int* status, bool* lost) {
  long pause_ms = 1;
  while (true) {
    pid_t result = waitpid(pid, status, WNOHANG);
    if (result == pid) return true;
    if (result < 0 && errno != EINTR) {
      *lost = true;
      return true;
    }
    if (Clock::now() >= deadline) return false;
    SleepMilliseconds(pause_ms);
    if (pause_ms < 20) pause_ms *= 2;
  }
}

std::chrono::milliseconds Since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

std::string CheckExecutable(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty()) return "empty command";
  if (access(argv[0].c_str(), X_OK) != 0) {
    return "cannot execute " + argv[0] + ": " + std::strerror(errno);
  }
  return "";
}

}  // namespace

std::vector<std::string> CollectorEnvironment() {
  return {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"};
}

std::string LaunchDetached(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env) {
  ff::DetachedCommand command;
  command.argv = argv;
  command.environment = env;
  ff::LaunchResult result = ff::launch_detached(command);
  return result.ok() ? "" : ff::describe(result, command);
}

BoundedRun RunBounded(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                      std::chrono::milliseconds kill_grace, const std::vector<std::string>& env) {
  BoundedRun run;
  Clock::time_point start = Clock::now();
  if (run.error = CheckExecutable(argv); !run.error.empty()) return run;
  std::vector<char*> args = PointerArray(argv);
  std::vector<char*> envp = PointerArray(env);

  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigset_t all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  // A new session makes the collector a process group leader: the timeout kills its
  // children too.
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  pid_t pid = -1;
  int spawn_error = posix_spawn(&pid, args[0], &actions, &attributes, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawn_error != 0) {
    run.error = "cannot start " + argv[0] + ": " + std::strerror(spawn_error);
    return run;
  }

  int status = 0;
  bool lost = false;
  bool ended = WaitUntil(pid, start + timeout, &status, &lost);
  if (!ended) {
    kill(-pid, SIGTERM);
    ended = WaitUntil(pid, Clock::now() + kill_grace, &status, &lost);
    if (!ended) {
      kill(-pid, SIGKILL);
      WaitUntil(pid, Clock::now() + kill_grace, &status, &lost);
    }
    run.outcome = BoundedRun::Outcome::kTimedOut;
    run.wait_status = status;
  } else if (lost) {
    run.outcome = BoundedRun::Outcome::kLost;
    run.error = "its exit status was collected elsewhere";
  } else {
    run.outcome =
        WIFSIGNALED(status) ? BoundedRun::Outcome::kSignaled : BoundedRun::Outcome::kExited;
    run.wait_status = status;
  }
  run.elapsed = Since(start);
  return run;
}

std::string DescribeBoundedRun(const BoundedRun& run) {
  std::string elapsed = " after " + std::to_string(run.elapsed.count()) + " ms";
  switch (run.outcome) {
    case BoundedRun::Outcome::kExited:
      return "exited " + std::to_string(WEXITSTATUS(run.wait_status)) + elapsed;
    case BoundedRun::Outcome::kSignaled:
      return "killed by signal " + std::to_string(WTERMSIG(run.wait_status)) + elapsed;
    case BoundedRun::Outcome::kTimedOut:
      return "timed out and was killed" + elapsed;
    case BoundedRun::Outcome::kNotStarted:
      return "not started: " + run.error;
    case BoundedRun::Outcome::kLost:
      return "ended, " + run.error + elapsed;
  }
  return "unknown";
}

}  // namespace firstfault::spank
