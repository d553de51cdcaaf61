#include "agent/server/incident_merger.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "agent/server/durable_file.h"
#include "common/node_name.h"
#include "common/user_file.h"
#include "incident/bundle_paths.h"
#include "incident/coverage.h"
#include "incident/job_json.h"
#include "incident/node_file_kind.h"

namespace ff::agent {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The collector's stamp at the end of bundle_id, compared as a number of any
// length: leading zeros dropped, shorter is smaller.
std::string trailing_stamp(const std::string& id) {
  std::size_t end = id.size();
  std::size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(id[begin - 1]))) --begin;
  std::string digits = id.substr(begin, end - begin);
  auto nz = digits.find_first_not_of('0');
  return nz == std::string::npos ? "" : digits.substr(nz);
}

auto order_key(const BundleRecord& b) {
  std::string stamp = trailing_stamp(b.bundle_id);
  return std::make_tuple(b.pass == "epilog" ? 1 : 0, stamp.size(), stamp, b.bundle_id);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string str_field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// Bundle files are never modified after they are stored, so a hard link is
// a copy that costs nothing; a copy is the fallback across file systems.
void link_or_copy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_hard_link(from, to, ec);
  if (ec) fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

// The job's output as the agent itself reads it, from the StdOut/StdErr
// path Slurm names, when no bundle carried it. The agent runs as SlurmUser
// and the path is the job's user's to choose: only a regular file of the
// job's uid, no final symlink, at most `max` bytes (the last ones: the end of
// a job's output holds the failure). What was not read is said in coverage.
std::optional<Coverage> copy_job_output(const std::string& path, int uid, const fs::path& to,
                                        std::size_t max) {
  const std::string shown = ff::printable_path(path);
  Coverage coverage;
  coverage.collector = "app";
  coverage.status = CoverageStatus::kError;
  coverage.lines = 0;
  std::optional<uid_t> owner;
  if (uid >= 0) owner = static_cast<uid_t>(uid);
  ff::UserFileOpen in = ff::open_user_file(path, owner);
  if (in.outcome != ff::UserFileOpen::Outcome::opened) {
    // Not there on the head node: the compute nodes' bundles cover it.
    if (in.outcome == ff::UserFileOpen::Outcome::missing) return std::nullopt;
    coverage.detail = "agent: " + shown + ": " + in.problem + ": not read";
    return coverage;
  }
  ff::FileHandle out(
      ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640));
  std::uint64_t from = ff::tail_start(in.st, max);
  std::optional<std::uint64_t> copied;
  if (out) copied = ff::copy_bounded(in.file.get(), out.get(), from, max);
  if (!copied) {
    coverage.detail = "agent: " + shown + ": cannot copy to " + to.string();
    return coverage;
  }
  auto size = static_cast<std::uint64_t>(std::max<off_t>(in.st.st_size, 0));
  coverage.status = from > 0  ? CoverageStatus::kTruncated
                    : *copied ? CoverageStatus::kOk
                              : CoverageStatus::kEmpty;
  coverage.detail =
      "agent: " + shown +
      (from > 0 ? ": the last " + std::to_string(*copied) + " of " + std::to_string(size) + " bytes"
                : "") +
      "; kept as app/" + to.filename().string();
  return coverage;
}

std::vector<std::string> regular_files(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec)) names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Swaps the new incident in with one rename, so a reader never sees a
// half-built one; falls back to remove+rename where RENAME_EXCHANGE is
// unsupported.
void swap_in(const fs::path& fresh, const fs::path& target) {
  std::error_code ec;
  if (fs::exists(target, ec)) {
    if (::renameat2(AT_FDCWD, fresh.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
      fs::remove_all(fresh, ec);
      return;
    }
    fs::remove_all(target, ec);
  }
  fs::rename(fresh, target);
}

}  // namespace

bool node_name_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    bool da = std::isdigit(static_cast<unsigned char>(a[i]));
    bool db = std::isdigit(static_cast<unsigned char>(b[j]));
    if (da && db) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      std::string na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      na.erase(0, std::min(na.find_first_not_of('0'), na.size()));
      nb.erase(0, std::min(nb.find_first_not_of('0'), nb.size()));
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;
}

std::string exit_code_from_wait_status(int status) {
  if (WIFSIGNALED(status)) return "0:" + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status)) return std::to_string(WEXITSTATUS(status)) + ":0";
  return "0:0";
}

std::vector<BundleRecord> merge_order(std::vector<BundleRecord> bundles) {
  std::sort(bundles.begin(), bundles.end(), [](const BundleRecord& a, const BundleRecord& b) {
    return order_key(a) < order_key(b);
  });
  return bundles;
}

namespace {
const std::set<std::string> kMerged = {"nodes",    "ranks", "node_info", "coverage", "start_time",
                                       "end_time", "state", "exit_code", "job_id",   "attempt"};
}  // namespace

JobJsonMerge::JobJsonMerge(const std::vector<BundleRecord>& bundles) : bundles_(bundles) {
  for (std::size_t i = 0; i < bundles_.size(); ++i) winner_[bundles_[i].node] = i;
}

void JobJsonMerge::add(std::size_t i, const json& f) {
  if (i >= bundles_.size() || !f.is_object()) return;
  for (auto it = f.begin(); it != f.end(); ++it)
    if (!kMerged.count(it.key())) job_[it.key()] = it.value();
  if (auto it = f.find("nodes"); it != f.end() && it->is_array() && *it != last_nodes_) {
    for (const auto& n : *it)
      if (n.is_string()) nodes_.insert(n.get<std::string>());
    last_nodes_ = *it;
  }
  if (auto it = f.find("ranks"); it != f.end() && it->is_array())
    for (const auto& r : *it)
      if (r.is_object() && r.contains("rank") && r["rank"].is_number_integer())
        ranks_[r["rank"].get<long long>()] = r;
  if (auto it = f.find("node_info"); it != f.end() && it->is_object())
    for (auto n = it->begin(); n != it->end(); ++n) {
      node_info_[n.key()] = n.value();
      // A node's own winning bundle has the last word on its node_info.
      if (auto w = winner_.find(n.key()); w != winner_.end() && w->second == i)
        own_node_info_[n.key()] = n.value();
    }
  // A node's own entries come from its winning bundle. A bundle may hold
  // several entries of one collector (the job's stdout and its stderr): all
  // are kept, so an output refused beside one read is still said.
  if (auto it = f.find("coverage"); it != f.end() && it->is_array())
    for (const auto& c : *it) {
      if (!c.is_object()) continue;
      std::string node = str_field(c, "node");
      auto w = winner_.find(node);
      if (w != winner_.end() && w->second != i) continue;
      auto& [from, entries] = coverage_[{node, str_field(c, "collector")}];
      if (from != i) entries.clear();
      from = i;
      entries.push_back(c);
    }
  std::string s = str_field(f, "start_time");
  if (!s.empty() && (start_time_.empty() || s < start_time_)) start_time_ = s;
  std::string e = str_field(f, "end_time");
  if (!e.empty() && e > end_time_) end_time_ = e;
  if (!str_field(f, "state").empty()) state_ = str_field(f, "state");
  if (!str_field(f, "exit_code").empty()) exit_code_ = str_field(f, "exit_code");
}

json JobJsonMerge::finish(const JobKey& key, const MergeFacts& facts) {
  json job = std::move(job_);
  for (auto& [node, info] : own_node_info_) node_info_[node] = std::move(info);

  if (!job.contains("schema")) job["schema"] = kIncidentSchema;
  job["job_id"] = key.job_id;
  job["attempt"] = key.attempt;
  const SlurmJob* slurm = facts.slurm ? &*facts.slurm : nullptr;
  if (slurm && !slurm->nodes.empty()) {
    job["nodes"] = slurm->nodes;
  } else {
    for (const auto& b : bundles_) nodes_.insert(b.node);
    std::vector<std::string> nodes(nodes_.begin(), nodes_.end());
    std::sort(nodes.begin(), nodes.end(), node_name_less);
    job["nodes"] = std::move(nodes);
  }
  json rank_list = json::array();
  for (auto& [_, r] : ranks_) rank_list.push_back(std::move(r));
  job["ranks"] = std::move(rank_list);
  job["node_info"] = std::move(node_info_);
  // Sorted by (node, collector, text); the text of each entry is made once.
  std::vector<std::tuple<std::string, std::string, std::string, json>> keyed;
  for (auto& [_, from_entries] : coverage_)
    for (auto& c : from_entries.second)
      keyed.emplace_back(str_field(c, "node"), str_field(c, "collector"), c.dump(), std::move(c));
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a)) <
           std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b));
  });
  json coverage_list = json::array();
  for (auto& k : keyed) coverage_list.push_back(std::move(std::get<3>(k)));
  job["coverage"] = std::move(coverage_list);

  std::string start_time = start_time_, end_time = end_time_, state = state_,
              exit_code = exit_code_;
  bool ended = slurm && !slurm->running() && !slurm->state.empty();
  if (slurm && !slurm->start_time.empty() && (start_time.empty() || slurm->start_time < start_time))
    start_time = slurm->start_time;
  if (ended && !slurm->end_time.empty() && slurm->end_time > end_time) end_time = slurm->end_time;
  if (!facts.state_override.empty()) {
    state = facts.state_override;
    exit_code = facts.exit_code_override.empty() ? exit_code : facts.exit_code_override;
  } else if (ended) {
    state = slurm->state;
    if (!slurm->exit_code.empty()) exit_code = slurm->exit_code;
  } else if (facts.accounting && facts.accounting->ended() && !facts.accounting->state.empty()) {
    state = facts.accounting->state;
    if (!facts.accounting->exit_code.empty()) exit_code = facts.accounting->exit_code;
    if (facts.accounting->end_time > end_time) end_time = facts.accounting->end_time;
    if (start_time.empty()) start_time = facts.accounting->start_time;
  }
  if (!start_time.empty()) job["start_time"] = start_time;
  if (!end_time.empty()) job["end_time"] = end_time;
  if (!state.empty()) job["state"] = state;
  if (!exit_code.empty()) job["exit_code"] = exit_code;
  return job;
}

MergeResult rebuild_incident(const StateLayout& layout, const JobKey& key,
                             const std::vector<BundleRecord>& stored, const MergeFacts& facts) {
  MergeResult result;
  std::vector<BundleRecord> bundles = merge_order(stored);
  auto bundle_dir = [&](const BundleRecord& b) {
    fs::path p = b.path;
    return p.is_absolute() ? p : layout.root() / p;
  };

  // One fragment parsed at a time (see JobJsonMerge).
  JobJsonMerge merge(bundles);
  for (std::size_t i = 0; i < bundles.size(); ++i) {
    const BundleRecord& b = bundles[i];
    json f = json::parse(read_text(bundle_dir(b) / "job.json"), nullptr, false);
    if (f.is_discarded() || !f.is_object()) {
      result.problems.push_back("bundle " + b.bundle_id + ": job.json unreadable");
      continue;
    }
    merge.add(i, f);
  }
  result.job = merge.finish(key, facts);

  fs::path fresh = layout.job(key) / "incident.new";
  std::error_code ec;
  fs::remove_all(fresh, ec);
  fs::create_directories(fresh);

  // Node files: the winning bundle of each node (the last in merge order).
  std::map<std::string, const BundleRecord*> winner;
  for (const auto& b : bundles) winner[b.node] = &b;
  for (const auto& [node, b] : winner) {
    // Checked on upload and on recovery; checked again where it becomes a
    // directory, whatever filled the store.
    if (!ff::valid_node_name(node)) {
      result.problems.push_back("bundle " + b->bundle_id + ": not a node name, its files skipped");
      continue;
    }
    fs::path from = bundle_dir(*b) / "nodes" / node;
    auto names = regular_files(from);
    // The node's flight-recorder dumps come from the same bundle as its
    // logs: one collection of the node, never two mixed.
    const fs::path dumps_from = from / std::string(ff::kFlightRecorderDir);
    std::vector<std::string> dumps;
    for (const auto& name : regular_files(dumps_from))
      if (ff::flight_recorder_rank(name)) dumps.push_back(name);
    if (names.empty() && dumps.empty()) continue;
    fs::create_directories(fresh / "nodes" / node);
    for (const auto& name : names) link_or_copy(from / name, fresh / "nodes" / node / name);
    if (dumps.empty()) continue;
    const fs::path dumps_to = fresh / "nodes" / node / std::string(ff::kFlightRecorderDir);
    fs::create_directories(dumps_to);
    for (const auto& name : dumps) link_or_copy(dumps_from / name, dumps_to / name);
  }
  // app/: the union, the later bundle winning a name.
  std::map<std::string, fs::path> app;
  for (const auto& b : bundles)
    for (const auto& name : regular_files(bundle_dir(b) / "app"))
      app[name] = bundle_dir(b) / "app" / name;
  if (!app.empty() || facts.add_job_output) fs::create_directories(fresh / "app");
  for (const auto& [name, from] : app) link_or_copy(from, fresh / "app" / name);
  // The job's own output, when Slurm names it and the head node can read it
  // (a shared file system); a bundle's copy is preferred. The name is the one
  // a collector gives the same path, so that copy is recognised.
  if (facts.add_job_output && facts.slurm) {
    std::set<std::string> names;
    for (const auto& [name, _] : app) names.insert(name);
    std::set<std::string> tried;
    const char* fallback = "stdout";
    for (const std::string& out : {facts.slurm->std_out, facts.slurm->std_err}) {
      std::string base = ff::app_file_name_for(out, fallback);
      fallback = "stderr";
      if (out.empty() || out[0] != '/' || !tried.insert(out).second || app.count(base)) continue;
      std::string name = ff::unique_app_file_name(base, names);
      std::optional<Coverage> coverage =
          copy_job_output(out, facts.slurm->uid, fresh / "app" / name, facts.max_job_output_bytes);
      if (!coverage) continue;
      if (coverage->status == CoverageStatus::kError) {
        fs::remove(fresh / "app" / name, ec);
        result.problems.push_back(coverage->detail);
      } else {
        app[name] = out;
      }
      result.job["coverage"].push_back(to_json(*coverage));
    }
  }
  if (app.empty()) fs::remove(fresh / "app", ec);

  std::ofstream(fresh / "job.json", std::ios::binary | std::ios::trunc)
      << job_json_text(result.job);
  swap_in(fresh, layout.incident(key));
  return result;
}

}  // namespace ff::agent
