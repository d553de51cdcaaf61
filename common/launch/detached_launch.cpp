#include "common/launch/detached_launch.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace ff {
namespace {

// The intermediate child only calls setsid and fork: it exits within
// microseconds unless the machine is in trouble, and then the caller (slurmd's
// Epilog, slurmstepd) must still return.
constexpr long kIntermediateWaitMs = 2000;
constexpr long kAfterKillWaitMs = 500;

std::vector<char*> pointer_array(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (const std::string& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

// The file that exec will open, as seen before the chdir the program makes.
std::string checked_path(const DetachedCommand& command) {
  const std::string& program = command.program.empty() ? command.argv[0] : command.program;
  if (program.front() == '/' || command.working_directory.empty()) return program;
  return command.working_directory + "/" + program;
}

// In the program only, between fork and exec: async-signal-safe calls only.
[[noreturn]] void exec_program(const char* program, char* const* argv, char* const* envp,
                               mode_t mask, const char* working_directory) {
  int null_fd = open("/dev/null", O_RDWR);
  if (null_fd >= 0) {
    dup2(null_fd, STDIN_FILENO);
    dup2(null_fd, STDOUT_FILENO);
    dup2(null_fd, STDERR_FILENO);
  }
  // The caller's pipes among them: slurmd sees EOF on the Epilog's stdout now.
  closefrom(STDERR_FILENO + 1);
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
  if (mask != static_cast<mode_t>(-1)) umask(mask);
  if (working_directory != nullptr && chdir(working_directory) != 0) {
  }
  execve(program, argv, envp);
  _exit(127);
}

void sleep_microseconds(long microseconds) {
  timespec duration{microseconds / 1000000, (microseconds % 1000000) * 1000L};
  while (nanosleep(&duration, &duration) != 0 && errno == EINTR) {
  }
}

enum class Reaped { kExited, kGone, kStillRunning };

// Polls waitpid until the child ends or `limit_ms` passes. kGone: someone else
// collected it (SIGCHLD ignored, or slurmstepd's own wait).
Reaped wait_bounded(pid_t pid, long limit_ms, int* status) {
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  long pause_us = 50;
  while (true) {
    pid_t result = waitpid(pid, status, WNOHANG);
    if (result == pid) return Reaped::kExited;
    if (result < 0 && errno != EINTR) return Reaped::kGone;
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    long elapsed_ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    if (elapsed_ms >= limit_ms) return Reaped::kStillRunning;
    sleep_microseconds(pause_us);
    if (pause_us < 10000) pause_us *= 2;
  }
}

}  // namespace

LaunchResult launch_detached(const DetachedCommand& command) noexcept {
  if (command.argv.empty() || command.argv[0].empty()) return {LaunchFailure::kEmptyCommand, 0};
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::string path;
  try {
    path = checked_path(command);
    argv = pointer_array(command.argv);
    envp = pointer_array(command.environment);
  } catch (...) {
    return {LaunchFailure::kOutOfMemory, ENOMEM};
  }
  if (access(path.c_str(), X_OK) != 0) return {LaunchFailure::kNotExecutable, errno};
  const char* program = command.program.empty() ? argv[0] : command.program.c_str();
  const char* working_directory =
      command.working_directory.empty() ? nullptr : command.working_directory.c_str();

  pid_t child = fork();
  if (child < 0) return {LaunchFailure::kForkFailed, errno};
  if (child == 0) {
    setsid();
    pid_t grandchild = fork();
    if (grandchild != 0) _exit(grandchild < 0 ? 1 : 0);
    exec_program(program, argv.data(), envp.data(), command.umask, working_directory);
  }
  int status = 0;
  switch (wait_bounded(child, kIntermediateWaitMs, &status)) {
    case Reaped::kExited:
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
      return {LaunchFailure::kSecondForkFailed, 0};
    case Reaped::kGone:
      return {};
    case Reaped::kStillRunning:
      kill(child, SIGKILL);
      wait_bounded(child, kAfterKillWaitMs, &status);
      return {LaunchFailure::kNotReaped, 0};
  }
  return {};
}

std::string describe(const LaunchResult& result, const DetachedCommand& command) {
  const std::string& program = !command.program.empty() ? command.program
                               : command.argv.empty()   ? std::string()
                                                        : command.argv[0];
  switch (result.failure) {
    case LaunchFailure::kNone:
      return "started";
    case LaunchFailure::kEmptyCommand:
      return "empty command";
    case LaunchFailure::kNotExecutable:
      return "cannot execute " + program + ": " + std::strerror(result.errno_value);
    case LaunchFailure::kOutOfMemory:
      return "out of memory";
    case LaunchFailure::kForkFailed:
      return std::string("fork: ") + std::strerror(result.errno_value);
    case LaunchFailure::kSecondForkFailed:
      return "second fork failed";
    case LaunchFailure::kNotReaped:
      return "the intermediate child did not exit in time and was killed";
  }
  return "unknown failure";
}

std::vector<std::string> current_environment() {
  std::vector<std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    environment.emplace_back(*entry);
  }
  return environment;
}

}  // namespace ff
