// End to end: collect an incident from the fake API server (recorded-shape
// responses over real HTTP, no cluster), then `firstfault analyze` it with
// the built binary and the built-in rules, and check the verdict.
#include <gtest/gtest.h>

#include "central/kubernetes/k8s_collect.h"
#include "tests/central/kubernetes_test_support.h"

namespace ff::sources::k8s {
namespace {

using namespace testing;
using nlohmann::json;

json collect_and_analyze(FakeApiServer& server, Target target, ScratchDirectory& out) {
  KubeAccess a;
  a.server = server.url();
  a.cluster_name = "test-cluster";
  CollectOptions o;
  o.target = std::move(target);
  o.out = out.path();
  CollectResult r = collect_incident(KubeClient(a), o);
  EXPECT_TRUE(r.target_found) << r.problem;
  std::string bin = firstfault_binary();
  EXPECT_TRUE(fs::exists(bin)) << bin << " (build the firstfault target, or set FF_BINARY)";
  ProcessResult p = run_process({bin, "analyze", out.path().string(), "--format", "json"},
                                {std::nullopt, std::chrono::milliseconds(60000)});
  EXPECT_TRUE(p.ok()) << p.describe() << "\n" << p.err;
  try {
    return json::parse(p.out);
  } catch (const json::exception& e) {
    ADD_FAILURE() << e.what() << "\n" << p.out;
    return json::object();
  }
}

std::string root_node(const json& d) {
  if (!d.contains("root_causes") || d["root_causes"].empty()) return "";
  return d["root_causes"][0].value("node", "");
}

TEST(KubernetesEndToEnd, OomKilledPodIsTheRootCauseNotTheNcclTimeouts) {
  FakeApiServer server;
  serve(server, oom_scenario());
  ScratchDirectory out{"k8s"};
  json d = collect_and_analyze(
      server, parse_target(Target::Kind::kWorkload, "train/job-llama-7b-3f2a1"), out);
  EXPECT_EQ(d["verdict"], "attributed") << d.dump(2);
  EXPECT_EQ(d["domain"], "host");
  EXPECT_EQ(d["sub_domain"], "host.cgroup_oom");
  EXPECT_EQ(root_node(d), "gpu-b");
  EXPECT_EQ(d["recommended_action"], "fix_application");
  // The other ranks' NCCL watchdog timeouts are there, and demoted.
  bool saw_timeout = false;
  for (const auto& s : d["symptoms"]) {
    if (s["kind"] == "nccl.timeout") {
      saw_timeout = true;
      EXPECT_NE(s["node"], "gpu-b");
    }
    EXPECT_EQ(s["status"], "demoted") << s.dump();
  }
  EXPECT_TRUE(saw_timeout) << d.dump(2);
}

TEST(KubernetesEndToEnd, PreemptedWorkloadIsTheScheduler) {
  FakeApiServer server;
  serve(server, preempted_scenario());
  ScratchDirectory out{"k8s"};
  json d = collect_and_analyze(
      server, parse_target(Target::Kind::kWorkload, "research/job-sweep-9c1d0"), out);
  EXPECT_EQ(d["verdict"], "attributed") << d.dump(2);
  EXPECT_EQ(d["domain"], "scheduler");
  EXPECT_EQ(d["sub_domain"], "scheduler.preempted");
  EXPECT_EQ(d["recommended_action"], "restart_job");
}

TEST(KubernetesEndToEnd, KubeletEvictionNamesTheNode) {
  FakeApiServer server;
  serve(server, evicted_scenario());
  ScratchDirectory out{"k8s"};
  json d = collect_and_analyze(server, parse_target(Target::Kind::kPods, "lab/app=bench"), out);
  EXPECT_EQ(d["verdict"], "attributed") << d.dump(2);
  EXPECT_EQ(d["sub_domain"], "host.node_pressure_eviction");
  EXPECT_EQ(root_node(d), "cpu-x");
}

// Pod logs forbidden: the OOM is still found from the API objects, and the
// diagnosis lists the job's output as missing on every node, not as quiet.
TEST(KubernetesEndToEnd, ForbiddenPodLogsAreMissingNotHealthy) {
  FakeApiServer server;
  Scenario sc = oom_scenario();
  serve(server, sc);
  for (const auto& [pod, c] : sc.logs)
    server.override_path("/api/v1/namespaces/train/pods/" + pod + "/log",
                         fixture("errors/status-403-log.json"), 403);
  ScratchDirectory out{"k8s"};
  json d = collect_and_analyze(
      server, parse_target(Target::Kind::kWorkload, "train/job-llama-7b-3f2a1"), out);
  EXPECT_EQ(d["sub_domain"], "host.cgroup_oom") << d.dump(2);
  EXPECT_EQ(root_node(d), "gpu-b");
  std::size_t missing = 0;
  for (const auto& c : d["coverage"])
    if (c["source"] == "app" && c["status"] != "ok") {
      ++missing;
      EXPECT_NE(c["detail"].get<std::string>().find("kubernetes pod log"), std::string::npos);
    }
  EXPECT_EQ(missing, 4u) << d["coverage"].dump(2);
}

}  // namespace
}  // namespace ff::sources::k8s
