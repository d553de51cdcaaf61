// Runs a program with an argument vector — never through a shell, so no
// argument is ever interpreted — with optional stdin, bounded capture of
// stdout and stderr, and a time bound (SIGTERM to its process group, then
// SIGKILL). Safe to call from several threads at once; it starts no thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ff {

struct ProcessOptions {
  std::optional<std::string> stdin_text;       // nullopt: stdin is /dev/null
  std::chrono::milliseconds timeout{10000};    // from start to SIGTERM
  std::chrono::milliseconds kill_grace{2000};  // from SIGTERM to SIGKILL
  std::size_t max_output_bytes = 1 << 20;      // per stream; the rest is read and dropped
  // "NAME=value" entries set for the child over the parent's environment
  // (SLURM_TIME_FORMAT=%s: Slurm's commands print times as epoch seconds).
  std::vector<std::string> environment;
};

struct ProcessResult {
  bool started = false;    // false: the program could not be started (see error)
  std::string error;       // why it could not be started
  int exit_code = -1;      // WEXITSTATUS when it exited normally, else -1
  int signal = 0;          // the terminating signal, 0 when it exited
  bool timed_out = false;  // it was still running at the time bound and was killed
  std::string out;         // captured stdout (at most max_output_bytes)
  std::string err;         // captured stderr (at most max_output_bytes)
  bool out_truncated = false;
  bool err_truncated = false;

  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
  // One line for logs: "exit 1", "killed by signal 9", "timed out", "not started: ...".
  std::string describe() const;
};

// argv[0] is the program: a path when it contains '/', else looked up in PATH.
// The child gets the parent's environment (with options.environment over it),
// an empty signal mask, default
// signal dispositions and its own process group.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

}  // namespace ff
