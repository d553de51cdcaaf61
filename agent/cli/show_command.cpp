// firstfault show JOBID [--db PATH] [--attempt N] [--format text|json] [--all-passes]
// The diagnosis the agent stored for a job, read from its database
// (read-only: safe while the agent runs).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>

#include "agent/cli/commands.h"
#include "agent/store/diagnosis_store.h"
#include "engine/verdict/text_report.h"
#include "incident/diagnosis_json.h"
#include "incident/time/time.h"

namespace ff::cli {

std::string database_path(const std::string& db_option) {
  if (!db_option.empty()) return db_option;
  if (const char* env = std::getenv("FIRSTFAULT_DB"); env && *env) return env;
  return "/var/lib/firstfault/firstfault.db";
}

namespace {

struct ShowOptions {
  std::string job_id;
  std::string db;
  int attempt = -1;
  std::string format = "text";
  bool all_passes = false;
  std::string colour = "auto";
};

std::string or_dash(const std::string& s) {
  return s.empty() ? "-" : s;
}

// What the store adds to the engine's report: which pass this is, when and
// why it ran, and what became of the Slurm Comment.
std::string pass_header(const agent::PassRecord& p, const Diagnosis& d,
                        std::size_t passes_of_attempt) {
  // Every root cause: an ambiguous verdict names each candidate, and the
  // first one alone would read as an attribution.
  std::string roots;
  for (const auto& r : d.root_causes) {
    std::string one = r.node.empty() ? "(job-wide) " + r.event : r.node;
    if (!r.device.empty()) one += " " + r.device;
    roots += (roots.empty() ? "" : "; ") + one;
  }
  if (roots.empty()) roots = "-";
  std::string out;
  out += "job " + p.job_id + " attempt " + std::to_string(p.attempt) + "  pass " +
         std::to_string(p.pass_no) + " of " + std::to_string(passes_of_attempt) + " (" + p.trigger +
         ", " + format_time_seconds(p.created_at) + ")\n";
  out += "verdict:    " + p.verdict + "\n";
  out += "domain:     " + or_dash(p.domain) + (p.sub_domain.empty() ? "" : " / " + p.sub_domain) +
         "\n";
  out += std::string(p.verdict == "ambiguous" ? "candidates: " : "root cause: ") + roots + "\n";
  out += "summary:    " + p.summary + "\n";
  out += "comment:    " + or_dash(p.comment_status) + "\n";
  return out;
}

std::string pass_text(const agent::PassRecord& p, std::size_t passes_of_attempt, bool colour) {
  Diagnosis d = diagnosis_from_json(p.diagnosis);
  return pass_header(p, d, passes_of_attempt) + "\n" + diagnosis_to_text(d, colour);
}

// The stored JSON as it was stored, ending in one newline like `analyze`.
std::string with_newline(const std::string& text) {
  return !text.empty() && text.back() == '\n' ? text : text + "\n";
}

// --all-passes --format json: the pass metadata around each stored
// diagnosis, the diagnosis itself copied byte for byte.
std::string passes_json(const std::vector<agent::PassRecord>& passes) {
  std::string out = "[";
  for (std::size_t i = 0; i < passes.size(); ++i) {
    const auto& p = passes[i];
    nlohmann::ordered_json meta;
    meta["job_id"] = p.job_id;
    meta["attempt"] = p.attempt;
    meta["pass"] = p.pass_no;
    meta["trigger"] = p.trigger;
    meta["created_at"] = format_time_seconds(p.created_at);
    meta["comment_status"] = p.comment_status;
    std::string m = meta.dump();
    m.pop_back();  // the closing brace: the diagnosis goes in before it
    out += (i ? ",\n" : "\n") + m + ",\"diagnosis\":" + p.diagnosis_text + "}";
  }
  return out + "\n]\n";
}

}  // namespace

void add_show_command(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<ShowOptions>();
  CLI::App* sub = app.add_subcommand("show", "print the stored diagnosis of a job");
  sub->add_option("jobid", opt->job_id, "Slurm job id")->required();
  sub->add_option(
      "--db", opt->db,
      "agent database (default $FIRSTFAULT_DB, else /var/lib/firstfault/firstfault.db)");
  sub->add_option("--attempt", opt->attempt, "job attempt (default: the newest)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--format", opt->format, "text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  sub->add_flag("--all-passes", opt->all_passes, "every pass of the job, oldest first");
  sub->add_option("--color", opt->colour, "auto, always or never (text format)")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  sub->callback([opt, &exit_code]() {
    std::string path = database_path(opt->db);
    std::unique_ptr<agent::DiagnosisStore> store;
    try {
      store = agent::DiagnosisStore::open_readonly(path);
    } catch (const agent::StoreError& e) {
      std::fprintf(stderr, "firstfault: %s\n", e.what());
      exit_code = kExitNotFound;
      return;
    }
    std::vector<agent::PassRecord> shown;
    std::vector<agent::PassRecord> all = store->passes(opt->job_id);
    if (opt->attempt >= 0)
      std::erase_if(all, [&](const agent::PassRecord& p) { return p.attempt != opt->attempt; });
    if (opt->all_passes) {
      shown = all;
    } else if (!all.empty()) {
      // passes() is ordered by attempt, then pass_no: the newest is last.
      shown.push_back(all.back());
    }
    if (shown.empty()) {
      std::string which = opt->job_id;
      if (opt->attempt >= 0) which += " attempt " + std::to_string(opt->attempt);
      std::fprintf(stderr, "firstfault: no diagnosis of job %s in %s\n", which.c_str(),
                   path.c_str());
      exit_code = kExitNotFound;
      return;
    }
    auto passes_of_attempt = [&](int attempt) {
      return static_cast<std::size_t>(
          std::count_if(all.begin(), all.end(),
                        [&](const agent::PassRecord& p) { return p.attempt == attempt; }));
    };
    bool colour = opt->colour == "always" || (opt->colour == "auto" && isatty(STDOUT_FILENO));
    std::string out;
    if (opt->format == "json") {
      out = opt->all_passes ? passes_json(shown) : with_newline(shown.front().diagnosis_text);
    } else {
      for (std::size_t i = 0; i < shown.size(); ++i) {
        if (i) out += "\n" + std::string(72, '-') + "\n\n";
        out += pass_text(shown[i], passes_of_attempt(shown[i].attempt), colour);
      }
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    exit_code = kExitDiagnosed;
  });
}

}  // namespace ff::cli
