#include "agent/server/startup_recovery.h"

#include <spdlog/spdlog.h>

#include <ctime>
#include <fstream>
#include <sstream>

#include "agent/server/bundle_rules.h"

namespace ff::agent {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::vector<std::string> fragment_nodes(const fs::path& job_json) {
  std::ifstream in(job_json, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, false);
  std::vector<std::string> nodes;
  if (j.is_object() && j.contains("nodes") && j["nodes"].is_array())
    for (const auto& n : j["nodes"])
      if (n.is_string() && valid_node_name(n.get<std::string>()))
        nodes.push_back(n.get<std::string>());
  return nodes;
}

bool has_closing_pass(DiagnosisStore& store, const JobKey& key) {
  for (const auto& p : store.passes(key.job_id))
    if (p.attempt == key.attempt && (p.trigger == "final" || p.trigger == "deadline")) return true;
  return false;
}

}  // namespace

int recover_unfinished_jobs(const StateLayout& layout, DiagnosisStore& store, JobTracker& tracker,
                            std::chrono::hours recent) {
  int recovered = 0;
  std::error_code ec;
  auto cutoff = fs::file_time_type::clock::now() - recent;
  for (fs::directory_iterator job(layout.root() / "jobs", ec), end; !ec && job != end;
       job.increment(ec)) {
    std::string job_id = job->path().filename().string();
    if (!valid_job_id(job_id)) continue;
    std::error_code ec2;
    for (fs::directory_iterator att(job->path(), ec2); !ec2 && att != end; att.increment(ec2)) {
      JobKey key{job_id, 0};
      try {
        key.attempt = std::stoi(att->path().filename().string());
      } catch (const std::exception&) {
        continue;
      }
      fs::path bundles = layout.bundles(key);
      std::error_code ec3;
      if (!fs::is_directory(bundles, ec3) || fs::last_write_time(bundles, ec3) < cutoff) continue;
      try {
        if (has_closing_pass(store, key)) continue;
        auto stored = store.bundles(key.job_id, key.attempt);
        for (const auto& b : stored) {
          fs::path dir = fs::path(b.path).is_absolute() ? fs::path(b.path) : layout.root() / b.path;
          tracker.bundle_stored(key, b.node, b.pass, fragment_nodes(dir / "job.json"));
        }
        if (!stored.empty()) ++recovered;
      } catch (const std::exception& e) {
        spdlog::warn("job {}: not recovered: {}", key.str(), e.what());
      }
    }
  }
  if (recovered) spdlog::info("{} unfinished job attempt(s) taken up again", recovered);
  return recovered;
}

int recover_pending_comments(DiagnosisStore& store, PassRunner& runner,
                             const std::atomic<bool>& stop, std::chrono::hours recent) {
  auto since = static_cast<std::int64_t>(std::time(nullptr)) -
               std::chrono::duration_cast<std::chrono::seconds>(recent).count();
  int tried = 0;
  for (const auto& pass : store.passes_with_comment_pending(since)) {
    if (stop) break;
    try {
      std::string status = runner.finish_comment(pass);
      if (status.empty()) continue;  // a newer pass came meanwhile
      ++tried;
      spdlog::info("job {} pass {}: Comment left unwritten by a stopped agent: {}",
                   job_label(pass.job_id, pass.attempt), pass.pass_no, status);
    } catch (const std::exception& e) {
      spdlog::warn("job {} pass {}: Comment not written: {}", job_label(pass.job_id, pass.attempt),
                   pass.pass_no, e.what());
    }
  }
  return tried;
}

}  // namespace ff::agent
