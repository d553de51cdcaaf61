#include "collectors/config/node_config.h"

#include <gtest/gtest.h>

#include "tests/collectors/collector_test_support.h"

namespace ff::collect {
namespace {

using ff::test_support::ScratchDirectory;

TEST(NodeConfig, MissingFileGivesTheContractDefaults) {
  NodeConfig c = load_node_config("/nonexistent/node.yaml", "n1");
  EXPECT_EQ(c.file, "");
  EXPECT_EQ(c.spool, "/var/spool/firstfault");
  EXPECT_EQ(c.margin_before_s, 300);
  EXPECT_EQ(c.margin_after_s, 60);
  EXPECT_EQ(c.max_bundle_bytes, 67108864u);
  EXPECT_FALSE(c.collect_on_success);
  ASSERT_EQ(c.sources.size(), 4u);
  // kernel: the kernel's own records only; kern.log is a syslog file.
  EXPECT_EQ(c.sources[0].kind, "kernel");
  EXPECT_EQ(c.sources[0].globs, (std::vector<std::string>{"/dev/kmsg"}));
  EXPECT_EQ(c.sources[1].kind, "syslog");
  EXPECT_EQ(c.sources[1].globs, (std::vector<std::string>{"/var/log/syslog*", "/var/log/messages*",
                                                          "/var/log/kern.log*"}));
}

TEST(NodeConfig, ContractExampleWithNodeName) {
  ScratchDirectory dir{"collector"};
  testing::write_file(dir / "node.yaml", R"(agent_url: http://head:7421/
spool: /var/spool/firstfault/%n
margin_before_s: 120
margin_after_s: 30
max_bundle_bytes: 1048576
retry: {initial_s: 1, max_s: 60, give_up_after_s: 3600}
collect_on_success: true
sources:
  kernel: [/dev/kmsg, "journal:kernel"]
  syslog: /var/log/%n/syslog*
  slurmd: [/var/log/slurm/slurmd.%n.log*]
)");
  NodeConfig c = load_node_config(dir / "node.yaml", "n2");
  EXPECT_EQ(c.agent_url, "http://head:7421");
  EXPECT_EQ(c.spool, "/var/spool/firstfault/n2");
  EXPECT_EQ(c.margin_before_s, 120);
  EXPECT_EQ(c.max_bundle_bytes, 1048576u);
  EXPECT_EQ(c.retry.max_s, 60);
  EXPECT_TRUE(c.collect_on_success);
  ASSERT_EQ(c.sources.size(), 3u);
  EXPECT_EQ(c.sources[0].globs, (std::vector<std::string>{"/dev/kmsg", "journal:kernel"}));
  EXPECT_EQ(c.sources[1].globs, (std::vector<std::string>{"/var/log/n2/syslog*"}));
  EXPECT_EQ(c.sources[2].globs, (std::vector<std::string>{"/var/log/slurm/slurmd.n2.log*"}));
}

TEST(NodeConfig, ErrorsNameFileAndLine) {
  ScratchDirectory dir{"collector"};
  testing::write_file(dir / "node.yaml", "agent_url: http://h:1\nmargin_before_s: soon\n");
  try {
    load_node_config(dir / "node.yaml", "n1");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("node.yaml:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("margin_before_s"), std::string::npos) << e.what();
  }
  testing::write_file(dir / "bad.yaml", "agent_url: [unclosed\n");
  EXPECT_THROW(load_node_config(dir / "bad.yaml", "n1"), ConfigError);
  testing::write_file(dir / "kind.yaml", "sources:\n  gpu: [/x]\n");
  try {
    load_node_config(dir / "kind.yaml", "n1");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("kind.yaml:2"), std::string::npos) << e.what();
  }
}

// The kernel kind is the engine's trusted kernel evidence: a file there
// (kern.log, which rsyslog also fills from /dev/log, so `logger -p
// kern.err` writes it) or a journal selection wider than _TRANSPORT=kernel
// would let a user's line pass for the kernel's. Refused with file and line.
TEST(NodeConfig, KernelTakesOnlyTheKernelsOwnRecords) {
  ScratchDirectory dir{"collector"};
  auto error = [&](const std::string& kernel_list) {
    testing::write_file(
        dir / "node.yaml",
        "agent_url: http://h:1\nsources:\n  syslog: [/x]\n  kernel:\n" + kernel_list);
    try {
      load_node_config(dir / "node.yaml", "n1");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string file = (dir / "node.yaml").string();
  std::string e = error("    - /dev/kmsg\n    - /var/log/kern.log*\n");
  EXPECT_EQ(e.rfind(file + ":6: 'sources.kernel': '/var/log/kern.log*' is a file", 0), 0u) << e;
  EXPECT_NE(e.find("list it under 'syslog'"), std::string::npos) << e;
  // %n expanded, as in the message an operator reads; a scalar form too.
  e = error("    /var/log/%n/kern.log\n");
  EXPECT_EQ(e.rfind(file + ":5: 'sources.kernel': '/var/log/n1/kern.log' is a file", 0), 0u) << e;
  for (std::string wide : {"journal:all", "journal:identifier=kernel", "journal:unit=kernel",
                           "journal:SYSLOG_FACILITY=0"}) {
    e = error("    - \"" + wide + "\"\n");
    EXPECT_EQ(e.rfind(file + ":5: 'sources.kernel': '" + wide +
                          "' selects more than the kernel's own records",
                      0),
              0u)
        << e;
    EXPECT_NE(e.find("list it under 'syslog'"), std::string::npos) << e;
  }
  for (std::string ok : {"/dev/kmsg", "journal:kernel", "journal:_TRANSPORT=kernel"})
    EXPECT_EQ(error("    - \"" + ok + "\"\n"), "no error") << ok;
  // The same entries are fine under syslog.
  testing::write_file(dir / "node.yaml",
                      "sources:\n  syslog: [/var/log/kern.log*, \"journal:all\"]\n");
  NodeConfig c = load_node_config(dir / "node.yaml", "n1");
  ASSERT_EQ(c.sources.size(), 1u);
  EXPECT_EQ(c.sources[0].globs, (std::vector<std::string>{"/var/log/kern.log*", "journal:all"}));
}

}  // namespace
}  // namespace ff::collect
