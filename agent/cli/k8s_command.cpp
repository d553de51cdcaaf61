// firstfault k8s collect (--workload NS/NAME | --job NS/NAME | --pods NS/SELECTOR)
//                        [--kubeconfig F] [--context C] [--in-cluster] --out DIR
#include "agent/cli/k8s_command.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "agent/cli/commands.h"
#include "central/kubernetes/k8s_collect.h"  // ff_central, linked through ff_agent

namespace ff::cli {

namespace {

struct K8sOptions {
  std::string workload, job, pods, job_kind = "job";
  std::string kubeconfig, context, out, cluster, since;
  bool in_cluster = false, no_logs = false;
  std::size_t log_limit_bytes = 16u << 20;
  long tail_lines = 100000;
  std::size_t max_pods = 5000;
};

int run_collect(const K8sOptions& o) {
  namespace k8s = ff::sources::k8s;
  k8s::Target target;
  try {
    if (!o.workload.empty())
      target = k8s::parse_target(k8s::Target::Kind::kWorkload, o.workload);
    else if (!o.job.empty())
      target = k8s::parse_target(k8s::Target::Kind::kJob, o.job, o.job_kind);
    else
      target = k8s::parse_target(k8s::Target::Kind::kPods, o.pods);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "firstfault: %s\n", e.what());
    return kExitUsage;
  }
  std::error_code ec;
  if (std::filesystem::exists(o.out, ec) && !std::filesystem::is_empty(o.out, ec)) {
    // Mixing a new collection with an older incident would mix two attempts.
    std::fprintf(stderr, "firstfault: %s exists and is not empty\n", o.out.c_str());
    return kExitUsage;
  }
  k8s::KubeAccess access;
  try {
    access = k8s::resolve_access(
        {o.kubeconfig, o.context, o.in_cluster, "/var/run/secrets/kubernetes.io/serviceaccount"});
  } catch (const k8s::KubeConfigError& e) {
    std::fprintf(stderr, "firstfault: %s\n", e.what());
    return kExitUnusableInput;
  }
  k8s::CollectOptions co;
  co.target = target;
  co.out = o.out;
  co.cluster = o.cluster;
  co.pod_logs = !o.no_logs;
  co.logs.limit_bytes = o.log_limit_bytes;
  co.logs.tail_lines = o.tail_lines;
  co.logs.since_time = o.since;
  co.max_pods = o.max_pods;
  k8s::KubeClient client(access);
  k8s::CollectResult r = k8s::collect_incident(client, co);
  std::printf(
      "%s: job %s attempt %d, state %s, %zu pod(s) on %zu node(s), %zu line(s) in "
      "cluster/kubernetes.log, %zu pod log(s)\n",
      o.out.c_str(), r.job_id.c_str(), r.attempt,
      !r.target_found   ? "not read"
      : r.state.empty() ? "unknown (still running?)"
                        : r.state.c_str(),
      r.pods, r.nodes.size(), r.log_lines, r.log_files);
  for (const auto& c : r.coverage)
    std::printf("  %-20s %-12s %s%s\n", c.collector.c_str(), c.status_text().c_str(),
                c.node.empty() ? "" : (c.node + ": ").c_str(), c.detail.c_str());
  if (!r.target_found) {
    std::fprintf(stderr, "firstfault: %s\n", r.problem.c_str());
    return kExitUnusableInput;
  }
  return kExitDiagnosed;
}

}  // namespace

void add_k8s_command(CLI::App& app, int& exit_code) {
  CLI::App* k8s = app.add_subcommand("k8s", "Kubernetes and Kueue: collect an incident");
  k8s->require_subcommand(1);
  auto o = std::make_shared<K8sOptions>();
  CLI::App* sub = k8s->add_subcommand(
      "collect", "read one attempt of a workload, job or pods into an incident directory");
  auto* wl = sub->add_option("--workload", o->workload, "Kueue workload NAMESPACE/NAME");
  auto* job = sub->add_option("--job", o->job, "job NAMESPACE/NAME (see --job-kind)");
  auto* pods = sub->add_option("--pods", o->pods, "pods NAMESPACE/LABEL-SELECTOR");
  wl->excludes(job)->excludes(pods);
  job->excludes(pods);
  sub->add_option("--job-kind", o->job_kind,
                  "kind of --job: job (default), jobset, pytorchjob, mpijob")
      ->check(CLI::IsMember({"job", "jobset", "pytorchjob", "mpijob"}));
  sub->add_option("--kubeconfig", o->kubeconfig,
                  "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)");
  sub->add_option("--context", o->context, "kubeconfig context (default: current-context)");
  sub->add_flag("--in-cluster", o->in_cluster, "use the pod's service account");
  sub->add_option("--out", o->out, "incident directory to write (new or empty)")->required();
  sub->add_option("--cluster", o->cluster, "cluster name for job.json (default: kubeconfig's)");
  sub->add_flag("--no-logs", o->no_logs, "do not fetch pod logs");
  sub->add_option("--log-limit-bytes", o->log_limit_bytes, "limitBytes per container log");
  sub->add_option("--tail-lines", o->tail_lines, "tailLines per container log (0: all)");
  sub->add_option("--since", o->since, "sinceTime for pod logs (RFC 3339)");
  sub->add_option("--max-pods", o->max_pods, "stop listing pods after this many");
  sub->callback([o, &exit_code]() {
    if (o->workload.empty() && o->job.empty() && o->pods.empty()) {
      std::fprintf(stderr, "firstfault: one of --workload, --job or --pods is required\n");
      exit_code = kExitUsage;
      return;
    }
    exit_code = run_collect(*o);
  });
}

}  // namespace ff::cli
