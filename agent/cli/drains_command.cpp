// firstfault drains [--db PATH] [--since T] [--node N] [--format text|json]
// What the agent's drain policy (agent.yaml `drain:`) decided, oldest first:
// the nodes it drained and the ones it declined, with the reason.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/cli/commands.h"
#include "agent/store/diagnosis_store.h"
#include "agent/suspects/time_window.h"
#include "incident/time/time.h"

namespace ff::cli {
namespace {

struct DrainsOptions {
  std::string db;
  std::string since = "7d";
  std::string node;
  std::string format = "text";
};

std::string table(const std::vector<agent::DrainAction>& rows) {
  const std::vector<std::string> head = {"TIME", "JOB", "NODE", "DECISION", "BLAMES", "REASON"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& a : rows)
    cells.push_back(
        {format_time_seconds(a.created_at), agent::job_label(a.job_id, a.attempt), a.node,
         a.decision, std::to_string(a.blames),
         a.reason + (a.decision == "failed" && !a.detail.empty() ? " (" + a.detail + ")" : "")});
  std::vector<std::size_t> width(head.size());
  for (std::size_t i = 0; i < head.size(); ++i) width[i] = head[i].size();
  for (const auto& row : cells)
    for (std::size_t i = 0; i + 1 < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out;
  auto line = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      out += row[i];
      if (i + 1 < row.size()) out += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out += "\n";
  };
  line(head);
  for (const auto& row : cells) line(row);
  return out;
}

std::string json_rows(const std::vector<agent::DrainAction>& rows) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& a : rows) {
    nlohmann::ordered_json j;
    j["created_at"] = format_time_seconds(a.created_at);
    j["job_id"] = a.job_id;
    j["attempt"] = a.attempt;
    j["diagnosis_id"] = a.diagnosis_id;
    j["node"] = a.node;
    j["device"] = a.device;
    j["decision"] = a.decision;
    j["reason"] = a.reason;
    j["blames"] = a.blames;
    j["detail"] = a.detail;
    out.push_back(std::move(j));
  }
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

void add_drains_command(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<DrainsOptions>();
  CLI::App* sub =
      app.add_subcommand("drains", "nodes the agent drained, or declined to drain, and why");
  sub->add_option(
      "--db", opt->db,
      "agent database (default $FIRSTFAULT_DB, else /var/lib/firstfault/firstfault.db)");
  sub->add_option("--since", opt->since,
                  "decisions since T (default 7d): RFC 3339 (2026-11-30T05:00:00Z, 2026-11-30), "
                  "unix seconds or an age (90m, 24h, 7d, 2w)");
  sub->add_option("--node", opt->node, "only decisions about node N");
  sub->add_option("--format", opt->format, "text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  sub->callback([opt, &exit_code]() {
    auto since = agent::parse_since(opt->since, static_cast<std::int64_t>(std::time(nullptr)));
    if (!since) {
      std::fprintf(stderr,
                   "firstfault: --since %s: expected RFC 3339 (2026-11-30T05:00:00Z, "
                   "2026-11-30), unix seconds or an age (90m, 24h, 7d, 2w)\n",
                   opt->since.c_str());
      exit_code = kExitUsage;
      return;
    }
    std::string path = database_path(opt->db);
    std::vector<agent::DrainAction> rows;
    try {
      rows = agent::DiagnosisStore::open_readonly(path)->drain_actions(*since);
    } catch (const agent::StoreError& e) {
      std::fprintf(stderr, "firstfault: %s\n", e.what());
      exit_code = kExitNotFound;
      return;
    }
    if (!opt->node.empty())
      rows.erase(std::remove_if(rows.begin(), rows.end(),
                                [&](const agent::DrainAction& a) { return a.node != opt->node; }),
                 rows.end());
    std::string out;
    if (opt->format == "json")
      out = json_rows(rows);
    else
      out = rows.empty() ? "no drain decisions recorded\n" : table(rows);
    std::fwrite(out.data(), 1, out.size(), stdout);
    exit_code = kExitDiagnosed;
  });
}

}  // namespace ff::cli
