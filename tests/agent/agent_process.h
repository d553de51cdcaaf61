// Test support: the real `firstfault agent` binary started on an ephemeral
// port with a scratch state dir and fake Slurm programs, bundles
// built and uploaded as the collector does, and the example incident split
// into per-node bundles.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <httplib.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/content_digest.h"
#include "common/munge_credential.h"
#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace fftest {

namespace fs = std::filesystem;
using nlohmann::json;

using ff::test_support::read_file;
using ff::test_support::read_file_if_present;
using ff::test_support::ScratchDirectory;
using ff::test_support::write_executable;
using ff::test_support::write_file;

// Fake Slurm programs: firstfault-slurm-job prints `job` (exit 3, "no such
// job", when it is null) and knows no accounting record, `scontrol show
// config` prints `config`, `scontrol show node` shows no node, `scontrol
// update`, `firstfault-slurm-job --set-comment` and sacctmgr log their
// arguments one call per line to <dir>/slurm-calls.log.
struct FakeSlurm {
  json job;                       // the helper's record (agent/slurm/slurm_job.h)
  bool controller_hangs = false;  // every call sleeps 30 s (slurmctld down)
  // `scontrol update` writes its pid to <dir>/update-started, then sleeps
  // 30 s before it logs its call (a slurmctld that is slow to answer).
  bool update_hangs = false;
  std::string config =
      "SlurmUser               = slurm(64030)\n"
      "AccountingStorageType   = accounting_storage/none\n";

  // Where install() keeps the record the helper prints: rewrite it to change
  // Slurm's answer while the agent runs.
  static fs::path job_file(const fs::path& dir) { return dir / "slurm-job.json"; }

  void install(const fs::path& dir) const {
    write_file(job_file(dir), job.is_null() ? "" : job.dump() + "\n");
    write_file(dir / "config.txt", config);
    std::string log = (dir / "slurm-calls.log").string();
    std::string hang = controller_hangs ? "sleep 30\n" : "";
    // --accounting: no record (exit 3); --set-comment: logged like the others.
    write_executable(dir / "firstfault-slurm-job",
                     "#!/bin/sh\n" + hang +
                         "case \"$1\" in\n"
                         "  --accounting) exit 3;;\n"
                         "  --set-comment) printf 'firstfault-slurm-job' >> '" +
                         log + "'; for a in \"$@\"; do printf ' [%s]' \"$a\" >> '" + log +
                         "'; done; echo >> '" + log +
                         "'; exit 0;;\n"
                         "esac\n"
                         "if [ -s '" +
                         job_file(dir).string() + "' ]; then cat '" + job_file(dir).string() +
                         "'; exit 0; fi\nexit 3\n");
    std::string hang_update;
    if (update_hangs)
      hang_update = "echo $$ > '" + (dir / "update-started").string() + "'; sleep 30; ";
    write_executable(dir / "scontrol", "#!/bin/sh\n" + hang +
                                           "case \"$1 $2\" in\n"
                                           "  'show config') cat '" +
                                           (dir / "config.txt").string() +
                                           "';;\n"
                                           "  'show node') ;;\n"
                                           "  *) " +
                                           hang_update + "printf 'scontrol' >> '" + log +
                                           "'; for a in \"$@\"; do printf ' [%s]' \"$a\" >> '" +
                                           log + "'; done; echo >> '" + log +
                                           "';;\n"
                                           "esac\n");
    write_executable(dir / "sacctmgr", "#!/bin/sh\nprintf 'sacctmgr' >> '" + log +
                                           "'; for a in \"$@\"; do printf ' [%s]' \"$a\" >> '" +
                                           log + "'; done; echo >> '" + log + "'\n");
  }
};

// What firstfault-slurm-job prints for the example incident's job 48213.
inline json example_job_record(const std::string& state) {
  return {{"job_id", "48213"},
          {"state", state},
          {"exit_code", state == "RUNNING" ? "0:0" : "1:0"},
          {"start_time", "2026-11-02T08:00:14Z"},
          {"end_time", state == "RUNNING" ? "2026-11-03T08:00:14Z" : "2026-11-02T10:51:42Z"},
          {"nodes", {"gpu-a01", "gpu-a02", "gpu-a03"}},
          {"batch_host", "gpu-a01"},
          {"std_out", "/nonexistent/slurm-48213.out"},
          {"std_err", "/nonexistent/slurm-48213.out"},
          {"user", "root"},
          {"uid", 0},
          {"restart_count", 0}};
}

// The example incident's job 48213 after it failed, in a cluster without
// accounting: passes run at once, the Comment is skipped.
inline FakeSlurm ended_job() {
  FakeSlurm s;
  s.job = example_job_record("FAILED");
  return s;
}

// Job 48213 while its batch step still runs: the fast pass may write the
// Comment.
inline FakeSlurm running_job() {
  FakeSlurm s;
  s.job = example_job_record("RUNNING");
  return s;
}

class AgentProcess {
 public:
  // `extra_yaml` is appended to the generated configuration.
  // `state_dir` empty: a fresh one inside the scratch directory.
  explicit AgentProcess(const std::string& extra_yaml = "", const FakeSlurm& slurm = {},
                        const fs::path& state_dir = {}) {
    slurm.install(dir_.path());
    state_ = state_dir.empty() ? dir_.path() / "state" : state_dir;
    std::string config =
        "listen: 127.0.0.1:0\n"
        "state_dir: " +
        state_.string() +
        "\n"
        "scontrol: " +
        (dir_.path() / "scontrol").string() +
        "\n"
        "slurm_job_helper: " +
        (dir_.path() / "firstfault-slurm-job").string() +
        "\n"
        "sacctmgr: " +
        (dir_.path() / "sacctmgr").string() + "\n" + extra_yaml;
    if (extra_yaml.find("final_pass_deadline_s") == std::string::npos)
      config += "final_pass_deadline_s: 600\n";
    write_file(dir_.path() / "agent.yaml", config);
    start();
  }
  ~AgentProcess() { stop(); }
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  const fs::path& state() const { return state_; }
  const fs::path& dir() const { return dir_.path(); }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    return c;
  }
  std::string log() const { return read_file_if_present(dir_.path() / "agent.log"); }
  std::string slurm_calls() const { return read_file_if_present(dir_.path() / "slurm-calls.log"); }

  // A line of /proc/<agent>/status in KiB ("VmRSS", "RssAnon"), -1 when unknown.
  long status_kib(const std::string& field = "VmRSS") const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
    return -1;
  }

  // SIGKILL and wait: the agent dies wherever it is, as in a crash.
  void kill_now() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  // SIGTERM and wait; returns the exit status (-1 when it had to be killed).
  int stop() {
    if (pid_ <= 0) return exit_status_;
    ::kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 200; ++i) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return exit_status_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    exit_status_ = -1;
    return exit_status_;
  }

 private:
  void start() {
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe");
    std::string config = (dir_.path() / "agent.yaml").string();
    std::string log = (dir_.path() / "agent.log").string();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      int err = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(err, 2);
      ::close(out[0]);
      ::close(out[1]);
      ::execl(FF_BINARY, FF_BINARY, "agent", "--config", config.c_str(), "--foreground",
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(out[1]);
    // "listening on 127.0.0.1:PORT\n"
    std::string line;
    char c;
    while (::read(out[0], &c, 1) == 1 && c != '\n') line += c;
    ::close(out[0]);
    auto colon = line.rfind(':');
    if (line.rfind("listening on ", 0) != 0 || colon == std::string::npos)
      throw std::runtime_error("agent did not start: " + line + "\n" + this->log());
    port_ = std::stoi(line.substr(colon + 1));
  }

  ScratchDirectory dir_{"agent"};
  fs::path state_;
  pid_t pid_ = -1;
  int port_ = 0;
  int exit_status_ = -1;
};

struct Bundle {
  std::string bundle_id, job_id, node, pass = "epilog";
  int attempt = 0;
  std::vector<std::pair<std::string, std::string>> files;  // path in bundle → content

  // The meta part as upload() sends it.
  std::string meta_text() const {
    return json({{"bundle_id", bundle_id},
                 {"job_id", job_id},
                 {"attempt", attempt},
                 {"node", node},
                 {"pass", pass}})
        .dump();
  }
  // The payload the collector's credential carries: this bundle's ids and
  // the digest of what upload() sends.
  std::string payload() const {
    std::vector<std::pair<std::string_view, std::string_view>> contents;
    for (const auto& [name, content] : files) contents.emplace_back(name, content);
    return "firstfault-bundle " + job_id + " " + node + " " + bundle_id + " " +
           ff::content_digest::bundle_digest(meta_text(), contents);
  }
};

// The payload of a fast pass's credential: job, node and the body's digest.
inline std::string fastpass_payload(const std::string& job_id, const std::string& node,
                                    const std::string& body) {
  return "firstfault-fastpass " + job_id + " " + node + " " + ff::content_digest::sha256_hex(body);
}

inline std::string credential(const std::string& payload) {
  return ff::munge_credential::encode(payload);
}

// GET of a read endpoint with a fresh credential of this process's uid
// (payload "firstfault-read <path>"), as read_access: credential wants.
inline httplib::Result read(httplib::Client& client, const std::string& target) {
  std::string path = target.substr(0, target.find('?'));
  return client.Get(target, {{"X-Firstfault-Munge", credential("firstfault-read " + path)}});
}

// Uploads as the collector does; `cred` nullopt = a fresh valid credential.
inline httplib::Result upload(httplib::Client& client, const Bundle& b,
                              std::optional<std::string> cred = std::nullopt) {
  httplib::MultipartFormDataItems items = {{"meta", b.meta_text(), "", "application/json"}};
  for (const auto& [name, content] : b.files)
    items.push_back({"file", content, name, "application/octet-stream"});
  httplib::Headers headers;
  std::string c = cred ? *cred : credential(b.payload());
  if (!c.empty()) headers.emplace("X-Firstfault-Munge", c);
  return client.Post("/api/v1/bundles", headers, items);
}

// The example incident split into one bundle per node, as each node's
// collector would send it: its job.json fragment, its nodes/<node>/ files,
// and app/ from the first node (where the batch script ran).
inline std::vector<Bundle> example_bundles(const std::string& example, const std::string& pass,
                                           long long stamp) {
  fs::path dir = fs::path(FF_SOURCE_DIR) / "examples" / "incidents" / example;
  json job = json::parse(read_file(dir / "job.json"));
  std::string job_id = job["job_id"];
  std::vector<std::string> nodes = job["nodes"];
  std::vector<Bundle> out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::string& node = nodes[i];
    Bundle b;
    b.node = node;
    b.job_id = job_id;
    b.pass = pass;
    b.bundle_id =
        node + "-" + job_id + "-" + pass + "-" + std::to_string(stamp + static_cast<long long>(i));
    json fragment = job;
    json ranks = json::array();
    for (const auto& r : job["ranks"])
      if (r["node"] == node) ranks.push_back(r);
    fragment["ranks"] = ranks;
    fragment["node_info"] = json::object({{node, job["node_info"][node]}});
    json coverage = json::array();
    for (const auto& c : job["coverage"])
      if (c["node"] == node) coverage.push_back(c);
    fragment["coverage"] = coverage;
    b.files.push_back({"job.json", fragment.dump(2)});
    for (const auto& e : fs::directory_iterator(dir / "nodes" / node))
      b.files.push_back(
          {"nodes/" + node + "/" + e.path().filename().string(), read_file(e.path())});
    if (i == 0 && fs::exists(dir / "app"))
      for (const auto& e : fs::directory_iterator(dir / "app"))
        b.files.push_back({"app/" + e.path().filename().string(), read_file(e.path())});
    out.push_back(std::move(b));
  }
  return out;
}

// Polls GET /api/v1/jobs/<id>/diagnosis until it answers 200 or `seconds` pass.
inline std::optional<json> wait_for_diagnosis(httplib::Client& client, const std::string& job_id,
                                              int seconds = 30) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < until) {
    auto res = read(client, "/api/v1/jobs/" + job_id + "/diagnosis");
    if (res && res->status == 200) return json::parse(res->body);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return std::nullopt;
}

// Rows of one SQL count query against the agent's database.
inline long long count_rows(const fs::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(h);
    return -1;
  }
  sqlite3_busy_timeout(h, 5000);
  sqlite3_stmt* st = nullptr;
  long long n = -1;
  if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

// Runs SQL statements against the agent's database (the agent stopped):
// ages rows as time would. False when a statement failed.
inline bool exec_sql(const fs::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  bool ok = sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK &&
            sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
  sqlite3_close(h);
  return ok;
}

// Every regular file under `dir`, relative, sorted.
inline std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file()) out.push_back(fs::relative(it->path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace fftest
