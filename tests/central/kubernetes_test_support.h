// Shared by the Kubernetes tests: a fake API server that answers over real
// HTTP(S) with the JSON under k8s_fixtures/ (hand-written in the documented
// shapes of the Kubernetes and Kueue APIs: no cluster runs here), a test PKI
// made with openssl at test time.
#pragma once

#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/run_process.h"
#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace ff::sources::k8s::testing {

namespace fs = std::filesystem;

inline const fs::path kFixtures = fs::path(FF_SOURCE_DIR) / "tests/central/k8s_fixtures";

// Scratch directories and whole files: tests/support.
using ff::test_support::read_file;
using ff::test_support::ScratchDirectory;
using ff::test_support::write_file;

inline std::string fixture(const std::string& rel) {
  return read_file(kFixtures / rel);
}
struct SeenRequest {
  std::string path;
  std::multimap<std::string, std::string> params;
  std::string authorization;
  bool has(const std::string& k, const std::string& v) const {
    auto [a, b] = params.equal_range(k);
    for (auto it = a; it != b; ++it)
      if (it->second == v) return true;
    return false;
  }
};

// Answers GETs from a table of routes: the route whose path matches and whose
// parameters are all present wins, the most parameters first. Anything else
// is a 404 Status, as the API server answers it.
class FakeApiServer {
 public:
  // cert/key: serve HTTPS; client_ca: also require a client certificate.
  explicit FakeApiServer(const std::string& cert = "", const std::string& key = "",
                         const std::string& client_ca = "") {
    if (cert.empty())
      server_ = std::make_unique<httplib::Server>();
    else
      server_ = std::make_unique<httplib::SSLServer>(
          cert.c_str(), key.c_str(), client_ca.empty() ? nullptr : client_ca.c_str());
    server_->Get(R"(.*)",
                 [this](const httplib::Request& req, httplib::Response& res) { handle(req, res); });
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    // stop() before the accept loop runs would be lost and join() would hang.
    while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeApiServer() {
    server_->stop();
    thread_.join();
  }
  std::string url() const {
    return std::string(https() ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
  }
  bool https() const { return dynamic_cast<httplib::SSLServer*>(server_.get()) != nullptr; }

  void route(const std::string& path, const std::string& body, int status = 200,
             std::vector<std::pair<std::string, std::string>> params = {}) {
    std::lock_guard<std::mutex> lock(mu_);
    routes_.push_back({path, std::move(params), status, body, 0});
  }
  // Answers every request for `path` (any parameters) before the other routes.
  void override_path(const std::string& path, const std::string& body, int status) {
    std::lock_guard<std::mutex> lock(mu_);
    routes_.push_back({path, {}, status, body, 1});
  }
  // Every request without "Authorization: Bearer <token>" gets a 401 Status.
  void require_token(const std::string& token) { token_ = token; }
  std::vector<SeenRequest> seen() const {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  std::vector<SeenRequest> seen(const std::string& path_part) const {
    std::vector<SeenRequest> out;
    for (const auto& r : seen())
      if (r.path.find(path_part) != std::string::npos) out.push_back(r);
    return out;
  }

 private:
  struct Route {
    std::string path;
    std::vector<std::pair<std::string, std::string>> params;
    int status;
    std::string body;
    int priority;
  };
  void handle(const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu_);
    SeenRequest s{req.path, {}, req.get_header_value("Authorization")};
    for (const auto& [k, v] : req.params) s.params.emplace(k, v);
    seen_.push_back(s);
    if (!token_.empty() && s.authorization != "Bearer " + token_) {
      res.status = 401;
      res.set_content(fixture("errors/status-401.json"), "application/json");
      return;
    }
    const Route* best = nullptr;
    for (const auto& r : routes_) {
      if (r.path != req.path) continue;
      bool all = true;
      for (const auto& [k, v] : r.params)
        if (!s.has(k, v)) all = false;
      if (all && (!best || r.priority > best->priority ||
                  (r.priority == best->priority && r.params.size() > best->params.size())))
        best = &r;
    }
    if (!best) {
      res.status = 404;
      res.set_content(
          R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","code":404})",
          "application/json");
      return;
    }
    res.status = best->status;
    bool json = !best->body.empty() && best->body[0] == '{';
    res.set_content(best->body, json ? "application/json" : "text/plain");
  }

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::vector<Route> routes_;
  std::vector<SeenRequest> seen_;
  std::string token_;
};

// A CA, a server certificate for 127.0.0.1/localhost and a client
// certificate, made with the openssl command line in `dir`.
struct TestPki {
  fs::path ca, ca_key, server_cert, server_key, client_cert, client_key;
  std::string error;
  explicit TestPki(const fs::path& dir) {
    ca = dir / "ca.pem";
    ca_key = dir / "ca.key";
    server_cert = dir / "server.pem";
    server_key = dir / "server.key";
    client_cert = dir / "client.pem";
    client_key = dir / "client.key";
    auto run = [&](std::vector<std::string> argv) {
      if (!error.empty()) return;
      ProcessResult r = run_process(argv, {std::nullopt, std::chrono::milliseconds(30000)});
      if (!r.ok()) error = argv[1] + ": " + r.describe() + ": " + r.err;
    };
    write_file(dir / "server.ext",
               "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
    write_file(dir / "client.ext", "extendedKeyUsage=clientAuth\n");
    run({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca,
         "-days", "2", "-subj", "/CN=firstfault-test-ca"});
    run({"openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", server_key, "-out",
         dir / "server.csr", "-subj", "/CN=kube-apiserver"});
    run({"openssl", "x509", "-req", "-in", dir / "server.csr", "-CA", ca, "-CAkey", ca_key,
         "-CAcreateserial", "-out", server_cert, "-days", "2", "-extfile", dir / "server.ext"});
    run({"openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", client_key, "-out",
         dir / "client.csr", "-subj", "/O=system:masters/CN=firstfault"});
    run({"openssl", "x509", "-req", "-in", dir / "client.csr", "-CA", ca, "-CAkey", ca_key,
         "-CAcreateserial", "-out", client_cert, "-days", "2", "-extfile", dir / "client.ext"});
  }
};

// The routes of one recorded scenario of k8s_fixtures/.
struct Scenario {
  std::string dir, ns, workload, job, job_selector;
  std::vector<std::string> nodes;
  // pod → container; pods with a previous log listed in `previous`
  std::vector<std::pair<std::string, std::string>> logs;
  std::vector<std::string> previous;
};

inline Scenario oom_scenario() {
  return {"oom",
          "train",
          "job-llama-7b-3f2a1",
          "llama-7b",
          "batch.kubernetes.io/job-name=llama-7b",
          {"gpu-a", "gpu-b", "gpu-c", "gpu-d"},
          {{"llama-7b-0-x7k0q", "pytorch"},
           {"llama-7b-1-x7k1q", "pytorch"},
           {"llama-7b-2-x7k2q", "pytorch"},
           {"llama-7b-3-x7k3q", "pytorch"}},
          {"llama-7b-1-x7k1q"}};
}
inline Scenario preempted_scenario() {
  return {"preempted",
          "research",
          "job-sweep-9c1d0",
          "sweep",
          "batch.kubernetes.io/job-name=sweep",
          {"gpu-e", "gpu-f"},
          {{"sweep-0-m2p0z", "trainer"}, {"sweep-1-m2p1z", "trainer"}},
          {}};
}
inline Scenario evicted_scenario() {
  return {"evicted",
          "lab",
          "",
          "",
          "app=bench",
          {"cpu-x", "cpu-y"},
          {{"bench-7d9f-0", "worker"}, {"bench-7d9f-1", "worker"}},
          {}};
}

inline void serve(FakeApiServer& s, const Scenario& sc) {
  const std::string d = sc.dir + "/";
  const std::string ns = "/api/v1/namespaces/" + sc.ns;
  if (!sc.workload.empty())
    s.route("/apis/kueue.x-k8s.io/v1beta1/namespaces/" + sc.ns + "/workloads/" + sc.workload,
            fixture(d + "workload.json"));
  if (!sc.job.empty())
    s.route("/apis/batch/v1/namespaces/" + sc.ns + "/jobs/" + sc.job,
            fixture(d + "batch-job.json"));
  s.route(ns + "/pods", fixture(d + "pods.json"), 200, {{"labelSelector", sc.job_selector}});
  s.route(ns + "/events", fixture(d + "events.json"));
  s.route("/api/v1/namespaces/default/events", fixture(d + "node-events.json"), 200,
          {{"fieldSelector", "involvedObject.kind=Node"}});
  for (const auto& n : sc.nodes) s.route("/api/v1/nodes/" + n, fixture(d + "node-" + n + ".json"));
  for (const auto& [pod, c] : sc.logs) {
    s.route(ns + "/pods/" + pod + "/log", fixture(d + "logs/" + pod + "." + c + ".log"), 200,
            {{"container", c}});
    for (const auto& p : sc.previous)
      if (p == pod)
        s.route(ns + "/pods/" + pod + "/log",
                fixture(d + "logs/" + pod + "." + c + ".previous.log"), 200,
                {{"container", c}, {"previous", "true"}});
  }
}

// The firstfault binary of this build (tests/central/CMakeLists.txt).
inline std::string firstfault_binary() {
  return FF_BINARY;
}

}  // namespace ff::sources::k8s::testing
