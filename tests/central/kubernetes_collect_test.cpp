// The Kubernetes/Kueue connector against a fake API server answering over
// real HTTP with hand-written responses in the documented API shapes
// (k8s_fixtures/): what job.json, cluster/kubernetes.log and the pod logs
// hold, and what coverage says when the API refuses or is not there.
#include <gtest/gtest.h>

#include "central/kubernetes/k8s_collect.h"
#include "tests/central/kubernetes_test_support.h"

namespace ff::sources::k8s {
namespace {

using namespace testing;
using nlohmann::json;

KubeClient client_for(const FakeApiServer& s, const std::string& token = "tok") {
  KubeAccess a;
  a.server = s.url();
  a.http.bearer_token = token;
  a.http.total_timeout_s = 10;
  a.cluster_name = "test-cluster";
  return KubeClient(a);
}

CollectOptions options(Target::Kind kind, const std::string& spec, const fs::path& out) {
  CollectOptions o;
  o.target = parse_target(kind, spec);
  o.out = out;
  o.logs.limit_bytes = 1 << 20;
  o.logs.tail_lines = 5000;
  return o;
}

json job_json(const fs::path& dir) {
  return json::parse(read_file(dir / "job.json"));
}

const json* coverage_of(const json& j, const std::string& collector, const std::string& node = "") {
  for (const auto& c : j["coverage"])
    if (c["collector"] == collector && c.value("node", "") == node) return &c;
  return nullptr;
}

std::vector<std::string> lines_of(const fs::path& f) {
  std::vector<std::string> out;
  std::stringstream ss(read_file(f));
  for (std::string l; std::getline(ss, l);) out.push_back(l);
  return out;
}

std::size_t count_containing(const std::vector<std::string>& lines, const std::string& part) {
  std::size_t n = 0;
  for (const auto& l : lines) n += l.find(part) != std::string::npos;
  return n;
}

TEST(KubernetesCollect, OomKilledPodOfAKueueWorkload) {
  FakeApiServer server;
  server.require_token("tok");
  serve(server, oom_scenario());
  ScratchDirectory out{"k8s"};
  CollectResult r = collect_incident(
      client_for(server), options(Target::Kind::kWorkload, "train/job-llama-7b-3f2a1", out.path()));
  ASSERT_TRUE(r.target_found) << r.problem;

  json j = job_json(out.path());
  EXPECT_EQ(j["schema"], "firstfault.incident/v1");
  EXPECT_EQ(j["cluster"], "test-cluster");
  EXPECT_EQ(j["job_id"], "train/llama-7b/0b6e5a57-3c1e-4f5d-9a3e-6d1f2c4b7a90");
  EXPECT_EQ(j["attempt"], 0);
  EXPECT_EQ(j["state"], "OUT_OF_MEMORY");
  EXPECT_EQ(j["exit_code"], "137:0");  // the first failing container: the OOM kill
  EXPECT_EQ(j["start_time"], "2026-11-02T10:00:01Z");
  EXPECT_EQ(j["end_time"], "2026-11-02T10:51:10Z");
  EXPECT_EQ(j["nodes"], json({"gpu-a", "gpu-b", "gpu-c", "gpu-d"}));
  ASSERT_EQ(j["ranks"].size(), 4u);
  EXPECT_EQ(j["ranks"][1]["rank"], 1);
  EXPECT_EQ(j["ranks"][1]["node"], "gpu-b");
  EXPECT_EQ(j["ranks"][1]["pod"], "llama-7b-1-x7k1q");
  EXPECT_EQ(j["kubernetes"]["workload"]["cluster_queue"], "gpu-cluster-queue");
  for (const char* part : {"kubernetes:workload", "kubernetes:job", "kubernetes:pods",
                           "kubernetes:events", "kubernetes:nodes", "kubernetes:logs"}) {
    const json* c = coverage_of(j, part);
    ASSERT_NE(c, nullptr) << part;
    EXPECT_EQ((*c)["status"], "ok") << part << ": " << (*c)["detail"];
  }

  auto lines = lines_of(out / "cluster/kubernetes.log");
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(std::is_sorted(lines.begin(), lines.end(), [](const auto& a, const auto& b) {
    return a.substr(0, 20) < b.substr(0, 20);  // "YYYY-MM-DDTHH:MM:SSZ" sorts as text
  }));
  EXPECT_EQ(
      count_containing(lines,
                       "2026-11-02T10:41:07Z kubernetes: container terminated "
                       "pod=train/llama-7b-1-x7k1q container=pytorch node=gpu-b "
                       "reason=OOMKilled exit_code=137 signal=0 restarts=1 instance=previous"),
      1u);
  EXPECT_EQ(count_containing(lines, "reason=Error exit_code=1 "), 4u);
  EXPECT_EQ(count_containing(lines,
                             "workload condition workload=train/job-llama-7b-3f2a1 "
                             "type=Finished status=True reason=Failed"),
            1u);
  EXPECT_EQ(count_containing(lines, "job condition job=train/job/llama-7b type=Failed"), 1u);
  EXPECT_EQ(
      count_containing(
          lines,
          "event type=Normal reason=Started object=Pod/train/llama-7b-1-x7k1q node=gpu-b count=2"),
      1u);
  EXPECT_EQ(count_containing(lines, "other-0"), 0u) << "another job's event leaked in";

  // Pod logs: each container, the restarted one's previous instance too,
  // asked for with timestamps and bounds; under the node the pod ran on.
  EXPECT_TRUE(fs::exists(out / "nodes/gpu-a/app.llama-7b-0-x7k0q.pytorch.log"));
  EXPECT_TRUE(fs::exists(out / "nodes/gpu-b/app.llama-7b-1-x7k1q.pytorch.log"));
  EXPECT_EQ(read_file(out / "nodes/gpu-b/app.llama-7b-1-x7k1q.pytorch.previous.log"),
            fixture("oom/logs/llama-7b-1-x7k1q.pytorch.previous.log"));
  EXPECT_EQ(r.log_files, 5u);
  auto log_requests = server.seen("/log");
  ASSERT_EQ(log_requests.size(), 5u);
  std::size_t previous = 0;
  for (const auto& q : log_requests) {
    EXPECT_TRUE(q.has("timestamps", "true"));
    EXPECT_TRUE(q.has("limitBytes", "1048576"));
    EXPECT_TRUE(q.has("tailLines", "5000"));
    EXPECT_TRUE(q.has("container", "pytorch"));
    if (q.has("previous", "true")) {
      ++previous;
      EXPECT_EQ(q.path, "/api/v1/namespaces/train/pods/llama-7b-1-x7k1q/log");
    }
  }
  EXPECT_EQ(previous, 1u);
}

TEST(KubernetesCollect, PreemptedWorkloadIsPreemptedState) {
  FakeApiServer server;
  serve(server, preempted_scenario());
  ScratchDirectory out{"k8s"};
  CollectResult r = collect_incident(
      client_for(server), options(Target::Kind::kWorkload, "research/job-sweep-9c1d0", out.path()));
  ASSERT_TRUE(r.target_found) << r.problem;
  json j = job_json(out.path());
  EXPECT_EQ(j["state"], "PREEMPTED");
  EXPECT_EQ(j["end_time"], "2026-11-03T12:30:05Z");
  auto lines = lines_of(out / "cluster/kubernetes.log");
  EXPECT_EQ(count_containing(lines,
                             "workload condition workload=research/job-sweep-9c1d0 "
                             "type=Evicted status=True reason=Preempted"),
            1u);
  EXPECT_EQ(count_containing(lines, "type=Preempted status=True reason=InClusterQueue"), 1u);
  EXPECT_EQ(count_containing(lines, "pod deleted pod=research/sweep-0-m2p0z node=gpu-e"), 1u);
}

TEST(KubernetesCollect, JobModeFindsItsKueueWorkloadByJobUid) {
  FakeApiServer server;
  serve(server, preempted_scenario());
  json list = {{"kind", "WorkloadList"},
               {"apiVersion", "kueue.x-k8s.io/v1beta1"},
               {"metadata", json::object()},
               {"items", json::array({json::parse(fixture("preempted/workload.json"))})}};
  server.route("/apis/kueue.x-k8s.io/v1beta1/namespaces/research/workloads", list.dump(), 200,
               {{"labelSelector", "kueue.x-k8s.io/job-uid=c4d5e6f7-0a1b-4c2d-8e3f-9a0b1c2d3e4f"}});
  ScratchDirectory out{"k8s"};
  CollectResult r = collect_incident(client_for(server),
                                     options(Target::Kind::kJob, "research/sweep", out.path()));
  ASSERT_TRUE(r.target_found) << r.problem;
  json j = job_json(out.path());
  EXPECT_EQ(j["job_id"], "research/sweep/c4d5e6f7-0a1b-4c2d-8e3f-9a0b1c2d3e4f");
  EXPECT_EQ(j["state"], "PREEMPTED");
  EXPECT_EQ(j["kubernetes"]["workload"]["name"], "job-sweep-9c1d0");
}

TEST(KubernetesCollect, EvictedPodBySelector) {
  FakeApiServer server;
  serve(server, evicted_scenario());
  ScratchDirectory out{"k8s"};
  CollectResult r = collect_incident(client_for(server),
                                     options(Target::Kind::kPods, "lab/app=bench", out.path()));
  ASSERT_TRUE(r.target_found) << r.problem;
  json j = job_json(out.path());
  EXPECT_EQ(j["job_id"], "lab/app=bench");
  EXPECT_EQ(j["state"], "PREEMPTED");  // the spec's state for an evicted job
  EXPECT_FALSE(j.contains("ranks"));   // no pod index: no rank invented
  auto lines = lines_of(out / "cluster/kubernetes.log");
  EXPECT_EQ(count_containing(lines,
                             "2026-11-04T09:12:00Z kubernetes: pod evicted "
                             "pod=lab/bench-7d9f-0 node=cpu-x reason=Evicted"),
            1u);
  EXPECT_EQ(count_containing(lines,
                             "pod disruption pod=lab/bench-7d9f-0 node=cpu-x "
                             "reason=TerminationByKubelet"),
            1u);
  EXPECT_EQ(count_containing(lines, "node condition node=cpu-x type=DiskPressure status=True"), 1u);
  EXPECT_EQ(
      count_containing(lines, "event type=Warning reason=EvictionThresholdMet object=Node/cpu-x"),
      1u);
  EXPECT_EQ(count_containing(lines, "node=cpu-y type="), 0u) << "a healthy node's conditions";
}

TEST(KubernetesCollect, RequeuedWorkloadKeepsOnlyThisAttemptsPods) {
  FakeApiServer server;
  Scenario sc = oom_scenario();
  serve(server, sc);
  json wl = json::parse(fixture("oom/workload.json"));
  wl["status"]["requeueState"] = {{"count", 2}};
  for (auto& c : wl["status"]["conditions"])
    if (c["type"] == "Admitted") c["lastTransitionTime"] = "2026-11-02T10:00:01Z";
  server.route("/apis/kueue.x-k8s.io/v1beta1/namespaces/train/workloads/requeued", wl.dump());
  json pods = json::parse(fixture("oom/pods.json"));
  pods["items"][0]["metadata"]["creationTimestamp"] =
      "2026-11-02T09:40:00Z";  // the earlier attempt
  server.route("/api/v1/namespaces/train/pods", pods.dump(), 200,
               {{"labelSelector", sc.job_selector}, {"limit", "500"}});
  ScratchDirectory out{"k8s"};
  CollectResult r = collect_incident(
      client_for(server), options(Target::Kind::kWorkload, "train/requeued", out.path()));
  json j = job_json(out.path());
  EXPECT_EQ(j["attempt"], 2);
  EXPECT_EQ(j["nodes"], json({"gpu-b", "gpu-c", "gpu-d"}));
  EXPECT_EQ(j["kubernetes"]["earlier_attempt_pods"], json({"llama-7b-0-x7k0q"}));
  EXPECT_NE((*coverage_of(j, "kubernetes:pods"))["detail"].get<std::string>().find(
                "1 pod(s) of an earlier attempt left out"),
            std::string::npos);
}

TEST(KubernetesCollect, PodListIsPagedWithContinue) {
  FakeApiServer server;
  Scenario sc = evicted_scenario();
  serve(server, sc);
  json all = json::parse(fixture("evicted/pods.json"));
  json first = all, second = all;
  first["items"] = json::array({all["items"][0]});
  first["metadata"]["continue"] = "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ";
  second["items"] = json::array({all["items"][1]});
  server.route("/api/v1/namespaces/lab/pods", first.dump(), 200,
               {{"labelSelector", "app=bench"}, {"limit", "500"}});
  server.route("/api/v1/namespaces/lab/pods", second.dump(), 200,
               {{"labelSelector", "app=bench"},
                {"limit", "500"},
                {"continue", "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ"}});
  ScratchDirectory out{"k8s"};
  CollectResult r = collect_incident(client_for(server),
                                     options(Target::Kind::kPods, "lab/app=bench", out.path()));
  EXPECT_EQ(r.pods, 2u);
  std::size_t lists = 0;
  for (const auto& q : server.seen("/api/v1/namespaces/lab/pods"))
    lists += q.path == "/api/v1/namespaces/lab/pods";
  EXPECT_EQ(lists, 2u);
}

TEST(KubernetesCollect, UnauthorisedTokenIsReportedNotHealth) {
  FakeApiServer server;
  server.require_token("the-right-token");
  serve(server, oom_scenario());
  ScratchDirectory out{"k8s"};
  CollectResult r =
      collect_incident(client_for(server, "expired-token"),
                       options(Target::Kind::kWorkload, "train/job-llama-7b-3f2a1", out.path()));
  EXPECT_FALSE(r.target_found);
  EXPECT_NE(r.problem.find("HTTP 401 Unauthorized"), std::string::npos) << r.problem;
  json j = job_json(out.path());  // written anyway: the coverage says why it is empty
  const json* c = coverage_of(j, "kubernetes:workload");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "unauthorised");
  EXPECT_FALSE(j.contains("state"));
  EXPECT_EQ(j["nodes"], json::array());
}

TEST(KubernetesCollect, ForbiddenWorkloadNamesTheMissingPermission) {
  FakeApiServer server;
  server.route("/apis/kueue.x-k8s.io/v1beta1/namespaces/train/workloads/job-llama-7b-3f2a1",
               fixture("errors/status-403-workload.json"), 403);
  ScratchDirectory out{"k8s"};
  CollectResult r = collect_incident(
      client_for(server), options(Target::Kind::kWorkload, "train/job-llama-7b-3f2a1", out.path()));
  EXPECT_FALSE(r.target_found);
  json j = job_json(out.path());
  const json* c = coverage_of(j, "kubernetes:workload");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "unauthorised");
  EXPECT_NE((*c)["detail"].get<std::string>().find("HTTP 403 Forbidden: workloads.kueue.x-k8s.io "
                                                   "\"job-llama-7b-3f2a1\" is forbidden"),
            std::string::npos)
      << (*c)["detail"];
}

TEST(KubernetesCollect, ForbiddenPodLogsLeaveTheRestUsable) {
  FakeApiServer server;
  Scenario sc = oom_scenario();
  serve(server, sc);
  for (const auto& [pod, c] : sc.logs)
    server.override_path("/api/v1/namespaces/train/pods/" + pod + "/log",
                         fixture("errors/status-403-log.json"), 403);
  ScratchDirectory out{"k8s"};
  CollectResult r = collect_incident(
      client_for(server), options(Target::Kind::kWorkload, "train/job-llama-7b-3f2a1", out.path()));
  ASSERT_TRUE(r.target_found);
  json j = job_json(out.path());
  EXPECT_EQ(j["state"], "OUT_OF_MEMORY");
  EXPECT_EQ((*coverage_of(j, "kubernetes:logs"))["status"], "unauthorised");
  for (const auto& n : sc.nodes) {
    const json* app = coverage_of(j, "app", n);
    ASSERT_NE(app, nullptr) << n;
    EXPECT_EQ((*app)["status"], "unauthorised");
    EXPECT_NE((*app)["detail"].get<std::string>().find("pods/log"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(out / "nodes"));
}

TEST(KubernetesCollect, ForbiddenNodesArePartOfCoverage) {
  FakeApiServer server;
  Scenario sc = oom_scenario();
  sc.nodes.clear();  // no node route: serve them as 403 instead
  serve(server, sc);
  for (const char* n : {"gpu-a", "gpu-b", "gpu-c", "gpu-d"})
    server.route(std::string("/api/v1/nodes/") + n, fixture("errors/status-403-nodes.json"), 403);
  server.route("/api/v1/namespaces/default/events", fixture("errors/status-403-nodes.json"), 403,
               {{"fieldSelector", "involvedObject.kind=Node"}, {"limit", "500"}});
  ScratchDirectory out{"k8s"};
  CollectOptions o = options(Target::Kind::kWorkload, "train/job-llama-7b-3f2a1", out.path());
  o.pod_logs = false;
  collect_incident(client_for(server), o);
  json j = job_json(out.path());
  const json* c = coverage_of(j, "kubernetes:nodes");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "unauthorised") << (*c)["detail"];
  EXPECT_NE((*c)["detail"].get<std::string>().find("cannot get resource \"nodes\""),
            std::string::npos)
      << (*c)["detail"];
  EXPECT_EQ((*coverage_of(j, "kubernetes:logs"))["status"], "empty");
}

TEST(KubernetesCollect, UnreachableServer) {
  int port;
  {
    FakeApiServer closed;  // a port that was just free
    port = std::stoi(closed.url().substr(closed.url().rfind(':') + 1));
  }
  KubeAccess a;
  a.server = "http://127.0.0.1:" + std::to_string(port);
  a.http.connect_timeout_s = 2;
  ScratchDirectory out{"k8s"};
  CollectResult r =
      collect_incident(KubeClient(a), options(Target::Kind::kJob, "train/llama-7b", out.path()));
  EXPECT_FALSE(r.target_found);
  json j = job_json(out.path());
  const json* c = coverage_of(j, "kubernetes:job");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "unreachable");
  EXPECT_NE((*c)["detail"].get<std::string>().find("no reply from " + a.server), std::string::npos);
  EXPECT_EQ(j["job_id"], "train/llama-7b");
}

TEST(KubernetesCollect, EmptyPodList) {
  FakeApiServer server;
  server.route("/api/v1/namespaces/lab/pods", fixture("errors/podlist-empty.json"), 200,
               {{"labelSelector", "app=gone"}});
  server.route("/api/v1/namespaces/lab/events", R"({"kind":"EventList","items":[]})");
  ScratchDirectory out{"k8s"};
  CollectResult r = collect_incident(client_for(server),
                                     options(Target::Kind::kPods, "lab/app=gone", out.path()));
  EXPECT_FALSE(r.target_found);
  EXPECT_NE(r.problem.find("no pods match app=gone"), std::string::npos) << r.problem;
  json j = job_json(out.path());
  EXPECT_EQ((*coverage_of(j, "kubernetes:pods"))["status"], "empty");
  EXPECT_FALSE(j.contains("state"));
}

TEST(KubernetesCollect, TargetsAreCheckedBeforeTheyReachAUrl) {
  EXPECT_THROW(parse_target(Target::Kind::kWorkload, "no-namespace"), std::invalid_argument);
  EXPECT_THROW(parse_target(Target::Kind::kWorkload, "train/../../secrets"), std::invalid_argument);
  EXPECT_THROW(parse_target(Target::Kind::kJob, "train/x", "cronjob"), std::invalid_argument);
  Target t = parse_target(Target::Kind::kPods, "train/batch.kubernetes.io/job-name=x");
  EXPECT_EQ(t.ns, "train");
  EXPECT_EQ(t.name, "batch.kubernetes.io/job-name=x");
}

}  // namespace
}  // namespace ff::sources::k8s
