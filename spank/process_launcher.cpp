#include "spank/process_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

// In the forked child only: stdio on /dev/null, every other descriptor closed,
// signals back to their defaults.
void ResetChildProcess() {
  int null_fd = open("/dev/null", O_RDWR);
  if (null_fd >= 0) {
    dup2(null_fd, 0);
    dup2(null_fd, 1);
    dup2(null_fd, 2);
  }
  close_range(3, ~0U, 0);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    if (signal_number != SIGKILL && signal_number != SIGSTOP) {
      sigaction(signal_number, &default_action, nullptr);
    }
  }
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
  if (std::string error = CheckExecutable(argv); !error.empty()) return error;
  std::vector<char*> args = PointerArray(argv);
  std::vector<char*> envp = PointerArray(env);
  pid_t child = fork();
  if (child < 0) return std::string("fork: ") + std::strerror(errno);
  if (child == 0) {
    setsid();
    pid_t grandchild = fork();
    if (grandchild != 0) _exit(grandchild < 0 ? 1 : 0);
    ResetChildProcess();
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  // The intermediate child exits at once; reap it so no zombie stays behind.
  int status = 0;
  pid_t reaped;
  do {
    reaped = waitpid(child, &status, 0);
  } while (reaped < 0 && errno == EINTR);
  if (reaped == child && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    return "second fork failed";
  }
  return "";
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
