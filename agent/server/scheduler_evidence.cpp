#include "agent/server/scheduler_evidence.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <vector>

#include "agent/slurm/slurmctld_excerpt.h"
#include "incident/coverage.h"
#include "incident/slurm_text.h"
#include "incident/time/time.h"

namespace ff::agent {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool write_lines(const fs::path& file, const std::vector<std::string>& lines) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  for (const auto& l : lines) out << l << '\n';
  out.flush();
  return static_cast<bool>(out);
}

// A node Slurm holds out of service for a reason: the states a failure
// (or an administrator taking the node out under the job) leaves.
bool out_of_service(const std::string& state) {
  std::size_t start = 0;
  while (start <= state.size()) {
    std::size_t end = state.find('+', start);
    if (end == std::string::npos) end = state.size();
    std::string flag = state.substr(start, end - start);
    while (!flag.empty() && !std::isalpha(static_cast<unsigned char>(flag.back()))) flag.pop_back();
    if (flag == "DOWN" || flag == "DRAIN" || flag == "DRAINED" || flag == "DRAINING" ||
        flag == "FAIL" || flag == "FAILING" || flag == "NOT_RESPONDING")
      return true;
    start = end + 1;
  }
  // "DOWN*": the '*' marks a node that does not respond.
  return state.find('*') != std::string::npos;
}

}  // namespace

SchedulerEvidence gather_scheduler_evidence(const SchedulerEvidenceConfig& config,
                                            SlurmClient& slurm, const json& job,
                                            const fs::path& out_dir) {
  SchedulerEvidence result;
  std::error_code ec;
  fs::remove_all(out_dir, ec);
  fs::create_directories(out_dir / "cluster", ec);
  json coverage = json::array();
  auto cover = [&](const std::string& collector, CoverageStatus status, const std::string& detail,
                   std::optional<std::uint64_t> lines) {
    Coverage c;
    c.collector = collector;
    c.status = status;
    c.detail = detail;
    c.lines = lines;
    coverage.push_back(to_json(c));
  };

  std::vector<std::string> nodes;
  if (job.contains("nodes") && job["nodes"].is_array())
    for (const auto& n : job["nodes"])
      if (n.is_string()) nodes.push_back(n.get<std::string>());
  MaybeTime start = parse_iso8601_utc(job.value("start_time", std::string()));
  MaybeTime end = parse_iso8601_utc(job.value("end_time", std::string()));
  if (!end) end = start;
  if (!start || nodes.empty()) {
    result.problem = "job.json has no start time or no nodes: the scheduler was not asked";
    cover("slurmctld", CoverageStatus::kMissing, result.problem, std::nullopt);
  } else {
    TimeUs from = *start - config.before.count() * kUsPerSecond;
    TimeUs to = *end + config.after.count() * kUsPerSecond;

    // slurmctld's log.
    std::string log = config.slurmctld_log;
    if (log == "auto") {
      ClusterFacts facts = slurm.cluster_facts();
      log = facts.known ? facts.slurmctld_log_file : "";
      if (!facts.known) cover("slurmctld", CoverageStatus::kError, facts.error, std::nullopt);
    }
    if (log.empty() || log == "off") {
      if (config.slurmctld_log != "auto" || coverage.empty())
        cover("slurmctld", CoverageStatus::kMissing, "no slurmctld log configured", std::nullopt);
    } else {
      SlurmctldExcerptRequest request;
      request.log_path = log;
      request.from = from;
      request.to = to;
      request.job_id = job.value("job_id", std::string());
      request.nodes = nodes;
      request.timezone = job.value("timezone", std::string());
      SlurmctldExcerpt excerpt = excerpt_slurmctld_log(request);
      if (!excerpt.lines.empty() &&
          !write_lines(out_dir / "cluster" / "slurmctld.log", excerpt.lines))
        cover("slurmctld", CoverageStatus::kError, "cannot write the excerpt", std::nullopt);
      else
        cover("slurmctld", excerpt.status, excerpt.detail, excerpt.lines.size());
      result.slurmctld_lines = excerpt.lines.size();
    }

    // Each node's state and reason as Slurm holds them now, when the reason
    // was set inside the window. The agent's own drain reasons are not
    // evidence of anything but an earlier diagnosis.
    if (config.node_states) {
      std::vector<std::string> lines;
      std::size_t asked = 0, known = 0;
      for (const NodeStateLookup& n : slurm.node_states(nodes)) {
        ++asked;
        if (!n.known) continue;
        ++known;
        if (!out_of_service(n.state) || n.reason.empty() || n.reason_time == 0) continue;
        // Set while the attempt ran (slurmctld kills the job as it sets the
        // node DOWN): a node taken out before it started or after it ended
        // says nothing of why it ended.
        TimeUs at = n.reason_time * kUsPerSecond;
        if (at < *start || at > *end + 5 * kUsPerSecond) continue;
        if (n.reason.rfind("firstfault:", 0) == 0) continue;
        lines.push_back(format_time_seconds(n.reason_time) + " node " + n.node + " state " +
                        slurm_safe_text(n.state, 64) + " reason " + slurm_safe_text(n.reason, 256));
      }
      std::sort(lines.begin(), lines.end());
      if (!lines.empty() && !write_lines(out_dir / "cluster" / "slurm_nodes.log", lines)) {
        cover("slurm_nodes", CoverageStatus::kError, "cannot write the node states", std::nullopt);
      } else {
        CoverageStatus status = known == asked
                                    ? (lines.empty() ? CoverageStatus::kEmpty : CoverageStatus::kOk)
                                : known == 0 ? CoverageStatus::kError
                                             : CoverageStatus::kPartial;
        cover("slurm_nodes", status,
              "scontrol show node: " + std::to_string(known) + " of " + std::to_string(asked) +
                  " nodes shown",
              lines.size());
      }
      result.node_lines = lines.size();
    }
  }
  std::ofstream(out_dir / "coverage.json", std::ios::binary | std::ios::trunc)
      << coverage.dump() << '\n';
  return result;
}

}  // namespace ff::agent
