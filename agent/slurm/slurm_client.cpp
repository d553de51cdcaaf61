#include "agent/slurm/slurm_client.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "agent/slurm/comment_text.h"
#include "common/node_name.h"
#include "common/run_process.h"

#include <map>

namespace ff::agent {

namespace {

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 200 ? line.substr(0, 200) : line;
}

std::string failure(const ProcessResult& r) {
  std::string why = first_line(!r.err.empty() ? r.err : r.out);
  return "failed: " + r.describe() + (why.empty() ? "" : ": " + why);
}

bool sacctmgr_disabled(const std::string& setting) {
  return setting.empty() || setting == "off" || setting == "none" || setting == "false" ||
         setting == "no";
}

}  // namespace

SlurmClient::SlurmClient(SlurmPaths paths) : paths_(std::move(paths)) {}

ProcessOptions SlurmClient::bounded(int timeout_ms) const {
  ProcessOptions o;
  o.timeout = std::chrono::seconds(paths_.timeout_s);
  if (timeout_ms > 0) o.timeout = std::min(o.timeout, std::chrono::milliseconds(timeout_ms));
  o.kill_grace = std::chrono::milliseconds(500);
  o.max_output_bytes = 4 << 20;
  return o;
}

JobLookup SlurmClient::show_job(const std::string& job_id, int timeout_ms) const {
  // Exit status 3: slurmctld knows no such job (any more).
  constexpr int kNotFound = 3;
  JobLookup lookup;
  ProcessResult r = run_process({paths_.slurm_job_helper, job_id}, bounded(timeout_ms));
  if (r.started && !r.timed_out && r.signal == 0 && r.exit_code == kNotFound) {
    lookup.status = JobLookup::Status::not_found;
    return lookup;
  }
  if (!r.ok()) {
    lookup.error = failure(r);
    return lookup;
  }
  std::string problem;
  lookup.job = parse_slurm_job_json(r.out, problem);
  if (!lookup.job) {
    lookup.error = "unusable answer of " + paths_.slurm_job_helper + ": " + problem;
    return lookup;
  }
  lookup.status = JobLookup::Status::found;
  return lookup;
}

ClusterFacts SlurmClient::cluster_facts() {
  std::lock_guard<std::mutex> lock(facts_mutex_);
  if (facts_) return *facts_;
  auto now = std::chrono::steady_clock::now();
  if (failed_facts_ && now - facts_failed_at_ < std::chrono::minutes(1)) return *failed_facts_;
  ClusterFacts facts;
  ProcessResult r = run_process({paths_.scontrol, "show", "config"}, bounded(0));
  if (!r.ok()) {
    facts.error = "scontrol show config " + failure(r);
    failed_facts_ = facts;
    facts_failed_at_ = now;
    return facts;
  }
  auto config = parse_show_config(r.out);
  facts.known = true;
  std::string user = config["SlurmUser"];
  auto paren = user.find('(');
  if (paren != std::string::npos) {
    try {
      facts.slurm_user_uid = std::stoi(user.substr(paren + 1));
    } catch (const std::exception&) {
      facts.slurm_user_uid = -1;
    }
  }
  std::string storage = config["AccountingStorageType"];
  facts.accounting = !storage.empty() && storage != "accounting_storage/none";
  std::string log = config["SlurmctldLogFile"];
  if (!log.empty() && log.front() == '/') facts.slurmctld_log_file = log;
  facts_ = facts;
  return facts;
}

std::string SlurmClient::set_comment(const std::string& job_id, const std::string& summary,
                                     int timeout_ms) const {
  std::string text = comment_text(summary);
  ProcessResult r =
      run_process({paths_.scontrol, "update", "JobId=" + job_id, paths_.comment_field + "=" + text},
                  bounded(timeout_ms));
  return r.ok() ? "written" : failure(r);
}

bool NodeStateLookup::unavailable() const {
  // Slurm joins flags with '+' and may mark a base state with a symbol
  // ("DOWN*": not responding): "IDLE+DRAIN", "MIXED+DRAIN" (draining),
  // "DOWN*+DRAIN", "DRAINED".
  std::size_t start = 0;
  while (start <= state.size()) {
    std::size_t end = state.find('+', start);
    if (end == std::string::npos) end = state.size();
    std::string flag = state.substr(start, end - start);
    while (!flag.empty() && !std::isalpha(static_cast<unsigned char>(flag.back()))) flag.pop_back();
    if (flag == "DRAIN" || flag == "DRAINED" || flag == "DRAINING" || flag == "DOWN") return true;
    start = end + 1;
  }
  return false;
}

NodeStateLookup SlurmClient::node_state(const std::string& node) const {
  NodeStateLookup lookup;
  ProcessResult r = run_process({paths_.scontrol, "show", "node", "-o", node}, bounded(0));
  if (!r.ok()) {
    lookup.error = failure(r);
    return lookup;
  }
  auto fields = parse_scontrol_fields(r.out.substr(0, r.out.find('\n')));
  auto it = fields.find("State");
  if (fields["NodeName"] != node || it == fields.end() || it->second.empty()) {
    lookup.error = "no State of node " + node + " in: " + first_line(r.out);
    return lookup;
  }
  lookup.known = true;
  lookup.node = node;
  lookup.state = it->second;
  return lookup;
}

std::vector<NodeStateLookup> SlurmClient::node_states(const std::vector<std::string>& nodes) const {
  std::vector<NodeStateLookup> out;
  if (nodes.empty()) return out;
  std::string list;
  for (const auto& n : nodes) {
    out.push_back({});
    out.back().node = n;
    // Plain names only: a hostlist expression would ask for other nodes.
    if (!ff::valid_node_name(n) || n.find_first_of("[],") != std::string::npos) {
      out.back().error = "not a plain node name";
      continue;
    }
    list += (list.empty() ? "" : ",") + n;
  }
  if (list.empty()) return out;
  ProcessOptions options = bounded(0);
  // ReasonTime as epoch seconds, whatever the agent's time zone.
  options.environment.push_back("SLURM_TIME_FORMAT=%s");
  ProcessResult r = run_process({paths_.scontrol, "show", "node", "-o", list}, options);
  std::map<std::string, NodeStateLookup> shown;
  if (r.ok()) {
    std::size_t start = 0;
    while (start < r.out.size()) {
      std::size_t end = r.out.find('\n', start);
      if (end == std::string::npos) end = r.out.size();
      std::string line = r.out.substr(start, end - start);
      auto fields = parse_scontrol_fields(line);
      start = end + 1;
      NodeStateLookup l;
      l.node = fields["NodeName"];
      l.state = fields["State"];
      if (l.node.empty() || l.state.empty()) continue;
      l.known = true;
      // "Reason=Not responding [slurm@1796226539]": the text, then who set
      // it and when, as the last bracketed word. Slurm prints Reason last,
      // and an administrator's text may hold "Key=" words of its own: the
      // reason is the rest of the line, not a field split.
      auto at_reason = line.find(" Reason=");
      std::string reason = at_reason == std::string::npos ? "" : line.substr(at_reason + 8);
      auto at = reason.rfind(" [");
      if (at != std::string::npos && reason.back() == ']') {
        std::string who_when = reason.substr(at + 2, reason.size() - at - 3);
        reason.erase(at);
        auto sep = who_when.rfind('@');
        std::string when = sep == std::string::npos ? "" : who_when.substr(sep + 1);
        if (!when.empty() && when.size() <= 12 &&
            when.find_first_not_of("0123456789") == std::string::npos)
          l.reason_time = std::stoll(when);
      }
      if (reason == "(null)" || reason == "none") reason.clear();
      l.reason = reason;
      shown[l.node] = std::move(l);
    }
  }
  for (auto& o : out) {
    if (!o.error.empty()) continue;
    auto it = shown.find(o.node);
    if (it != shown.end())
      o = it->second;
    else
      o.error = r.ok() ? "not shown by scontrol" : failure(r);
  }
  return out;
}

std::string SlurmClient::drain_node(const std::string& node, const std::string& reason) const {
  // One node by its plain name: a hostlist ("n[1-64]") or a list ("n1,n2")
  // from a diagnosis must never drain more than the node it names.
  if (node.empty() ||
      node.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                             "0123456789._-") != std::string::npos ||
      node.front() == '-')
    return "failed: not a plain node name: '" + slurm_safe_text(node, 64) + "'";
  std::string text = slurm_safe_text(reason, kMaxDrainReasonBytes);
  ProcessResult r = run_process(
      {paths_.scontrol, "update", "NodeName=" + node, "State=DRAIN", "Reason=" + text}, bounded(0));
  return r.ok() ? "drained" : failure(r);
}

std::string SlurmClient::set_comment_after_end(const std::string& job_id,
                                               const std::string& summary, int attempt,
                                               int newest_attempt) {
  if (sacctmgr_disabled(paths_.sacctmgr)) return "skipped: sacctmgr off";
  ClusterFacts facts = cluster_facts();
  if (!facts.known) return "skipped: " + facts.error;
  if (!facts.accounting) return "skipped: no accounting";
  std::string text = comment_text(summary);
  // The newest record when the attempt is past what accounting knows.
  if (newest_attempt >= 0 && attempt > newest_attempt) attempt = newest_attempt;
  ProcessResult r =
      run_process({paths_.slurm_job_helper,
                   paths_.comment_field == "AdminComment" ? "--set-admin-comment" : "--set-comment",
                   job_id, std::to_string(attempt), text},
                  bounded(0));
  return r.ok() ? "written: slurmdbd" : failure(r);
}

AccountingLookup SlurmClient::accounting(const std::string& job_id, int timeout_ms) {
  AccountingLookup lookup;
  if (sacctmgr_disabled(paths_.sacctmgr)) {
    lookup.status = AccountingLookup::Status::off;
    lookup.error = "sacctmgr off";
    return lookup;
  }
  ClusterFacts facts = cluster_facts();
  if (!facts.known || !facts.accounting) {
    lookup.status = AccountingLookup::Status::off;
    lookup.error = facts.known ? "no accounting" : facts.error;
    return lookup;
  }
  constexpr int kNotFound = 3;
  ProcessResult r =
      run_process({paths_.slurm_job_helper, "--accounting", job_id}, bounded(timeout_ms));
  if (r.started && !r.timed_out && r.signal == 0 && r.exit_code == kNotFound) {
    lookup.status = AccountingLookup::Status::not_found;
    return lookup;
  }
  if (!r.ok()) {
    lookup.error = failure(r);
    return lookup;
  }
  std::string problem;
  lookup.record = parse_accounting_json(r.out, problem);
  if (!lookup.record) {
    lookup.error = "unusable answer of " + paths_.slurm_job_helper + " --accounting: " + problem;
    return lookup;
  }
  lookup.status = AccountingLookup::Status::found;
  return lookup;
}

}  // namespace ff::agent
