// Runs the real firstfault binary: stdout and the exit code.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace fftest {

struct CliResult {
  int exit_code = -1;
  std::string out;
};

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// `env` is prepended to the command line ("FIRSTFAULT_DB=... "); stderr is dropped.
inline CliResult run_cli(const std::string& args, const std::string& env = "") {
  CliResult r;
  std::string cmd =
      "env -u FIRSTFAULT_DB " + env + " " + std::string(FF_BINARY) + " " + args + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 65536> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace fftest
