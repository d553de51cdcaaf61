#include "read/job_reader.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace ff {
namespace {

using nlohmann::json;

std::string str_of(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<long long>());
  return it->dump();
}

MaybeTime time_of(const json& j, const char* key, std::vector<ErrorItem>& errors) {
  std::string s = str_of(j, key);
  if (s.empty()) return std::nullopt;
  auto t = parse_iso8601_utc(s);
  if (!t)
    errors.push_back(
        {"job.json", 0, std::string("field '") + key + "' is not an RFC 3339 time: " + s});
  return t;
}

}  // namespace

JobInfo read_job_json(const std::filesystem::path& path, std::vector<ErrorItem>& errors) {
  JobInfo job;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    errors.push_back(
        {"job.json", 0, "missing or unreadable job.json; job window, ranks and GPUs unknown"});
    return job;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  json j;
  try {
    j = json::parse(ss.str());
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e400
    errors.push_back({"job.json", 0, std::string("malformed job.json: ") + e.what()});
    return job;
  }
  if (!j.is_object()) {
    errors.push_back({"job.json", 0, "job.json is not a JSON object"});
    return job;
  }
  try {
    job.schema = str_of(j, "schema");
    job.cluster = str_of(j, "cluster");
    job.job_id = str_of(j, "job_id");
    if (job.job_id.empty()) errors.push_back({"job.json", 0, "job.json has no job_id"});
    if (auto it = j.find("attempt"); it != j.end() && it->is_number_integer())
      job.attempt = it->get<int>();
    job.state = str_of(j, "state");
    for (auto& c : job.state) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    job.exit_code = str_of(j, "exit_code");
    job.start_time = time_of(j, "start_time", errors);
    job.end_time = time_of(j, "end_time", errors);
    if (std::string tz = str_of(j, "timezone"); !tz.empty()) job.timezone = tz;
    if (auto it = j.find("nodes"); it != j.end() && it->is_array()) {
      for (const auto& n : *it)
        if (n.is_string()) job.nodes.push_back(n.get<std::string>());
    } else {
      errors.push_back({"job.json", 0, "job.json has no 'nodes' list; nodes taken from nodes/"});
    }
    if (auto it = j.find("ranks"); it != j.end() && it->is_array()) {
      for (const auto& r : *it) {
        if (!r.is_object()) continue;
        RankInfo ri;
        if (auto v = r.find("rank"); v != r.end() && v->is_number_integer())
          ri.rank = v->get<int>();
        ri.node = str_of(r, "node");
        if (auto v = r.find("local_rank"); v != r.end() && v->is_number_integer())
          ri.local_rank = v->get<int>();
        if (auto v = r.find("gpus"); v != r.end() && v->is_array())
          for (const auto& g : *v)
            if (g.is_string()) {
              std::string c = canonical_pci(g.get<std::string>());
              if (!c.empty()) ri.gpus.push_back(c);
            }
        ri.exit_code = str_of(r, "exit_code");
        job.ranks.push_back(std::move(ri));
      }
    }
    if (auto it = j.find("node_info"); it != j.end() && it->is_object()) {
      for (auto n = it->begin(); n != it->end(); ++n) {
        if (!n.value().is_object()) continue;
        NodeInfo ni;
        ni.boot_time = time_of(n.value(), "boot_time", errors);
        if (auto g = n.value().find("gpus"); g != n.value().end() && g->is_array())
          for (const auto& gpu : *g) {
            if (!gpu.is_object()) continue;
            GpuInfo gi;
            if (auto v = gpu.find("index"); v != gpu.end() && v->is_number_integer())
              gi.index = v->get<int>();
            gi.pci = canonical_pci(str_of(gpu, "pci"));
            gi.uuid = str_of(gpu, "uuid");
            ni.gpus.push_back(std::move(gi));
          }
        job.node_info.emplace(n.key(), std::move(ni));
      }
    }
    if (auto it = j.find("coverage"); it != j.end() && it->is_array()) {
      for (const auto& c : *it) {
        if (!c.is_object()) continue;
        CollectorCoverage cc;
        cc.collector = str_of(c, "collector");
        cc.node = str_of(c, "node");
        cc.status = str_of(c, "status");
        cc.detail = str_of(c, "detail");
        if (c.contains("covers_from") || c.contains("covers_until")) {
          cc.covers_from = time_of(c, "covers_from", errors);
          cc.covers_until = time_of(c, "covers_until", errors);
        }
        job.coverage.push_back(std::move(cc));
      }
    }
  } catch (const json::exception& e) {
    errors.push_back({"job.json", 0, std::string("unexpected value in job.json: ") + e.what()});
  }
  return job;
}

}  // namespace ff
