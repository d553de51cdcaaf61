#include "agent/slurm/slurm_job.h"

#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/node_name.h"
#include "incident/time/time.h"

namespace ff::agent {

using nlohmann::json;

namespace {

// "Key=" where Key is what scontrol prints: letters, digits and _ / : . -
// ("CPUs/Task=", "NtasksPerN:B:S:C=", "ReqB:S:C:T=").
bool starts_field(const std::string& word) {
  auto eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  if (!std::isalpha(static_cast<unsigned char>(word[0]))) return false;
  for (std::size_t i = 0; i < eq; ++i) {
    unsigned char c = static_cast<unsigned char>(word[i]);
    if (!std::isalnum(c) && c != '_' && c != '/' && c != ':' && c != '.' && c != '-') return false;
  }
  return true;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool all_of(const std::string& s, int (*pred)(int)) {
  for (char c : s)
    if (!pred(static_cast<unsigned char>(c))) return false;
  return true;
}

// digits, then "_digits" (array task) or "+digits" (het component).
bool job_id_form(const std::string& id) {
  auto sep = id.find_first_of("_+");
  std::string head = id.substr(0, sep);
  std::string tail = sep == std::string::npos ? "1" : id.substr(sep + 1);
  return !head.empty() && head.size() <= 10 && !tail.empty() && tail.size() <= 10 &&
         all_of(head, ::isdigit) && all_of(tail, ::isdigit);
}

// Slurm's state names: upper case and '_' ("NODE_FAIL", "OUT_OF_MEMORY").
bool state_form(const std::string& s) {
  if (s.empty() || s.size() > 32) return false;
  for (char c : s)
    if (!(c >= 'A' && c <= 'Z') && c != '_') return false;
  return true;
}

bool exit_code_form(const std::string& s) {
  auto colon = s.find(':');
  if (colon == std::string::npos) return false;
  std::string exit = s.substr(0, colon), sig = s.substr(colon + 1);
  return !exit.empty() && exit.size() <= 10 && !sig.empty() && sig.size() <= 10 &&
         all_of(exit, ::isdigit) && all_of(sig, ::isdigit);
}

// Exactly what slurm_epoch_to_utc writes: "YYYY-MM-DDTHH:MM:SSZ".
bool utc_form(const std::string& s) {
  static const char kShape[] = "dddd-dd-ddTdd:dd:ddZ";
  if (s.size() != sizeof kShape - 1) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (kShape[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(s[i])) : s[i] != kShape[i])
      return false;
  return true;
}

}  // namespace

bool SlurmJob::running() const {
  // COMPLETING: the Epilog runs; Slurm shows the flag, not the final state.
  static const char* const kLive[] = {"PENDING",     "RUNNING",  "SUSPENDED", "COMPLETING",
                                      "CONFIGURING", "RESIZING", "REQUEUED",  "STAGE_OUT",
                                      "SIGNALING",   "STOPPED"};
  for (const char* s : kLive)
    if (state == s) return true;
  return false;
}

bool SlurmJob::accepts_comment() const {
  // Slurm names a flag (CONFIGURING, RESIZING, STOPPED) instead of the base
  // state for some flags; these three only occur on a live job.
  static const char* const kAccepting[] = {"PENDING",     "RUNNING",  "SUSPENDED",
                                           "CONFIGURING", "RESIZING", "STOPPED"};
  for (const char* s : kAccepting)
    if (state == s) return true;
  return false;
}

std::string slurm_job_json(const SlurmJob& job) {
  json j = {{"job_id", job.job_id},
            {"state", job.state},
            {"exit_code", job.exit_code},
            {"start_time", job.start_time},
            {"end_time", job.end_time},
            {"nodes", job.nodes},
            {"batch_host", job.batch_host},
            {"std_out", job.std_out},
            {"std_err", job.std_err},
            {"user", job.user},
            {"uid", job.uid},
            {"restart_count", job.restart_count}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<SlurmJob> parse_slurm_job_json(const std::string& text, std::string& problem) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    problem = "not a JSON object";
    return std::nullopt;
  }
  SlurmJob job;
  auto fail = [&](const std::string& key, const std::string& why) {
    problem = "'" + key + "' " + why;
    return std::nullopt;
  };
  // A string member: missing → "", anything but a string → a problem.
  auto text_of = [&](const char* key, std::string& out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return true;
    if (!it->is_string()) return false;
    out = it->get<std::string>();
    return out.find('\0') == std::string::npos;
  };
  auto int_of = [&](const char* key, int& out, int min) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return true;
    if (!it->is_number_integer()) return false;
    auto v = it->get<std::int64_t>();
    if (v < min || v > std::numeric_limits<int>::max()) return false;
    out = static_cast<int>(v);
    return true;
  };
  for (const char* key : {"job_id", "state"})
    if (!j.contains(key)) return fail(key, "missing");
  if (!text_of("job_id", job.job_id) || !job_id_form(job.job_id))
    return fail("job_id", "is not a Slurm job id");
  if (!text_of("state", job.state) || !state_form(job.state))
    return fail("state", "is not a Slurm job state");
  if (!text_of("exit_code", job.exit_code) ||
      (!job.exit_code.empty() && !exit_code_form(job.exit_code)))
    return fail("exit_code", "is not exit:signal");
  using Member = std::pair<const char*, std::string*>;
  for (auto [key, out] : {Member{"start_time", &job.start_time}, Member{"end_time", &job.end_time}})
    if (!text_of(key, *out) || (!out->empty() && !utc_form(*out)))
      return fail(key, "is not an RFC 3339 UTC time");
  if (auto it = j.find("nodes"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return fail("nodes", "is not a list");
    for (const auto& n : *it) {
      if (!n.is_string() || !ff::valid_node_name(n.get<std::string>()))
        return fail("nodes", "holds something that is not a node name");
      job.nodes.push_back(n.get<std::string>());
    }
  }
  if (!text_of("batch_host", job.batch_host) ||
      (!job.batch_host.empty() && !ff::valid_node_name(job.batch_host)))
    return fail("batch_host", "is not a node name");
  for (auto [key, out] : {Member{"std_out", &job.std_out}, Member{"std_err", &job.std_err},
                          Member{"user", &job.user}})
    if (!text_of(key, *out)) return fail(key, "is not a string");
  if (!int_of("uid", job.uid, -1)) return fail("uid", "is not a uid");
  if (!int_of("restart_count", job.restart_count, 0))
    return fail("restart_count", "is not a count");
  return job;
}

const AccountingAttempt* AccountingRecord::of(int attempt) const {
  for (const auto& a : attempts)
    if (a.attempt == attempt) return &a;
  return nullptr;
}

std::string accounting_json(const AccountingRecord& record) {
  json attempts = json::array();
  for (const auto& a : record.attempts)
    attempts.push_back({{"attempt", a.attempt},
                        {"state", a.state},
                        {"exit_code", a.exit_code},
                        {"submit_time", a.submit_time},
                        {"start_time", a.start_time},
                        {"end_time", a.end_time},
                        {"nodes", a.nodes}});
  json j = {{"job_id", record.job_id}, {"attempts", attempts}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<AccountingRecord> parse_accounting_json(const std::string& text,
                                                      std::string& problem) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    problem = "not a JSON object";
    return std::nullopt;
  }
  AccountingRecord record;
  auto job_id = j.find("job_id");
  if (job_id == j.end() || !job_id->is_string() || !job_id_form(job_id->get<std::string>())) {
    problem = "'job_id' is not a Slurm job id";
    return std::nullopt;
  }
  record.job_id = job_id->get<std::string>();
  auto list = j.find("attempts");
  if (list == j.end() || !list->is_array()) {
    problem = "'attempts' is not a list";
    return std::nullopt;
  }
  for (const auto& a : *list) {
    AccountingAttempt attempt;
    auto text_at = [&](const char* key, std::string& out, bool (*form)(const std::string&)) {
      auto it = a.find(key);
      if (it == a.end() || it->is_null()) return true;
      if (!it->is_string()) return false;
      out = it->get<std::string>();
      return out.empty() || form(out);
    };
    if (!a.is_object() || !a.contains("attempt") || !a["attempt"].is_number_integer() ||
        a["attempt"].get<std::int64_t>() < 0 || a["attempt"].get<std::int64_t>() > 1000000) {
      problem = "an attempt without its index";
      return std::nullopt;
    }
    attempt.attempt = static_cast<int>(a["attempt"].get<std::int64_t>());
    if (!text_at("state", attempt.state, state_form) || attempt.state.empty() ||
        !text_at("exit_code", attempt.exit_code, exit_code_form) ||
        !text_at("submit_time", attempt.submit_time, utc_form) ||
        !text_at("start_time", attempt.start_time, utc_form) ||
        !text_at("end_time", attempt.end_time, utc_form)) {
      problem = "attempt " + std::to_string(attempt.attempt) + ": a field not as Slurm writes it";
      return std::nullopt;
    }
    if (auto n = a.find("nodes"); n != a.end() && !n->is_null()) {
      if (!n->is_array()) {
        problem = "attempt " + std::to_string(attempt.attempt) + ": 'nodes' is not a list";
        return std::nullopt;
      }
      for (const auto& node : *n) {
        if (!node.is_string() || !ff::valid_node_name(node.get<std::string>())) {
          problem = "attempt " + std::to_string(attempt.attempt) + ": not a node name in 'nodes'";
          return std::nullopt;
        }
        attempt.nodes.push_back(node.get<std::string>());
      }
    }
    record.attempts.push_back(std::move(attempt));
  }
  return record;
}

int resolve_attempt(int claimed, const std::string& bundle_start, const SlurmJob* newest,
                    const AccountingRecord* accounting) {
  MaybeTime start = parse_iso8601_utc(bundle_start);
  if (!start) return claimed;
  // A slurmctld record that knows fewer attempts than the node claims is
  // older than the claim (cached): the claim stands.
  if (newest && newest->restart_count < claimed) return claimed;
  constexpr TimeUs kSlack = 2 * kUsPerSecond;
  if (accounting && !accounting->attempts.empty()) {
    const AccountingAttempt* best = nullptr;
    TimeUs best_start = 0;
    for (const auto& a : accounting->attempts) {
      MaybeTime s = parse_iso8601_utc(a.start_time);
      if (!s || *s > *start + kSlack) continue;
      if (!best || *s >= best_start) {
        best = &a;
        best_start = *s;
      }
    }
    if (best) {
      // An allocation that began after that attempt ended is of a later
      // attempt accounting has not been told of yet.
      MaybeTime ended = parse_iso8601_utc(best->end_time);
      if (ended && *start > *ended + kSlack) return std::max(claimed, best->attempt + 1);
      return best->attempt;
    }
  }
  if (!newest) return claimed;
  int r = newest->restart_count;
  // The newest attempt has not started (a requeued job waits for its begin
  // time), or started after this allocation: the bundle is of the one before.
  MaybeTime s = parse_iso8601_utc(newest->start_time);
  bool newest_started = s && newest->state != "PENDING" && newest->state != "REQUEUED";
  if (newest_started && *s <= *start + kSlack) return r;
  return r > 0 ? r - 1 : claimed;
}

std::string slurm_epoch_to_utc(std::int64_t seconds) {
  // libslurm's start_time and end_time are time_t: seconds since the epoch,
  // an instant with no zone, so they are written as UTC directly. No
  // mktime/localtime here: those read the agent's TZ, which need not be
  // slurmctld's. (scontrol's "StartTime=2026-11-30T00:53:20" is slurmctld's
  // local wall time without an offset, ambiguous in the hour a DST change
  // repeats; the helper reads the time_t instead.)
  // NO_VAL (0xfffffffe) and INFINITE (0xffffffff) as 32-bit markers; a
  // real time past 2106 is not Slurm's either.
  if (seconds <= 0 || seconds >= 0xfffffffeLL) return "";
  return format_time_seconds(seconds);
}

std::map<std::string, std::string> parse_scontrol_fields(const std::string& line) {
  std::map<std::string, std::string> fields;
  std::istringstream words(line);
  std::string word, key;
  bool keep = false;  // the current key was seen first here
  while (words >> word) {
    if (starts_field(word)) {
      auto eq = word.find('=');
      key = word.substr(0, eq);
      keep = fields.emplace(key, word.substr(eq + 1)).second;
    } else if (keep) {
      fields[key] += " " + word;
    }
  }
  return fields;
}

std::map<std::string, std::string> parse_show_config(const std::string& output) {
  std::map<std::string, std::string> out;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    auto eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    std::string key = trim(line.substr(0, eq));
    if (key.empty() || key.find(' ') != std::string::npos) continue;
    out[key] = trim(line.substr(eq + 3));
  }
  return out;
}

}  // namespace ff::agent
