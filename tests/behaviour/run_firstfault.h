// Runs the real firstfault binary and captures stdout and the exit code.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace fftest {

struct RunResult {
  int exit_code = -1;
  std::string out;
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// `timeout_s` > 0: the run is killed after that many seconds (exit code 137),
// for input that must not make the engine wait.
inline RunResult run_firstfault(const std::string& args, int timeout_s = 0) {
  RunResult r;
  std::string cmd = (timeout_s > 0 ? "timeout -s KILL " + std::to_string(timeout_s) + " " : "") +
                    std::string(FF_BINARY) + " " + args + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 65536> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A scratch incident directory, removed at the end of the test.
class TempIncident {
 public:
  const std::filesystem::path& dir() const { return dir_.path(); }
  std::string arg() const { return shell_quote(dir().string()); }
  void write(const std::string& rel, const std::string& text) const {
    ff::test_support::write_file(dir() / rel, text);
  }

 private:
  ff::test_support::ScratchDirectory dir_{"incident"};
};

}  // namespace fftest
