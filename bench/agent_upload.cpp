// ff_bench_agent_upload: plays the compute nodes of one large job against a running agent.
//
//   ff_bench_agent_upload --agent http://127.0.0.1:7421 --incident DIR --job-id ID
//                         [--concurrency 64] [--timeout-s 600]
//
// DIR is an incident directory (bench/ff_bench_gen writes one). Every nodes/<node>/ becomes one
// Epilog bundle, uploaded as the collector does (docs/slurm-path.md section 4: multipart, a munge
// credential per bundle), from --concurrency threads at once. Then it polls the agent until the
// job's diagnosis is stored and prints, as key=value lines:
//   bundles, bytes, rejected, retried (sent again after a transport error),
//   upload_s (first request to last reply),
//   diagnosis_after_last_upload_s (last upload reply to the diagnosis being readable),
//   verdict.
// A benchmark, not a test: bench/agent_run.sh runs it and prints the figures beside a baseline.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "common/content_digest.h"
#include "common/munge_credential.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr int kRetries = 5;

namespace {

struct Options {
  std::string agent = "http://127.0.0.1:7421";
  fs::path incident;
  std::string job_id;
  int concurrency = 64;
  int timeout_s = 600;
};

[[noreturn]] void usage(int code) {
  std::fprintf(code == 0 ? stdout : stderr,
               "usage: ff_bench_agent_upload --incident DIR --job-id ID [--agent URL]\n"
               "                             [--concurrency N] [--timeout-s S]\n");
  std::exit(code);
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(64);
      return argv[++i];
    };
    if (a == "-h" || a == "--help")
      usage(0);
    else if (a == "--agent")
      o.agent = value();
    else if (a == "--incident")
      o.incident = value();
    else if (a == "--job-id")
      o.job_id = value();
    else if (a == "--concurrency")
      o.concurrency = std::stoi(value());
    else if (a == "--timeout-s")
      o.timeout_s = std::stoi(value());
    else
      usage(64);
  }
  if (o.incident.empty() || o.job_id.empty() || o.concurrency < 1) usage(64);
  return o;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// One node's bundle: its job.json fragment and its log files.
struct Bundle {
  std::string node;
  std::string bundle_id;
  httplib::MultipartFormDataItems items;
  std::size_t bytes = 0;
  std::string digest;  // of meta and files, as the collector's credential names it
};

// The incident's job.json split by node once: what a node's collector writes is the job-wide
// part plus that node's own ranks, node_info and coverage entries.
struct JobByNode {
  nlohmann::json common;  // without ranks, node_info, coverage
  std::map<std::string, nlohmann::json> ranks, node_info, coverage;
};

JobByNode split_job(const nlohmann::json& job) {
  JobByNode s;
  s.common = job;
  s.common.erase("ranks");
  s.common.erase("node_info");
  s.common.erase("coverage");
  for (const auto& r : job.value("ranks", nlohmann::json::array()))
    s.ranks[r.value("node", "")].push_back(r);
  if (job.contains("node_info") && job["node_info"].is_object())
    for (auto it = job["node_info"].begin(); it != job["node_info"].end(); ++it)
      s.node_info[it.key()][it.key()] = it.value();
  for (const auto& c : job.value("coverage", nlohmann::json::array()))
    s.coverage[c.value("node", "")].push_back(c);
  return s;
}

nlohmann::json for_node(const std::map<std::string, nlohmann::json>& m, const std::string& node,
                        nlohmann::json empty) {
  auto it = m.find(node);
  return it == m.end() ? empty : it->second;
}

Bundle make_bundle(const Options& o, const JobByNode& job, const std::string& node, bool with_app) {
  Bundle b;
  b.node = node;
  b.bundle_id = node + "-" + o.job_id + "-epilog-1";
  nlohmann::json fragment = job.common;
  fragment["job_id"] = o.job_id;
  fragment["ranks"] = for_node(job.ranks, node, nlohmann::json::array());
  fragment["node_info"] = for_node(job.node_info, node, nlohmann::json::object());
  fragment["coverage"] = for_node(job.coverage, node, nlohmann::json::array());

  nlohmann::json meta = {{"bundle_id", b.bundle_id},
                         {"job_id", o.job_id},
                         {"attempt", 0},
                         {"node", node},
                         {"pass", "epilog"}};
  b.items.push_back({"meta", meta.dump(), "", "application/json"});
  std::string job_text = fragment.dump();
  b.bytes += job_text.size();
  b.items.push_back({"file", job_text, "job.json", "application/json"});
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(o.incident / "nodes" / node))
    if (e.is_regular_file()) files.push_back(e.path());
  if (with_app && fs::exists(o.incident / "app"))
    for (const auto& e : fs::directory_iterator(o.incident / "app"))
      if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::string rel = fs::relative(f, o.incident).generic_string();
    std::string content = read_file(f);
    b.bytes += content.size();
    b.items.push_back({"file", std::move(content), rel, "application/octet-stream"});
  }
  std::vector<std::pair<std::string_view, std::string_view>> contents;
  for (std::size_t i = 1; i < b.items.size(); ++i)
    contents.emplace_back(b.items[i].filename, b.items[i].content);
  b.digest = ff::content_digest::bundle_digest(b.items[0].content, contents);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  // cpp-httplib 0.11 writes to sockets without MSG_NOSIGNAL: a connection the agent closed
  // would end this process silently instead of failing one request.
  std::signal(SIGPIPE, SIG_IGN);
  Options o = parse_args(argc, argv);
  nlohmann::json job = nlohmann::json::parse(read_file(o.incident / "job.json"), nullptr, false);
  if (!job.is_object() || !fs::is_directory(o.incident / "nodes")) {
    std::fprintf(stderr, "%s: not an incident directory (job.json, nodes/)\n", o.incident.c_str());
    return 64;
  }
  std::vector<std::string> nodes;
  for (const auto& e : fs::directory_iterator(o.incident / "nodes"))
    if (e.is_directory()) nodes.push_back(e.path().filename().string());
  std::sort(nodes.begin(), nodes.end());
  job["nodes"] = nodes;
  const JobByNode by_node = split_job(job);

  // Each worker builds the bundle it sends next: what the uploader holds is one bundle per
  // worker, not the whole job (4,096 nodes' bundles are gigabytes).
  try {  // fail at once, not in a worker thread, when munged does not answer
    ff::munge_credential::encode("firstfault-bench probe");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "munge: %s\n", e.what());
    return 1;
  }

  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> total_bytes{0};
  std::atomic<int> rejected{0};
  std::atomic<int> retried{0};
  std::mutex report_mutex;
  auto start = Clock::now();
  Clock::time_point last_reply = start;
  std::vector<std::thread> workers;
  for (int t = 0; t < o.concurrency; ++t) {
    workers.emplace_back([&] {
      httplib::Client client(o.agent);
      client.set_read_timeout(o.timeout_s, 0);
      client.set_write_timeout(o.timeout_s, 0);
      for (std::size_t i = next++; i < nodes.size(); i = next++) {
        const Bundle b = make_bundle(o, by_node, nodes[i], i == 0);
        total_bytes += b.bytes;
        // A credential per request: munged refuses to decode one credential twice.
        auto send = [&] {
          httplib::Headers headers = {
              {"X-Firstfault-Munge",
               ff::munge_credential::encode("firstfault-bundle " + o.job_id + " " + b.node + " " +
                                            b.bundle_id + " " + b.digest)}};
          return client.Post("/api/v1/bundles", headers, b.items);
        };
        auto res = send();
        // Sent again, as the collector's outbox does, when the connection failed (a write to
        // a keep-alive connection the agent had closed) or the agent said 503 (too many
        // connections from this address while closed ones are still counted; database
        // busy). Said on stderr, counted as retried.
        for (int again = 1; (!res || res->status == 503) && again <= kRetries; ++again) {
          std::fprintf(stderr, "bundle %s: %s; sending again (%d)\n", b.bundle_id.c_str(),
                       res ? (std::to_string(res->status) + " " + res->body).c_str()
                           : httplib::to_string(res.error()).c_str(),
                       again);
          ++retried;
          std::this_thread::sleep_for(std::chrono::milliseconds(200 * again));
          res = send();
        }
        std::lock_guard<std::mutex> lock(report_mutex);
        last_reply = std::max(last_reply, Clock::now());
        if (!res || (res->status != 200 && res->status != 201)) {
          ++rejected;
          std::fprintf(stderr, "bundle %s: %s\n", b.bundle_id.c_str(),
                       res ? (std::to_string(res->status) + " " + res->body).c_str()
                           : httplib::to_string(res.error()).c_str());
        }
      }
    });
  }
  for (auto& w : workers) w.join();

  // Poll for the stored diagnosis: the agent runs the final pass once every node's Epilog bundle
  // is in.
  httplib::Client client(o.agent);
  std::string verdict;
  Clock::time_point stored;
  auto deadline = Clock::now() + std::chrono::seconds(o.timeout_s);
  while (Clock::now() < deadline) {
    std::string path = "/api/v1/jobs/" + o.job_id + "/diagnosis";
    // read_access: credential (the default) wants one per request.
    auto res = client.Get(
        path, {{"X-Firstfault-Munge", ff::munge_credential::encode("firstfault-read " + path)}});
    if (res && res->status == 200) {
      stored = Clock::now();
      auto d = nlohmann::json::parse(res->body, nullptr, false);
      if (!d.is_discarded()) {
        const auto& diag = d.contains("diagnosis") ? d["diagnosis"] : d;
        verdict = diag.value("verdict", "?");
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  std::printf("bundles=%zu\nbytes=%zu\nrejected=%d\nretried=%d\nupload_s=%.3f\n", nodes.size(),
              total_bytes.load(), rejected.load(), retried.load(), seconds(last_reply - start));
  if (verdict.empty()) {
    std::printf("diagnosis_after_last_upload_s=timeout\n");
    return 1;
  }
  std::printf("diagnosis_after_last_upload_s=%.3f\nverdict=%s\n", seconds(stored - last_reply),
              verdict.c_str());
  return rejected.load() == 0 ? 0 : 1;
}
