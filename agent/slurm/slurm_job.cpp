#include "slurm/slurm_job.h"

#include <cctype>
#include <ctime>
#include <sstream>
#include <stdexcept>

#include "common/hostlist.h"

namespace ff::agent {

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

bool is_null(const std::string& v) {
  return v.empty() || v == "(null)" || v == "None";
}

}  // namespace

bool SlurmJob::running() const {
  // COMPLETING: the Epilog runs; scontrol shows the flag, not the final state.
  static const char* const kLive[] = {"PENDING",     "RUNNING",  "SUSPENDED", "COMPLETING",
                                      "CONFIGURING", "RESIZING", "REQUEUED",  "STAGE_OUT",
                                      "SIGNALING",   "STOPPED"};
  for (const char* s : kLive)
    if (state == s) return true;
  return false;
}

bool SlurmJob::accepts_comment() const {
  // scontrol prints a flag name (CONFIGURING, RESIZING, STOPPED) instead of
  // the base state for some flags; these three only occur on a live job.
  static const char* const kAccepting[] = {"PENDING",     "RUNNING",  "SUSPENDED",
                                           "CONFIGURING", "RESIZING", "STOPPED"};
  for (const char* s : kAccepting)
    if (state == s) return true;
  return false;
}

std::map<std::string, std::string> parse_scontrol_fields(const std::string& line) {
  std::map<std::string, std::string> fields;
  std::istringstream words(line);
  std::string word, key;
  while (words >> word) {
    if (starts_field(word)) {
      auto eq = word.find('=');
      key = word.substr(0, eq);
      fields[key] = word.substr(eq + 1);
    } else if (!key.empty()) {
      fields[key] += " " + word;
    }
  }
  return fields;
}

std::optional<SlurmJob> parse_show_job(const std::string& output) {
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("JobId=", 0) != 0) continue;
    auto f = parse_scontrol_fields(line);
    SlurmJob job;
    auto get = [&](const char* k) -> std::string {
      auto it = f.find(k);
      return it == f.end() || is_null(it->second) ? "" : it->second;
    };
    job.job_id = get("JobId");
    // Array tasks: "JobId=12 ArrayJobId=11 ArrayTaskId=1" is asked for as 11_1.
    if (!get("ArrayJobId").empty() && !get("ArrayTaskId").empty())
      job.job_id = get("ArrayJobId") + "_" + get("ArrayTaskId");
    job.state = get("JobState");
    job.exit_code = get("ExitCode");
    job.start_time = slurm_time_to_utc(get("StartTime"));
    job.end_time = slurm_time_to_utc(get("EndTime"));
    std::string nodelist = get("NodeList");
    if (!nodelist.empty()) {
      try {
        job.nodes = ff::expand_hostlist(nodelist);
      } catch (const std::exception&) {
        job.nodes.clear();
      }
    }
    job.batch_host = get("BatchHost");
    job.std_out = get("StdOut");
    job.std_err = get("StdErr");
    std::string user = get("UserId");
    auto paren = user.find('(');
    job.user = user.substr(0, paren);
    if (paren != std::string::npos) {
      try {
        job.uid = std::stoi(user.substr(paren + 1));
      } catch (const std::exception&) {
        job.uid = -1;
      }
    }
    try {
      // 22.05 prints "Restarts=", some tools "RestartCnt=".
      std::string restarts = get("Restarts").empty() ? get("RestartCnt") : get("Restarts");
      job.restart_count = restarts.empty() ? 0 : std::stoi(restarts);
    } catch (const std::exception&) {
      job.restart_count = 0;
    }
    job.comment = get("Comment");
    job.fields = std::move(f);
    return job;
  }
  return std::nullopt;
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

std::string slurm_time_to_utc(const std::string& local) {
  std::tm tm{};
  const char* end = strptime(local.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr || *end != '\0') return "";
  tm.tm_isdst = -1;
  std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) return "";
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

}  // namespace ff::agent
