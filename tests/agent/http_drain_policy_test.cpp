// The real agent with `drain:` on: the example Xid 79 incident fails two jobs
// on gpu-a02. After the first final pass the drain is declined (1 blame of
// 2); after the second the agent runs scontrol with exactly `update
// NodeName=gpu-a02 State=DRAIN Reason=firstfault: ...`, each its own argument
// (a recording scontrol keeps its argument vector exactly), and both
// decisions are in drain_actions.
// The example has its Xid in gpu-a02's syslog, which a user can write
// (`logger -t kernel`): the engine marks that root cause "trusted": false
// and it drains nothing. Moved into the node's kernel log (what the
// collector's `kernel` source holds: the kernel's own records), it drains.
#include <gtest/gtest.h>

#include "tests/agent/agent_process.h"
#include "tests/support/fake_command.h"

namespace {

using namespace fftest;
using ff::test_support::FakeCommand;

// firstfault-slurm-job answers for the id asked (the example job's record
// with that id); scontrol answers `show config` as the fixture's does and
// `show node` with IDLE for the example's nodes, and records every call.
FakeCommand install_recording_scontrol(const fs::path& dir) {
  write_executable(dir / "firstfault-slurm-job",
                   R"(#!/bin/sh
sed "s/\"job_id\":\"48213\"/\"job_id\":\"$1\"/" ')" +
                       FakeSlurm::job_file(dir).string() + "'\n");
  FakeCommand scontrol(dir, "scontrol");
  scontrol.answer_when({"show", "config"}, {.out = read_file(dir / "config.txt")});
  for (std::string node : {"gpu-a01", "gpu-a02", "gpu-a03"})
    scontrol.answer_when(
        {"show", "node", "-o", node},
        {.out = "NodeName=" + node + " Arch=x86_64 State=IDLE ThreadsPerCore=1\n"});
  return scontrol;
}

// The `scontrol update` calls, oldest first.
std::vector<std::vector<std::string>> updates(const FakeCommand& scontrol) {
  std::vector<std::vector<std::string>> out;
  for (auto& args : scontrol.call_args())
    if (!args.empty() && args[0] == "update") out.push_back(std::move(args));
  return out;
}

// The example's bundles as job `job_id`. from_kernel: gpu-a02's Xid line
// leaves its syslog for nodes/gpu-a02/kernel.
std::vector<Bundle> xid79_job(const std::string& job_id, long long stamp, bool from_kernel = true) {
  auto bundles = example_bundles("01-xid79-fallen-off-bus", "epilog", stamp);
  for (auto& b : bundles) {
    if (from_kernel && b.node == "gpu-a02") {
      std::string kernel;
      for (auto& [name, content] : b.files) {
        if (name != "nodes/gpu-a02/syslog") continue;
        std::string kept;
        std::size_t start = 0;
        while (start < content.size()) {
          std::size_t end = content.find('\n', start);
          end = end == std::string::npos ? content.size() : end + 1;
          std::string line = content.substr(start, end - start);
          (line.find("NVRM: Xid") != std::string::npos ? kernel : kept) += line;
          start = end;
        }
        content = kept;
      }
      EXPECT_FALSE(kernel.empty()) << "no Xid line in the example's syslog";
      b.files.emplace_back("nodes/gpu-a02/kernel", kernel);
    }
    b.job_id = job_id;
    b.bundle_id = b.node + "-" + job_id + "-" + std::to_string(stamp++);
    for (auto& [name, content] : b.files)
      if (name == "job.json") {
        json j = json::parse(content);
        j["job_id"] = job_id;
        content = j.dump(2);
      }
  }
  return bundles;
}

long long drain_rows(const AgentProcess& agent, const std::string& where) {
  return count_rows(agent.state() / "firstfault.db",
                    "SELECT count(*) FROM drain_actions WHERE " + where);
}

bool wait_for_rows(const AgentProcess& agent, const std::string& where) {
  for (int i = 0; i < 300; ++i) {
    if (drain_rows(agent, where) > 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST(AgentDrain, SecondGpuFaultOnANodeDrainsIt) {
  AgentProcess agent("drain:\n  enabled: true\n  min_blames: 2\n  max_per_hour: 1\n", ended_job());
  FakeCommand scontrol = install_recording_scontrol(agent.dir());
  auto client = agent.client();

  for (const auto& b : xid79_job("48213", 1797000000000000000LL))
    ASSERT_EQ(upload(client, b)->status, 201);
  ASSERT_TRUE(wait_for_rows(agent, "job_id = '48213'")) << agent.log();
  EXPECT_EQ(drain_rows(agent,
                       "job_id = '48213' AND node = 'gpu-a02' AND decision = 'declined' "
                       "AND reason = 'blamed 1 of 2 times in 14 days' AND blames = 1"),
            1)
      << agent.log();
  EXPECT_TRUE(updates(scontrol).empty());

  for (const auto& b : xid79_job("48214", 1797000000000001000LL))
    ASSERT_EQ(upload(client, b)->status, 201);
  ASSERT_TRUE(wait_for_rows(agent, "job_id = '48214'")) << agent.log();
  auto d = wait_for_diagnosis(client, "48214");
  ASSERT_TRUE(d);
  // The engine's provenance of the root cause (the Xid from the kernel log).
  EXPECT_EQ((*d)["root_causes"][0]["origin"], "kernel") << d->dump(1);
  EXPECT_EQ((*d)["root_causes"][0]["trusted"], true) << d->dump(1);
  std::string device = (*d)["root_causes"][0]["device"];
  std::string reason = "firstfault: gpu.fallen_off_bus " + device + " in jobs 48213,48214";
  EXPECT_EQ(drain_rows(agent,
                       "job_id = '48214' AND node = 'gpu-a02' AND decision = 'drained' "
                       "AND blames = 2 AND reason = '" +
                           reason + "'"),
            1)
      << agent.log();

  auto calls = updates(scontrol);
  ASSERT_EQ(calls.size(), 1u) << agent.log();
  EXPECT_EQ(calls[0], (std::vector<std::string>{"update", "NodeName=gpu-a02", "State=DRAIN",
                                                "Reason=" + reason}));
  EXPECT_NE(agent.log().find("drain policy: drained gpu-a02"), std::string::npos) << agent.log();
}

// The example as it is: the Xid only in syslog, twice. Untrusted evidence
// neither drains nor counts as a blame, and the decision says why.
TEST(AgentDrain, XidOnlyInSyslogIsNotDrained) {
  AgentProcess agent("drain:\n  enabled: true\n  min_blames: 2\n  max_per_hour: 1\n", ended_job());
  FakeCommand scontrol = install_recording_scontrol(agent.dir());
  auto client = agent.client();
  long long stamp = 1797000000000004000LL;
  for (const auto& id : {"48213", "48214"}) {
    for (const auto& b : xid79_job(id, stamp, false)) ASSERT_EQ(upload(client, b)->status, 201);
    stamp += 1000;
    ASSERT_TRUE(wait_for_rows(agent, std::string("job_id = '") + id + "'")) << agent.log();
    auto d = wait_for_diagnosis(client, id);
    ASSERT_TRUE(d);
    EXPECT_EQ((*d)["root_causes"][0]["origin"], "syslog") << d->dump(1);
    EXPECT_EQ((*d)["root_causes"][0]["trusted"], false) << d->dump(1);
    EXPECT_EQ(drain_rows(agent, std::string("job_id = '") + id +
                                    "' AND node = 'gpu-a02' AND decision = 'declined' AND "
                                    "reason = 'evidence not from a trusted source (syslog): not "
                                    "drained' AND blames = 0"),
              1)
        << agent.log();
  }
  EXPECT_TRUE(updates(scontrol).empty());
}

// Off by default: the same two jobs drain nothing and record nothing.
TEST(AgentDrain, OffByDefault) {
  AgentProcess agent("", ended_job());
  FakeCommand scontrol = install_recording_scontrol(agent.dir());
  auto client = agent.client();
  for (const auto& id : {"48213", "48214"}) {
    for (const auto& b :
         xid79_job(id, id == std::string("48213") ? 1797000000000002000LL : 1797000000000003000LL))
      ASSERT_EQ(upload(client, b)->status, 201);
    ASSERT_TRUE(wait_for_diagnosis(client, id));
  }
  for (int i = 0; i < 50; ++i) {
    if (count_rows(agent.state() / "firstfault.db",
                   "SELECT count(*) FROM diagnoses WHERE trigger = 'final'") == 2)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(drain_rows(agent, "1"), 0);
  EXPECT_TRUE(updates(scontrol).empty());
}

}  // namespace
