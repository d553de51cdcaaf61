#include "collectors/spool/job_records.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>

namespace ff::collect {
namespace {

std::string text_of(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

int int_of(const nlohmann::json& j, const char* key, int fallback) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (it->is_number_integer()) return it->get<int>();
  if (it->is_string()) {
    try {
      return std::stoi(it->get<std::string>());
    } catch (const std::exception&) {
    }
  }
  return fallback;
}

std::vector<std::string> strings_of(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& v : *it) out.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

AllocRecord alloc_from(const nlohmann::json& j) {
  AllocRecord r;
  r.step = text_of(j, "step");
  r.node = text_of(j, "node");
  r.nodelist = text_of(j, "nodelist");
  r.cuda_visible_devices = text_of(j, "cuda_visible_devices");
  r.restart_count = int_of(j, "restart_count", 0);
  r.start_time = parse_iso8601_utc(text_of(j, "start_time"));
  return r;
}

RankRecord rank_from(const nlohmann::json& j) {
  RankRecord r;
  r.step = text_of(j, "step");
  r.node = text_of(j, "node");
  r.rank = int_of(j, "rank", -1);
  r.local_rank = int_of(j, "local_rank", -1);
  r.gpus = strings_of(j, "gpus");
  r.gpu_pci = strings_of(j, "gpu_pci");
  if (j.contains("exit_status") && j["exit_status"].is_number_integer())
    r.exit_status = j["exit_status"].get<int>();
  r.exit_code = text_of(j, "exit_code");
  if (j.contains("pid") && j["pid"].is_number_integer() && j["pid"].get<std::int64_t>() > 0)
    r.pid = j["pid"].get<std::int64_t>();
  return r;
}

}  // namespace

int step_order(const std::string& step) {
  if (step == "batch") return -3;
  if (step == "extern") return -2;
  if (step == "interactive") return -1;
  try {
    return std::stoi(step);
  } catch (const std::exception&) {
    return -4;
  }
}

JobRecords read_job_records(const SpoolLayout& spool, const std::string& job_id) {
  JobRecords records;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (std::filesystem::directory_iterator it(spool.job(job_id), ec), end; !ec && it != end;
       it.increment(ec))
    files.push_back(it->path());
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::string name = path.filename().string();
    bool alloc = name.rfind("alloc-", 0) == 0;
    bool rank = name.rfind("rank-", 0) == 0;
    if ((!alloc && !rank) || path.extension() != ".json") continue;  // temporaries too
    std::ifstream in(path);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      records.problems.push_back(path.string() + ": not a JSON object");
      continue;
    }
    if (alloc)
      records.allocs.push_back(alloc_from(j));
    else
      records.ranks.push_back(rank_from(j));
  }
  return records;
}

std::vector<RankRecord> select_rank_records(const std::vector<RankRecord>& records) {
  std::map<int, const RankRecord*> chosen;
  auto better = [](const RankRecord& a, const RankRecord& b) {  // is a preferred to b?
    if (a.failed() != b.failed()) return a.failed();
    return step_order(a.step) > step_order(b.step);
  };
  for (const auto& r : records) {
    if (r.rank < 0) continue;
    auto [it, inserted] = chosen.emplace(r.rank, &r);
    if (!inserted && better(r, *it->second)) it->second = &r;
  }
  std::vector<RankRecord> out;
  for (const auto& [rank, r] : chosen) out.push_back(*r);
  return out;
}

}  // namespace ff::collect
