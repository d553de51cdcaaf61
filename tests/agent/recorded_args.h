// The argument vector a stand-in program (scontrol, sacctmgr) recorded:
// its arguments written NUL-terminated to a file, so that the tests see
// exactly what the agent passed, with no shell in between.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fftest {

inline std::vector<std::string> read_recorded_args(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  std::vector<std::string> out;
  std::string arg;
  for (char c : s.str()) {
    if (c == '\0') {
      out.push_back(arg);
      arg.clear();
    } else {
      arg += c;
    }
  }
  return out;
}

}  // namespace fftest
