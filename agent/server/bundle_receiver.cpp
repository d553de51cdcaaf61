#include "server/bundle_receiver.h"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <ctime>
#include <map>
#include <set>
#include <system_error>

#include "server/bundle_rules.h"
#include "server/durable_file.h"

namespace ff::agent {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

Reply error(int status, const std::string& message) {
  return {status, {{"error", message}}};
}

struct Meta {
  std::string bundle_id, job_id, node, pass;
  int attempt = 0;
};

// "" when the meta part is well formed, else the reason naming the field.
std::string parse_meta(const std::string& text, Meta& m) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return "meta: not a JSON object";
  auto text_field = [&](const char* key, std::string& to) -> bool {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return false;
    to = it->get<std::string>();
    return true;
  };
  if (!text_field("bundle_id", m.bundle_id) || !valid_bundle_id(m.bundle_id))
    return "meta: bundle_id missing or not allowed";
  if (!text_field("job_id", m.job_id) || !valid_job_id(m.job_id))
    return "meta: job_id missing or not a Slurm job id";
  if (!text_field("node", m.node) || !valid_node_name(m.node))
    return "meta: node missing or not a node name";
  if (!text_field("pass", m.pass) || (m.pass != "step" && m.pass != "epilog"))
    return "meta: pass must be \"step\" or \"epilog\"";
  auto attempt = j.find("attempt");
  if (attempt != j.end()) {
    if (!attempt->is_number_integer() || attempt->get<long long>() < 0 ||
        attempt->get<long long>() > 1000000)
      return "meta: attempt must be a non-negative integer";
    m.attempt = attempt->get<int>();
  }
  return "";
}

}  // namespace

BundleReceiver::BundleReceiver(StateLayout layout, DiagnosisStore& store, RequestAuth& auth,
                               JobTracker& tracker, BundleLimits limits)
    : layout_(std::move(layout)), store_(store), auth_(auth), tracker_(tracker), limits_(limits) {}

Reply BundleReceiver::receive(const std::string& credential, const std::string& meta_text,
                              const std::vector<UploadedFile>& files) {
  if (credential.empty()) return error(401, "no credential (header X-Firstfault-Munge)");
  Meta meta;
  if (std::string problem = parse_meta(meta_text, meta); !problem.empty())
    return error(400, problem);
  AuthDecision auth = auth_.check(
      credential, "firstfault-bundle " + meta.job_id + " " + meta.node + " " + meta.bundle_id);
  if (auth.status != 200) return error(auth.status, auth.error);

  // Every name is checked before anything touches the disk.
  if (files.size() > limits_.max_files) return error(413, "too many files");
  std::set<std::string> names;
  std::size_t total = 0;
  const UploadedFile* job_json = nullptr;
  for (const auto& f : files) {
    if (std::string problem = bundle_path_problem(f.name, meta.node); !problem.empty())
      return error(400, "file '" + f.name + "': " + problem);
    if (!names.insert(f.name).second) return error(400, "file '" + f.name + "' sent twice");
    total += f.content.size();
    if (f.name == "job.json") job_json = &f;
  }
  if (total > limits_.max_total_bytes) return error(413, "bundle too large");
  if (job_json == nullptr) return error(400, "file 'job.json' missing");
  json fragment = json::parse(job_json->content, nullptr, false);
  if (fragment.is_discarded() || !fragment.is_object())
    return error(400, "file 'job.json': not a JSON object");
  if (fragment.contains("job_id") &&
      (!fragment["job_id"].is_string() || fragment["job_id"].get<std::string>() != meta.job_id))
    return error(400, "file 'job.json': job_id differs from meta");
  std::vector<std::string> fragment_nodes;
  if (fragment.contains("nodes") && fragment["nodes"].is_array())
    for (const auto& n : fragment["nodes"])
      if (n.is_string() && valid_node_name(n.get<std::string>()))
        fragment_nodes.push_back(n.get<std::string>());

  JobKey key{meta.job_id, meta.attempt};
  BundleRecord record;
  record.bundle_id = meta.bundle_id;
  record.job_id = meta.job_id;
  record.attempt = meta.attempt;
  record.node = meta.node;
  record.pass = meta.pass;
  record.path = StateLayout::bundle_rel(key, meta.bundle_id);
  record.bytes = static_cast<std::int64_t>(total);
  record.received_at = static_cast<std::int64_t>(std::time(nullptr));
  Reply stored{201, {{"bundle_id", meta.bundle_id}, {"stored", true}}};
  Reply already{200, {{"bundle_id", meta.bundle_id}, {"stored", false}}};

  fs::path final_dir = layout_.bundles(key) / meta.bundle_id;
  std::error_code ec;
  if (fs::exists(final_dir, ec)) {
    // Stored before; the row may be missing if the agent died in between.
    store_.add_bundle(record);
    return already;
  }

  fs::path tmp = layout_.tmp() / (meta.bundle_id + "." + std::to_string(::getpid()) + "." +
                                  std::to_string(tmp_counter_++));
  try {
    fs::create_directories(tmp);
    std::set<fs::path> dirs = {tmp};
    for (const auto& f : files) {
      fs::path p = tmp / f.name;
      if (!fs::is_directory(p.parent_path())) {
        fs::create_directories(p.parent_path());
        for (fs::path d = p.parent_path(); d != tmp; d = d.parent_path()) dirs.insert(d);
      }
      write_file_synced(p, f.content);
    }
    for (const auto& d : dirs) sync_directory(d);
    create_directories_synced(layout_.bundles(key));
    if (::rename(tmp.c_str(), final_dir.c_str()) != 0) {
      int e = errno;
      fs::remove_all(tmp, ec);
      // A concurrent upload of the same bundle won the rename.
      if (e == ENOTEMPTY || e == EEXIST) {
        store_.add_bundle(record);
        return already;
      }
      throw std::system_error(e, std::generic_category(), "rename to " + final_dir.string());
    }
    sync_directory(layout_.bundles(key));
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  if (!store_.add_bundle(record)) return already;
  spdlog::info("bundle {} stored: job {} node {} pass {} ({} files, {} bytes)", meta.bundle_id,
               key.str(), meta.node, meta.pass, files.size(), total);
  tracker_.bundle_stored(key, meta.node, meta.pass, fragment_nodes);
  return stored;
}

}  // namespace ff::agent
