// firstfault history [--db PATH] [--node N] [--since T] [--limit N] [--all] [--format text|json]
// Recent failures from the agent's database, newest first: the current
// diagnosis (newest pass) of each job attempt.
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <string>

#include "agent/cli/commands.h"
#include "agent/store/diagnosis_store.h"
#include "agent/suspects/time_window.h"
#include "incident/time/time.h"

namespace ff::cli {
namespace {

struct HistoryOptions {
  std::string db;
  std::string node;
  std::string since;
  int limit = 20;
  bool all = false;
  std::string format = "text";
};

// --since: see agent::parse_since (shared with `suspects` and the HTTP API).
using agent::parse_since;

std::string or_dash(const std::string& s) {
  return s.empty() ? "-" : s;
}

std::string table(const std::vector<agent::PassRecord>& rows) {
  const std::vector<std::string> head = {"TIME",   "JOB",       "VERDICT",
                                         "DOMAIN", "ROOT NODE", "SUMMARY"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& p : rows)
    cells.push_back({format_time_seconds(p.created_at), agent::job_label(p.job_id, p.attempt),
                     p.verdict, or_dash(p.domain), or_dash(p.root_node), p.summary});
  std::vector<std::size_t> width(head.size());
  for (std::size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& r : cells) width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string>& r) {
    std::string out;
    for (std::size_t c = 0; c < r.size(); ++c) {
      out += r[c];
      // The summary is last and not padded: no trailing blanks.
      if (c + 1 < r.size()) out += std::string(width[c] - r[c].size() + 2, ' ');
    }
    return out + "\n";
  };
  std::string out = line(head);
  for (const auto& r : cells) out += line(r);
  return out;
}

std::string json_rows(const std::vector<agent::PassRecord>& rows) {
  // Summaries only, never evidence lines (like the agent's read endpoint).
  auto null_if_empty = [](const std::string& s) {
    return s.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s);
  };
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& p : rows) {
    nlohmann::ordered_json j;
    j["job_id"] = p.job_id;
    j["attempt"] = p.attempt;
    j["pass"] = p.pass_no;
    j["trigger"] = p.trigger;
    j["created_at"] = format_time_seconds(p.created_at);
    j["verdict"] = p.verdict;
    j["domain"] = null_if_empty(p.domain);
    j["sub_domain"] = null_if_empty(p.sub_domain);
    j["root_node"] = null_if_empty(p.root_node);
    j["root_device"] = null_if_empty(p.root_device);
    j["recommended_action"] = null_if_empty(p.recommended_action);
    j["comment_status"] = p.comment_status;
    j["summary"] = p.summary;
    out.push_back(std::move(j));
  }
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

void add_history_command(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<HistoryOptions>();
  CLI::App* sub = app.add_subcommand("history", "recent failures recorded by the agent");
  sub->add_option(
      "--db", opt->db,
      "agent database (default $FIRSTFAULT_DB, else /var/lib/firstfault/firstfault.db)");
  sub->add_option("--node", opt->node, "only failures whose root cause or affected nodes name N");
  sub->add_option("--since", opt->since,
                  "only diagnoses since T: RFC 3339 (2026-11-30T05:00:00Z, 2026-11-30) or an "
                  "age (90m, 24h, 7d, 2w)");
  sub->add_option("--limit", opt->limit, "at most N rows (default 20; 0: all)")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--all", opt->all, "completed jobs too (verdict no_failure)");
  sub->add_option("--format", opt->format, "text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  sub->callback([opt, &exit_code]() {
    agent::ListFilter filter;
    filter.node = opt->node;
    filter.limit = opt->limit;
    filter.failures_only = !opt->all;
    filter.include_diagnosis = false;
    if (!opt->since.empty()) {
      auto since = parse_since(opt->since, static_cast<std::int64_t>(std::time(nullptr)));
      if (!since) {
        std::fprintf(stderr,
                     "firstfault: --since %s: expected RFC 3339 (2026-11-30T05:00:00Z, "
                     "2026-11-30) or an age (90m, 24h, 7d, 2w)\n",
                     opt->since.c_str());
        exit_code = kExitUsage;
        return;
      }
      filter.since = *since;
    }
    std::string path = database_path(opt->db);
    std::vector<agent::PassRecord> rows;
    try {
      rows = agent::DiagnosisStore::open_readonly(path)->list(filter);
    } catch (const agent::StoreError& e) {
      std::fprintf(stderr, "firstfault: %s\n", e.what());
      exit_code = kExitNotFound;
      return;
    }
    std::string out;
    if (opt->format == "json")
      out = json_rows(rows);
    else
      out = rows.empty() ? "no failures recorded\n" : table(rows);
    std::fwrite(out.data(), 1, out.size(), stdout);
    exit_code = kExitDiagnosed;
  });
}

}  // namespace ff::cli
