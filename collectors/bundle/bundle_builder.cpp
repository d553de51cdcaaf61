#include "collectors/bundle/bundle_builder.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>

#include "collectors/bundle/size_limit.h"
#include "collectors/sources/app_output.h"
#include "collectors/sources/flight_recorder_files.h"
#include "collectors/sources/log_collector.h"
#include "collectors/sources/node_facts.h"
#include "collectors/spool/job_records.h"
#include "collectors/window/job_window.h"
#include "common/hostlist.h"
#include "incident/bundle_paths.h"
#include "incident/job_json.h"
#include "incident/time/timestamp_parser.h"

namespace ff::collect {
namespace {

std::vector<std::string> job_nodes(const CollectRequest& request,
                                   const std::vector<AllocRecord>& allocs) {
  std::vector<std::string> lists;
  if (!request.nodelist.empty()) lists.push_back(request.nodelist);
  for (const auto& a : allocs)
    if (!a.nodelist.empty()) lists.push_back(a.nodelist);
  std::vector<std::string> nodes;
  for (const auto& list : lists) {
    try {
      nodes = expand_hostlist(list);
      break;
    } catch (const std::exception& e) {
      spdlog::warn("job {}: {}", request.job_id, e.what());
    }
  }
  if (std::find(nodes.begin(), nodes.end(), request.node) == nodes.end())
    nodes.push_back(request.node);
  return nodes;
}

// The GPUs of this node: from the driver when it is loaded, else what the
// rank records say (index and PCI id side by side).
std::vector<GpuInfo> node_gpus(const std::vector<RankRecord>& ranks) {
  std::vector<GpuInfo> gpus = nvidia_gpus();
  if (!gpus.empty()) return gpus;
  std::set<std::string> seen;
  for (const auto& r : ranks) {
    for (std::size_t i = 0; i < r.gpus.size(); ++i) {
      if (!seen.insert(r.gpus[i]).second) continue;
      GpuInfo gpu;
      try {
        gpu.index = std::stoi(r.gpus[i]);
      } catch (const std::exception&) {
        continue;
      }
      if (i < r.gpu_pci.size()) gpu.pci = r.gpu_pci[i];
      gpus.push_back(gpu);
    }
  }
  std::sort(gpus.begin(), gpus.end(),
            [](const GpuInfo& a, const GpuInfo& b) { return a.index < b.index; });
  return gpus;
}

bool job_succeeded(const CollectRequest& request, const std::vector<RankRecord>& ranks) {
  if (!request.exit_code || *request.exit_code != "0:0") return false;
  if (request.derived_ec && *request.derived_ec != 0) return false;
  return std::none_of(ranks.begin(), ranks.end(), [](const RankRecord& r) { return r.failed(); });
}

TimeContext time_context(const std::string& zone_name, const TimeWindow& window, MaybeTime boot) {
  TimeContext ctx;
  try {
    ctx.zone = find_zone(zone_name);
  } catch (const std::exception& e) {
    spdlog::warn("{}; log times without a zone are read as UTC", e.what());
  }
  ctx.reference = window.begin;  // yearless syslog times take the window's year
  ctx.boot_time = boot;
  return ctx;
}

}  // namespace

TimeUs wall_clock_now() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

BuiltBundle build_bundle(const NodeConfig& config, const CollectRequest& request) {
  SpoolLayout spool{config.spool};
  JobRecords records = read_job_records(spool, request.job_id);
  for (const auto& p : records.problems) spdlog::warn("job {}: {}", request.job_id, p);

  BuiltBundle built;
  JobFragment& job = built.job;
  job.job_id = request.job_id;
  job.node = request.node;
  if (request.attempt) {
    job.attempt = *request.attempt;
  } else {
    for (const auto& a : records.allocs) job.attempt = std::max(job.attempt, a.restart_count);
  }
  // A requeued job reuses its spool directory: only this attempt's allocations date it.
  std::vector<AllocRecord> allocs;
  for (const auto& a : records.allocs)
    if (a.restart_count == job.attempt) allocs.push_back(a);
  if (allocs.empty()) allocs = records.allocs;

  TimeUs now = request.now ? request.now : wall_clock_now();
  JobWindow jw = job_window(allocs, now, config);
  job.start_time = jw.job_start;
  if (request.pass == "epilog") job.end_time = now;
  job.exit_code = request.exit_code;
  job.nodes = job_nodes(request, allocs);
  job.ranks = select_rank_records(records.ranks);
  job.timezone = config.timezone.empty() ? local_timezone() : config.timezone;
  job.boot_time = boot_time();
  job.gpus = node_gpus(job.ranks);

  BundleMeta meta;
  meta.bundle_id = make_bundle_id(request.node, request.job_id, request.pass);
  meta.job_id = request.job_id;
  meta.attempt = job.attempt;
  meta.node = request.node;
  meta.pass = request.pass;
  meta.created = wall_clock_now();  // not `now`: retries give up by the real clock

  Outbox outbox(spool.outbox());
  std::filesystem::path root = outbox.stage(meta);
  try {
    built.logs_skipped =
        request.pass == "epilog" && !config.collect_on_success && job_succeeded(request, job.ranks);
    std::vector<BundleFile> files;
    if (!built.logs_skipped) {
      TimeContext ctx = time_context(job.timezone, jw.window, job.boot_time);
      for (const auto& source : config.sources) {
        LogCollection c = collect_log_kind(source, request.node, jw.window, ctx, root);
        built.bytes_read += c.bytes_read;
        job.coverage.push_back(c.coverage);
        files.insert(files.end(), c.files.begin(), c.files.end());
      }
      std::set<std::string> seen;
      // Each output gets an app/ name the agent accepts, whatever the user
      // called the file ("train run.out", ".x", two "out" in two
      // directories): one refused name would get the whole bundle, kernel
      // log included, refused.
      std::set<std::string> app_names;
      for (std::size_t i = 0; i < request.outputs.size(); ++i) {
        const std::string& raw = request.outputs[i];
        if (raw.empty()) continue;
        std::string path = expand_output_path(raw, request.job_id, request.node);
        if (!seen.insert(path).second) continue;
        std::string name = unique_app_file_name(app_file_name_for(path, i == 0   ? "stdout"
                                                                        : i == 1 ? "stderr"
                                                                                 : "output"),
                                                app_names);
        AppOutputCopy copy = copy_app_output(path, name, request.node, root, config.app_max_bytes,
                                             request.owner_uid);
        job.coverage.push_back(copy.coverage);
        if (!copy.file.rel.empty()) files.push_back(copy.file);
      }
      // Dumps are whole or absent (a cut pickle loses its newest entries,
      // the ones a hang is read from), so they get at most half the bundle:
      // the logs, which can be cut, keep the rest.
      FlightRecorderSettings fr;
      fr.pattern = config.flight_recorder;
      fr.max_bytes = config.flight_recorder_max_bytes;
      fr.max_files = static_cast<std::size_t>(config.flight_recorder_max_files);
      fr.max_total_bytes = config.max_bundle_bytes / 2;
      std::optional<std::set<int>> node_ranks;
      for (const auto& r : job.ranks)
        if (r.rank >= 0) (node_ranks ? *node_ranks : node_ranks.emplace()).insert(r.rank);
      FlightRecorderGather dumps = gather_flight_recorder(fr, request.job_id, request.node,
                                                          request.owner_uid, node_ranks, root);
      if (dumps.coverage) job.coverage.push_back(*dumps.coverage);
      files.insert(files.end(), dumps.files.begin(), dumps.files.end());
      for (const auto& collector : fit_to_size(root, files, config.max_bundle_bytes)) {
        for (auto& c : job.coverage) {
          if (c.collector != collector) continue;
          c.status = CoverageStatus::kTruncated;
          c.detail += "; oldest lines cut to fit max_bundle_bytes";
        }
      }
    }
    std::ofstream out(root / "job.json");
    out << job_json_text(to_json(job));
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + (root / "job.json").string());
    out.close();
    built.entry = outbox.commit(meta);
  } catch (...) {
    outbox.discard(meta);
    throw;
  }
  return built;
}

}  // namespace ff::collect
