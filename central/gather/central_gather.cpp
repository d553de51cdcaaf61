#include "central/gather/central_gather.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "central/loki/loki_fetch.h"
#include "central/prometheus/prometheus_fetch.h"
#include "engine/read/job_reader.h"
#include "incident/job_json.h"

namespace ff::sources {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return static_cast<bool>(out);
}

}  // namespace

CentralGather gather_central(const CentralConfig& config, const fs::path& incident_dir,
                             const fs::path& out_dir) {
  CentralGather result;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  std::vector<ErrorItem> errors;
  JobInfo job = read_job_json(incident_dir / "job.json", errors);
  if (job.nodes.empty())
    result.problem = "job.json names no nodes";
  else if (!job.start_time || !job.end_time)
    result.problem = "job.json has no start_time and end_time";
  if (!result.problem.empty()) {
    auto not_asked = [&](const char* source) {
      Coverage c;
      c.collector = source;
      c.status = CoverageStatus::kError;
      c.detail = "not asked: " + result.problem;
      result.coverage.push_back(std::move(c));
    };
    if (config.loki) not_asked("loki");
    if (config.prometheus) not_asked("prometheus");
  } else {
    // TimeUs (microseconds) → the nanoseconds Loki and Prometheus count in.
    std::int64_t start_ns = (*job.start_time - config.margin_before_s * 1000000LL) * 1000;
    std::int64_t end_ns = (*job.end_time + config.margin_after_s * 1000000LL) * 1000;
    if (config.loki) {
      LokiFetch loki = fetch_loki_logs(*config.loki, job.nodes, start_ns, end_ns, out_dir);
      result.coverage.insert(result.coverage.end(), loki.coverage.begin(), loki.coverage.end());
    }
    if (config.prometheus) {
      auto at = [](TimeUs us) { return Clock::time_point(std::chrono::microseconds(us)); };
      for (auto& c : fetch_metrics(*config.prometheus, job.nodes, at(*job.start_time),
                                   at(*job.end_time), out_dir))
        result.coverage.push_back(std::move(c));
    }
  }
  json coverage = json::array();
  for (const auto& c : result.coverage) coverage.push_back(to_json(c));
  write_text(out_dir / "coverage.json", coverage.dump(2) + "\n");
  return result;
}

std::string overlay_central(const fs::path& central_dir, const fs::path& incident_dir) {
  std::error_code ec;
  for (const char* top : {"nodes", "metrics", "cluster"}) {
    fs::path from = central_dir / top;
    if (!fs::is_directory(from, ec)) continue;
    fs::copy(from, incident_dir / top,
             fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
    if (ec) return "cannot copy " + from.string() + ": " + ec.message();
  }
  json coverage = json::parse(read_text(central_dir / "coverage.json"), nullptr, false);
  if (!coverage.is_array()) return "";
  json job = json::parse(read_text(incident_dir / "job.json"), nullptr, false);
  if (!job.is_object()) return "incident job.json is not a JSON object";
  // (collector, node) → entry: the central entries replace older ones of theirs.
  std::map<std::pair<std::string, std::string>, json> merged;
  std::vector<std::pair<std::string, std::string>> order;
  auto key_of = [](const json& c) {
    return std::make_pair(c.value("collector", std::string()), c.value("node", std::string()));
  };
  auto add = [&](const json& c) {
    if (!c.is_object()) return;
    auto key = key_of(c);
    if (!merged.count(key)) order.push_back(key);
    merged[key] = c;
  };
  if (job.contains("coverage") && job["coverage"].is_array())
    for (const auto& c : job["coverage"]) add(c);
  for (const auto& c : coverage) add(c);
  json list = json::array();
  for (const auto& key : order) list.push_back(merged[key]);
  job["coverage"] = list;
  if (!write_text(incident_dir / "job.json", job_json_text(job)))
    return "cannot write " + (incident_dir / "job.json").string();
  return "";
}

}  // namespace ff::sources
