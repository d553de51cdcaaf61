// The agent asks Loki (agent.yaml loki:) once per job attempt, before the
// final pass: here gpu-a02's own bundle lost its kernel lines, Loki still
// has the Xid 79, and the diagnosis names gpu-a02 from Loki's copy, with
// every node's Loki coverage in job.json. (The Loki is the documented-API
// stand-in of tests/central/fake_loki.h.)
#include <gtest/gtest.h>

#include "tests/agent/agent_process.h"
#include "tests/central/fake_loki.h"

namespace {

using namespace fftest;

// Unix nanoseconds of 2026-11-02T10:41:07.512044Z.
constexpr std::int64_t kXidTime = 1793616067512044000LL;

TEST(CentralSources, LokiFillsWhatANodeLost) {
  FakeLoki loki;
  loki.add_stream("{host=\"gpu-a02\", source=\"kernel\"}", {{"host", "gpu-a02"}},
                  {{kXidTime,
                    "gpu-a02 kernel: NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', "
                    "name=<unknown>, GPU has fallen off the bus."}});
  AgentProcess agent("loki:\n  url: " + loki.url() +
                         "\n  prefix_time: true\n  selectors:\n"
                         "    kernel: '{host=\"%n\", source=\"kernel\"}'\n",
                     ended_job());
  auto client = agent.client();
  auto bundles = example_bundles("01-xid79-fallen-off-bus", "epilog", 1796000000000000000LL);
  for (auto& b : bundles)
    for (auto& [name, content] : b.files)
      if (name == "nodes/gpu-a02/syslog") {
        std::string kept, line;
        std::istringstream in(content);
        while (std::getline(in, line))
          if (line.find(" kernel: ") == std::string::npos) kept += line + "\n";
        content = kept;  // the node lost its kernel messages
      }
  for (const auto& b : bundles) ASSERT_EQ(upload(client, b)->status, 201);

  auto d = wait_for_diagnosis(client, "48213");
  ASSERT_TRUE(d) << agent.log();
  EXPECT_EQ((*d)["verdict"], "attributed") << d->dump(2);
  EXPECT_EQ((*d)["sub_domain"], "gpu.fallen_off_bus");
  ASSERT_FALSE((*d)["root_causes"].empty());
  EXPECT_EQ((*d)["root_causes"][0]["node"], "gpu-a02");
  bool from_loki = false;
  for (const auto& e : (*d)["evidence"])
    from_loki |= e.contains("source") && e["source"] == "nodes/gpu-a02/kernel.loki";
  EXPECT_TRUE(from_loki) << (*d)["evidence"].dump(2);
  // Every node's Loki coverage is in the incident's job.json, and the
  // diagnosis shows what Loki said for a node it had nothing for.
  json incident = json::parse(read_file(agent.state() / "jobs/48213/0/incident/job.json"));
  int loki_entries = 0;
  for (const auto& c : incident["coverage"])
    loki_entries += c.value("collector", "") == "loki:kernel";
  EXPECT_EQ(loki_entries, 3) << incident["coverage"].dump(2);
  auto text = [](const json& c, const char* key) {
    return c.contains(key) && c[key].is_string() ? c[key].get<std::string>() : std::string();
  };
  bool a01_kernel_empty = false;
  for (const auto& c : (*d)["coverage"])
    if (text(c, "node") == "gpu-a01" && text(c, "source") == "kernel")
      a01_kernel_empty = text(c, "status") == "empty" &&
                         text(c, "detail").find("host=\"gpu-a01\"") != std::string::npos;
  EXPECT_TRUE(a01_kernel_empty) << (*d)["coverage"].dump(2);
  // Asked once per node, kept for later passes and replays.
  EXPECT_EQ(loki.requests(), 3);
  EXPECT_TRUE(fs::exists(agent.state() / "jobs/48213/0/central/coverage.json"));
  EXPECT_TRUE(fs::exists(agent.state() / "jobs/48213/0/incident/nodes/gpu-a02/kernel.loki"));
}

}  // namespace
