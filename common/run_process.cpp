#include "common/run_process.h"

#include <algorithm>
#include <string_view>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace ff {

namespace {

using Clock = std::chrono::steady_clock;

// Closes a descriptor once; -1 means closed.
void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

struct Pipe {
  int read = -1;
  int write = -1;
  bool open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    read = fds[0];
    write = fds[1];
    return true;
  }
  void close_both() {
    close_fd(read);
    close_fd(write);
  }
};

// Appends what fits under the bound; the rest is dropped but still read, so
// a chatty child never blocks on a full pipe.
void append_bounded(std::string& to, bool& truncated, const char* data, std::size_t n,
                    std::size_t bound) {
  std::size_t room = to.size() < bound ? bound - to.size() : 0;
  if (n > room) truncated = true;
  to.append(data, std::min(n, room));
}

// Blocks SIGPIPE in this thread while the child's stdin is written, so a child
// that exits without reading its input cannot kill the caller; a SIGPIPE
// raised meanwhile is consumed before the mask is restored.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigset_t pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_);
  }
  ~SigpipeBlock() {
    if (!was_pending_) {
      sigset_t pipe_set;
      sigemptyset(&pipe_set);
      sigaddset(&pipe_set, SIGPIPE);
      struct timespec zero {};
      while (sigtimedwait(&pipe_set, nullptr, &zero) > 0) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t old_{};
  bool was_pending_ = false;
};

void decode_status(int status, ProcessResult& r) {
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
}

}  // namespace

std::string ProcessResult::describe() const {
  if (!started) return "not started: " + error;
  if (timed_out) return "timed out";
  if (signal != 0) return "killed by signal " + std::to_string(signal);
  return "exit " + std::to_string(exit_code);
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  ProcessResult r;
  if (argv.empty() || argv[0].empty()) {
    r.error = "empty argument vector";
    return r;
  }
  Pipe in, out, err;
  if (!out.open() || !err.open() || (options.stdin_text && !in.open())) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    in.close_both();
    out.close_both();
    err.close_both();
    return r;
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (options.stdin_text)
    posix_spawn_file_actions_adddup2(&actions, in.read, STDIN_FILENO);
  else
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write, STDERR_FILENO);
  // The child gets stdin, stdout and stderr and nothing else: a descriptor
  // another thread opened without close-on-exec (a socket between accept()
  // and its FD_CLOEXEC, a file) never reaches scontrol or sacctmgr.
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty_mask;
  sigemptyset(&empty_mask);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2})
    sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attr, &empty_mask);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  // The parent's environment, less the names options.environment sets.
  std::vector<char*> env;
  if (!options.environment.empty()) {
    for (char** e = environ; e && *e; ++e) {
      std::string_view entry(*e);
      std::string_view name = entry.substr(0, entry.find('='));
      bool replaced = std::any_of(
          options.environment.begin(), options.environment.end(),
          [&](const std::string& o) { return std::string_view(o).substr(0, o.find('=')) == name; });
      if (!replaced) env.push_back(*e);
    }
    for (const auto& o : options.environment) env.push_back(const_cast<char*>(o.c_str()));
    env.push_back(nullptr);
  }
  char** child_env = options.environment.empty() ? environ : env.data();

  pid_t pid = -1;
  int rc = argv[0].find('/') != std::string::npos
               ? posix_spawn(&pid, args[0], &actions, &attr, args.data(), child_env)
               : posix_spawnp(&pid, args[0], &actions, &attr, args.data(), child_env);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close_fd(in.read);
  close_fd(out.write);
  close_fd(err.write);
  if (rc != 0) {
    r.error = argv[0] + ": " + std::strerror(rc);
    in.close_both();
    out.close_both();
    err.close_both();
    return r;
  }
  r.started = true;

  const auto start = Clock::now();
  const auto deadline = start + options.timeout;
  std::string input = options.stdin_text.value_or("");
  std::size_t input_pos = 0;
  if (in.write >= 0) {
    ::fcntl(in.write, F_SETFL, ::fcntl(in.write, F_GETFL) | O_NONBLOCK);
    if (input.empty()) close_fd(in.write);
  }
  std::optional<SigpipeBlock> sigpipe_block;
  if (in.write >= 0) sigpipe_block.emplace();

  bool exited = false;
  int status = 0;
  std::array<char, 65536> buf{};
  // Reads until both output pipes close, the child is gone, or time is up.
  // A grandchild that keeps a pipe open cannot hold us past the child's exit.
  while (out.read >= 0 || err.read >= 0 || in.write >= 0) {
    if (!exited) {
      pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) exited = true;
    }
    auto now = Clock::now();
    if (!exited && now >= deadline) break;
    int wait_ms =
        exited ? 0
               : static_cast<int>(std::min<long long>(
                     50,
                     std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() +
                         1));
    std::array<pollfd, 3> fds{};
    nfds_t n = 0;
    int* owners[3];
    for (int* fd : {&out.read, &err.read}) {
      if (*fd < 0) continue;
      fds[n] = {*fd, POLLIN, 0};
      owners[n++] = fd;
    }
    if (in.write >= 0) {
      fds[n] = {in.write, POLLOUT, 0};
      owners[n++] = &in.write;
    }
    int ready = ::poll(fds.data(), n, wait_ms);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) {
      if (exited) break;  // child gone and nothing more to read right now
      continue;
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      int* fd = owners[i];
      if (fd == &in.write) {
        ssize_t k = ::write(in.write, input.data() + input_pos, input.size() - input_pos);
        if (k > 0) input_pos += static_cast<std::size_t>(k);
        if ((k < 0 && errno != EAGAIN && errno != EINTR) || input_pos >= input.size())
          close_fd(in.write);
        continue;
      }
      ssize_t k = ::read(*fd, buf.data(), buf.size());
      if (k > 0) {
        if (fd == &out.read)
          append_bounded(r.out, r.out_truncated, buf.data(), static_cast<std::size_t>(k),
                         options.max_output_bytes);
        else
          append_bounded(r.err, r.err_truncated, buf.data(), static_cast<std::size_t>(k),
                         options.max_output_bytes);
      } else if (k == 0 || (errno != EAGAIN && errno != EINTR)) {
        close_fd(*fd);
      }
    }
  }
  in.close_both();
  out.close_both();
  err.close_both();
  sigpipe_block.reset();

  if (!exited) {
    // Either time is up or the pipes closed before the child exited.
    while (Clock::now() < deadline) {
      pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) {
        exited = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (!exited) {
    r.timed_out = true;
    ::kill(-pid, SIGTERM);
    ::kill(pid, SIGTERM);
    auto grace_end = Clock::now() + options.kill_grace;
    while (Clock::now() < grace_end) {
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!exited) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }
  decode_status(status, r);
  return r;
}

}  // namespace ff
