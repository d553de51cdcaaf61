#include "incident/job_json.h"

#include <cctype>
#include <optional>
#include <unordered_set>

#include "incident/json_fields.h"

namespace ff {
namespace {

using nlohmann::json;

std::string str_of(const json& j, const char* key) {
  return json_fields::text(j, key);
}

MaybeTime time_of(const json& j, const char* key, std::vector<ErrorItem>& errors) {
  return json_fields::time(j, key, "job.json", errors);
}

std::string count_of(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// What job.json says that cannot all be right: reported, and resolved so
// the evidence is still judged (docs/spec/incident.md, "Inconsistent job.json").
// `nodes_listed`: how many entries job.json's 'nodes' list had (none: no list).
void check_consistency(JobInfo& job, std::optional<std::size_t> nodes_listed,
                       std::vector<ErrorItem>& errors) {
  if (nodes_listed && *nodes_listed > job.nodes.size())
    errors.push_back({"job.json", 0,
                      "'nodes': " + count_of(*nodes_listed - job.nodes.size(), "entry", "entries") +
                          " ignored (not a node name, or named twice)"});
  if (nodes_listed && job.nodes.empty())
    errors.push_back({"job.json", 0,
                      std::string(*nodes_listed == 0 ? "job.json lists no nodes (\"nodes\": [])"
                                                     : "job.json names no node in 'nodes'") +
                          "; nodes taken from nodes/"});

  // Sets, not JobInfo::has_node: a job of 4,096 nodes has 32,768 ranks. One
  // error per kind of fault, naming the first: a job.json of a million
  // repeated ranks does not become a million errors.
  const std::unordered_set<std::string> listed(job.nodes.begin(), job.nodes.end());
  std::unordered_set<int> seen_ranks;
  std::size_t without_rank = 0, repeated = 0, outside = 0;
  std::string first_repeated, first_outside;
  std::vector<RankInfo> kept;
  for (auto& r : job.ranks) {
    std::string name = r.rank < 0 ? std::string("(no number)") : std::to_string(r.rank);
    if (r.rank < 0) {
      ++without_rank;
    } else if (!seen_ranks.insert(r.rank).second) {
      if (!repeated++) first_repeated = name;
      continue;
    }
    if (!job.nodes.empty() && !r.node.empty() && !listed.count(r.node) && !outside++)
      first_outside = "rank " + name + " is placed on node " + r.node;
    kept.push_back(std::move(r));
  }
  job.ranks = std::move(kept);
  if (repeated)
    errors.push_back(
        {"job.json", 0,
         "rank " + first_repeated + " appears more than once in 'ranks'" +
             (repeated > 1 ? " (" + count_of(repeated, "repeat", "repeats") + " in all)" : "") +
             ": the first entry of a rank is used"});
  if (outside)
    errors.push_back(
        {"job.json", 0,
         first_outside + ", which is not in 'nodes'" +
             (outside > 1 ? " (" + count_of(outside, "rank", "ranks") + " in all)" : "") +
             ": events there are not the job's"});
  if (without_rank)
    errors.push_back({"job.json", 0,
                      "'ranks': " + count_of(without_rank, "entry", "entries") +
                          " without an integer rank (the GPUs listed there belong to no rank)"});

  if (job.start_time && job.end_time && *job.start_time > *job.end_time)
    errors.push_back({"job.json", 0,
                      "start_time " + format_time(*job.start_time) + " is after end_time " +
                          format_time(*job.end_time) +
                          ": one of them is wrong, so no job window is applied (every event is "
                          "judged; the times still date yearless timestamps)"});
}

}  // namespace

JobInfo parse_job_json(const std::string& text, std::vector<ErrorItem>& errors) {
  JobInfo job;
  json j;
  try {
    j = json::parse(text);
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
    std::optional<std::size_t> nodes_listed;
    if (auto it = j.find("nodes"); it != j.end() && it->is_array()) {
      nodes_listed = it->size();
      std::unordered_set<std::string> seen;
      for (const auto& n : *it)
        if (n.is_string() && !n.get_ref<const std::string&>().empty() &&
            seen.insert(n.get<std::string>()).second)
          job.nodes.push_back(n.get<std::string>());
    } else {
      errors.push_back({"job.json", 0, "job.json has no 'nodes' list; nodes taken from nodes/"});
    }
    auto ranks = j.find("ranks");
    job.ranks_known = ranks != j.end() && ranks->is_array();
    if (job.ranks_known) {
      for (const auto& r : *ranks) {
        if (!r.is_object()) continue;
        RankInfo ri;
        if (auto v = r.find("rank"); v != r.end() && v->is_number_integer())
          ri.rank = v->get<int>();
        ri.node = str_of(r, "node");
        if (auto v = r.find("local_rank"); v != r.end() && v->is_number_integer())
          ri.local_rank = v->get<int>();
        auto gpus = r.find("gpus");
        ri.gpus_known = gpus != r.end() && gpus->is_array();
        if (ri.gpus_known)
          for (const auto& g : *gpus)
            if (g.is_string()) {
              std::string c = canonical_pci(g.get<std::string>());
              if (!c.empty()) ri.gpus.push_back(c);
            }
        ri.exit_code = str_of(r, "exit_code");
        if (auto v = r.find("pid");
            v != r.end() && v->is_number_integer() && v->get<std::int64_t>() > 0)
          ri.pid = v->get<std::int64_t>();
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
      for (const auto& c : *it)
        if (c.is_object()) job.coverage.push_back(coverage_from_json(c, errors));
    }
    check_consistency(job, nodes_listed, errors);
  } catch (const json::exception& e) {
    errors.push_back({"job.json", 0, std::string("unexpected value in job.json: ") + e.what()});
  }
  return job;
}

nlohmann::json to_json(const JobInfo& job) {
  json j = json::object();
  if (!job.schema.empty()) j["schema"] = job.schema;
  if (!job.cluster.empty()) j["cluster"] = job.cluster;
  j["job_id"] = job.job_id;
  j["attempt"] = job.attempt;
  if (!job.state.empty()) j["state"] = job.state;
  if (!job.exit_code.empty()) j["exit_code"] = job.exit_code;
  if (job.start_time) j["start_time"] = format_time(*job.start_time);
  if (job.end_time) j["end_time"] = format_time(*job.end_time);
  if (!job.timezone.empty()) j["timezone"] = job.timezone;
  j["nodes"] = job.nodes;
  if (job.ranks_known) {
    json ranks = json::array();
    for (const auto& r : job.ranks) {
      json rank = {{"rank", r.rank}, {"node", r.node}};
      if (r.local_rank >= 0) rank["local_rank"] = r.local_rank;
      if (r.gpus_known) rank["gpus"] = r.gpus;
      if (!r.exit_code.empty()) rank["exit_code"] = r.exit_code;
      if (r.pid > 0) rank["pid"] = r.pid;
      ranks.push_back(std::move(rank));
    }
    j["ranks"] = std::move(ranks);
  }
  if (!job.node_info.empty()) {
    json info = json::object();
    for (const auto& [node, ni] : job.node_info) {
      json n = json::object();
      if (ni.boot_time) n["boot_time"] = format_time(*ni.boot_time);
      if (!ni.gpus.empty()) {
        json gpus = json::array();
        for (const auto& g : ni.gpus) {
          json gpu = {{"index", g.index}};
          if (!g.pci.empty()) gpu["pci"] = g.pci;
          if (!g.uuid.empty()) gpu["uuid"] = g.uuid;
          gpus.push_back(std::move(gpu));
        }
        n["gpus"] = std::move(gpus);
      }
      info[node] = std::move(n);
    }
    j["node_info"] = std::move(info);
  }
  json coverage = json::array();
  for (const auto& c : job.coverage) coverage.push_back(to_json(c));
  j["coverage"] = std::move(coverage);
  return j;
}

std::string job_json_text(const nlohmann::json& job, InvalidUtf8 invalid) {
  return job.dump(2, ' ', false,
                  invalid == InvalidUtf8::kReplace ? json::error_handler_t::replace
                                                   : json::error_handler_t::strict) +
         "\n";
}

}  // namespace ff
