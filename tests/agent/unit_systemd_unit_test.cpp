// The packaged systemd unit of the agent confines it: the agent reads job
// output and node logs a hostile user wrote, on the head node. Each
// directive below is one the agent works with (it execs scontrol/sacctmgr,
// talks to munged's socket, listens on TCP, writes only its state
// directory); this test keeps them from being dropped.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace {

// [Service] key=value pairs of a unit file; a key given more than once
// (SystemCallFilter=) has its values joined by "|".
std::map<std::string, std::string> service_section(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, std::string> out;
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      section = line;
      continue;
    }
    auto eq = line.find('=');
    if (section != "[Service]" || eq == std::string::npos) continue;
    std::string& value = out[line.substr(0, eq)];
    if (!value.empty()) value += '|';
    value += line.substr(eq + 1);
  }
  return out;
}

TEST(SystemdUnit, AgentServiceIsHardened) {
  auto s = service_section(FF_SOURCE_DIR "/packaging/common/firstfault-agent.service");
  ASSERT_FALSE(s.empty());
  std::map<std::string, std::string> expected = {
      {"User", "slurm"},
      {"NoNewPrivileges", "yes"},
      {"ProtectSystem", "strict"},
      {"ReadWritePaths", "/var/lib/firstfault"},
      // Read: the job output it copies may be on /home; never written.
      {"ProtectHome", "read-only"},
      {"PrivateTmp", "yes"},
      {"PrivateMounts", "yes"},
      {"PrivateDevices", "yes"},
      {"ProtectKernelTunables", "yes"},
      {"ProtectKernelModules", "yes"},
      {"ProtectKernelLogs", "yes"},
      {"ProtectControlGroups", "yes"},
      {"ProtectClock", "yes"},
      {"ProtectHostname", "yes"},
      {"ProtectProc", "invisible"},
      {"RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6"},
      {"RestrictNamespaces", "yes"},
      {"RestrictRealtime", "yes"},
      {"RestrictSUIDSGID", "yes"},
      {"LockPersonality", "yes"},
      {"MemoryDenyWriteExecute", "yes"},
      {"SystemCallArchitectures", "native"},
      {"CapabilityBoundingSet", ""},
      {"AmbientCapabilities", ""},
      {"UMask", "0027"},
  };
  for (const auto& [key, value] : expected) {
    ASSERT_TRUE(s.count(key)) << key << " missing";
    EXPECT_EQ(s[key], value) << key;
  }
  // A memory bound (with a soft one below it) and a bound on tasks.
  ASSERT_TRUE(s.count("MemoryMax"));
  ASSERT_TRUE(s.count("MemoryHigh"));
  ASSERT_TRUE(s.count("TasksMax"));
  EXPECT_EQ(s["SystemCallFilter"], "@system-service|~@privileged");
  EXPECT_EQ(s["SystemCallErrorNumber"], "EPERM");
  // munged's socket stays reachable: /run is not hidden.
  EXPECT_EQ(s.count("InaccessiblePaths") ? s["InaccessiblePaths"].find("/run") : std::string::npos,
            std::string::npos);
}

}  // namespace
