#include "agent/server/bundle_receiver.h"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <map>
#include <set>
#include <system_error>

#include "agent/metrics/agent_metrics.h"
#include "agent/server/bundle_rules.h"
#include "agent/server/durable_file.h"
#include "agent/server/upload_validation.h"
#include "common/content_digest.h"

namespace ff::agent {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

Reply error(int status, const std::string& message) {
  return {status, {{"error", message}}};
}

}  // namespace

BundleReceiver::BundleReceiver(StateLayout layout, DiagnosisStore& store, JobTracker& tracker,
                               BundleLimits limits)
    : layout_(std::move(layout)), store_(store), tracker_(tracker), limits_(limits) {}

Reply BundleReceiver::receive(const AuthDecision& writer, const std::string& meta_text,
                              const std::vector<UploadedFile>& files) {
  if (writer.status != 200) return error(writer.status, writer.error);
  UploadMeta meta;
  if (std::string problem = parse_upload_meta(meta_text, meta); !problem.empty())
    return error(400, problem);
  std::vector<std::pair<std::string_view, std::string_view>> contents;
  contents.reserve(files.size());
  for (const auto& f : files) contents.emplace_back(f.name, f.content);
  std::string digest = ff::content_digest::bundle_digest(meta_text, std::move(contents));
  std::string names = "firstfault-bundle " + meta.job_id + " " + meta.node + " " + meta.bundle_id;
  AuthDecision auth = RequestAuth::bind_payload(writer, names + " " + digest);
  if (auth.status != 200) {
    if (writer.payload.rfind(names + " ", 0) == 0)
      return error(auth.status,
                   "the bundle's bytes are not the ones the credential's digest names");
    return error(auth.status, auth.error);
  }

  // Every name and limit is checked before anything touches the disk.
  UploadCheck check = check_upload_files(meta, files, limits_);
  if (check.status != 200) return error(check.status, check.error);
  const BundleWeight& weight = check.weight;
  const std::vector<std::string>& fragment_nodes = check.fragment_nodes;

  if (resolve_attempt_) {
    int attempt = resolve_attempt_(meta, check.fragment_start_time);
    if (attempt != meta.attempt) {
      spdlog::info("bundle {}: job {} attempt {} by Slurm's records (the node said {})",
                   meta.bundle_id, meta.job_id, attempt, meta.attempt);
      meta.attempt = attempt;
    }
  }
  JobKey key{meta.job_id, meta.attempt};
  BundleRecord record;
  record.bundle_id = meta.bundle_id;
  record.job_id = meta.job_id;
  record.attempt = meta.attempt;
  record.node = meta.node;
  record.pass = meta.pass;
  record.path = StateLayout::bundle_rel(key, meta.bundle_id);
  record.bytes = static_cast<std::int64_t>(weight.bytes);
  record.lines = static_cast<std::int64_t>(weight.lines);
  record.received_at = static_cast<std::int64_t>(std::time(nullptr));
  Reply stored{201, {{"bundle_id", meta.bundle_id}, {"stored", true}}};
  Reply already{200, {{"bundle_id", meta.bundle_id}, {"stored", false}}};

  // The row makes a stored bundle count for the job: the files may be
  // there without it (the agent died, or the database was locked, between
  // the two), and then this upload completes the earlier one.
  auto record_bundle = [&]() -> Reply {
    try {
      if (!store_.add_bundle(record)) {
        if (metrics_) metrics_->bundle_duplicate();
        return already;
      }
    } catch (const StoreError& e) {
      if (!e.busy()) throw;
      spdlog::warn("bundle {}: files kept, database busy: {}", meta.bundle_id, e.what());
      return error(503, "database busy; send the bundle again later");
    }
    spdlog::info("bundle {} stored: job {} node {} pass {} ({} files, {} bytes, {} lines)",
                 meta.bundle_id, key.str(), meta.node, meta.pass, files.size(), weight.bytes,
                 weight.lines);
    if (metrics_) metrics_->bundle_received(meta.pass);
    tracker_.bundle_stored(key, meta.node, meta.pass, fragment_nodes);
    return stored;
  };

  fs::path final_dir = layout_.bundles(key) / meta.bundle_id;
  std::error_code ec;
  if (fs::exists(final_dir, ec)) return record_bundle();

  BundleTotals stored_totals = store_.bundle_totals(key.job_id, key.attempt);
  std::uint64_t job_lines = weight.lines + stored_totals.lines;
  std::uint64_t job_bytes = weight.bytes + stored_totals.bytes;
  if (job_lines > limits_.max_lines_per_job)
    return error(413, "job " + key.str() + " would hold " + std::to_string(job_lines) +
                          " lines, more than max_lines_per_job (" +
                          std::to_string(limits_.max_lines_per_job) + ")");
  if (job_bytes > limits_.max_job_bytes)
    return error(413, "job " + key.str() + " would hold " + std::to_string(job_bytes) +
                          " bytes, more than max_job_bytes (" +
                          std::to_string(limits_.max_job_bytes) + ")");
  // The merged incident is a second copy of the bundles: counted twice.
  if (std::string low = below_free_space_floor(layout_.root(), 2 * weight.bytes, floor_);
      !low.empty()) {
    spdlog::error("bundle {} of job {} refused: {}", meta.bundle_id, key.str(), low);
    return error(507, "bundle not stored: " + low + "; send it again later");
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
      if (e == ENOTEMPTY || e == EEXIST) return record_bundle();
      throw std::system_error(e, std::generic_category(), "rename to " + final_dir.string());
    }
    sync_directory(layout_.bundles(key));
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  return record_bundle();
}

}  // namespace ff::agent
