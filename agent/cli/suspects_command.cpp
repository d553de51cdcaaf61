// firstfault suspects [--config agent.yaml] [--db PATH] [--since T] [--min-jobs N] [--all] [--json]
// The nodes, GPUs and ports that keep appearing in failed jobs, ranked, from
// the agent's database (read-only, safe while the agent runs).
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "agent/cli/commands.h"
#include "agent/server/agent_config.h"
#include "agent/store/diagnosis_store.h"
#include "agent/suspects/suspect_report.h"
#include "agent/suspects/time_window.h"
#include "incident/time/time.h"

namespace ff::cli {
namespace {

struct SuspectsOptions {
  std::string config;
  std::string db;
  std::string since = "14d";
  int min_jobs = agent::SuspectSettings().min_jobs;
  bool all = false;
  bool json = false;
};

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

// Columns padded to their widest cell; the last one is not padded.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(rows.front().size());
  for (const auto& r : rows)
    for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  std::string out;
  for (const auto& r : rows) {
    for (std::size_t c = 0; c < r.size(); ++c) {
      out += r[c];
      if (c + 1 < r.size()) out += std::string(width[c] - r[c].size() + 2, ' ');
    }
    out += "\n";
  }
  return out;
}

std::string text_report(const agent::SuspectReport& report, bool all) {
  std::string out = "suspects " + format_time_seconds(report.since) + " .. " +
                    format_time_seconds(report.until) +
                    " (flagged: failed >= " + std::to_string(report.settings.min_jobs) + " jobs)\n";
  std::vector<std::vector<std::string>> rows = {{"RANK", "KIND", "COMPONENT", "JOBS", "ROOT",
                                                 "ATTRIB", "SYMPTOM", "SYSTEMIC", "DOMAINS",
                                                 "FIRST SEEN", "LAST SEEN"}};
  int rank = 0;
  int hidden = 0;
  for (const auto& s : report.suspects) {
    if (!s.flagged && !all) {
      ++hidden;
      continue;
    }
    rows.push_back({std::to_string(++rank), agent::to_string(s.kind), s.id, std::to_string(s.jobs),
                    std::to_string(s.root_cause_jobs), std::to_string(s.attributed_jobs),
                    std::to_string(s.symptom_jobs), std::to_string(s.systemic_jobs),
                    s.domains.empty() ? "-" : join(s.domains, " "),
                    format_time_seconds(s.first_seen), format_time_seconds(s.last_seen)});
  }
  if (rank == 0)
    out += "no component failed " + std::to_string(report.settings.min_jobs) + " or more jobs\n";
  else
    out += table(rows);
  if (hidden > 0)
    out += std::to_string(hidden) + " component(s) seen in fewer jobs not shown (--all)\n";
  if (!report.systemic_events.empty()) {
    out += "\nsystemic events (one outage across many nodes; set apart, not counted above):\n";
    for (const auto& e : report.systemic_events) {
      std::vector<std::string> jobs;
      for (const auto& j : e.jobs) jobs.push_back(agent::job_label(j.job_id, j.attempt));
      out += "  " + format_time_seconds(e.first_seen) + " .. " + format_time_seconds(e.last_seen) +
             "  " + e.domain + ": " + std::to_string(e.nodes.size()) + " nodes in " +
             std::to_string(e.jobs.size()) + " jobs\n" + "    nodes: " + join(e.nodes, " ") +
             "\n    jobs:  " + join(jobs, " ") + "\n";
    }
  }
  return out;
}

}  // namespace

void add_suspects_command(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<SuspectsOptions>();
  CLI::App* sub = app.add_subcommand(
      "suspects", "nodes, GPUs and ports that failed several jobs recently, worst first");
  sub->add_option("--config", opt->config,
                  "agent.yaml whose suspects: settings (window, min_jobs, systemic) and "
                  "database to use, as the agent and GET /api/v1/suspects do");
  sub->add_option(
      "--db", opt->db,
      "agent database (default $FIRSTFAULT_DB, else /var/lib/firstfault/firstfault.db)");
  sub->add_option("--since", opt->since,
                  "failures since T: an age (14d, the default; 24h, 2w) or RFC 3339 "
                  "(2026-11-30T05:00:00Z, 2026-11-30)");
  sub->add_option("--min-jobs", opt->min_jobs,
                  "flag a component after N failed jobs (default 2, like agent.yaml)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--all", opt->all, "also the components seen in fewer jobs");
  sub->add_flag("--json", opt->json, "JSON (the format of GET /api/v1/suspects)");
  sub->callback([opt, sub, &exit_code]() {
    auto now = static_cast<std::int64_t>(std::time(nullptr));
    agent::SuspectSettings settings;
    if (!opt->config.empty()) {
      try {
        auto config = agent::load_agent_config(opt->config);
        settings = config.suspects;
        if (opt->db.empty()) opt->db = config.database;
        if (sub->count("--since") == 0)
          opt->since = std::to_string(settings.window_s / 86400) + "d";
        if (sub->count("--min-jobs") == 0) opt->min_jobs = settings.min_jobs;
      } catch (const agent::ConfigError& e) {
        std::fprintf(stderr, "firstfault: %s\n", e.what());
        exit_code = kExitUsage;
        return;
      }
    }
    auto since = agent::parse_since(opt->since, now);
    if (!since) {
      std::fprintf(stderr,
                   "firstfault: --since %s: expected an age (90m, 24h, 14d, 2w) or RFC 3339 "
                   "(2026-11-30T05:00:00Z, 2026-11-30)\n",
                   opt->since.c_str());
      exit_code = kExitUsage;
      return;
    }
    settings.min_jobs = opt->min_jobs;
    settings.window_s = now - *since;
    std::string path = database_path(opt->db);
    std::vector<agent::Sighting> sightings;
    try {
      sightings = agent::DiagnosisStore::open_readonly(path)->sightings(*since);
    } catch (const agent::StoreError& e) {
      std::fprintf(stderr, "firstfault: %s\n", e.what());
      exit_code = kExitNotFound;
      return;
    }
    auto report = agent::find_suspects(std::move(sightings), settings, *since, now);
    std::string out = opt->json
                          ? agent::suspects_to_json(report, opt->all)
                                    .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                                "\n"
                          : text_report(report, opt->all);
    std::fwrite(out.data(), 1, out.size(), stdout);
    exit_code = kExitDiagnosed;
  });
}

}  // namespace ff::cli
