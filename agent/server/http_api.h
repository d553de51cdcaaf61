// The agent's HTTP API (docs/slurm-path.md section 4) on cpp-httplib:
//   GET  /api/v1/health                        open (no job data)
//   GET  /api/v1/jobs/<job_id>/diagnosis       the newest pass, the full diagnosis JSON
//   GET  /api/v1/diagnoses?node=&since=&limit=&failures=1 summaries, newest first
//        both need a credential (payload "firstfault-read <path>") unless
//        read_access is "open"; a diagnosis quotes the job's own output
//        or a read token (Authorization: Bearer, agent.yaml read_token_file)
//   GET  /api/v1/suspects?since=&all=1         components that failed several jobs, ranked
//        (suspects/suspect_report.h; since: unix seconds, RFC 3339 or 7d); read as above
//   GET  /, /dashboard/, /dashboard/<file>     the read-only dashboard (dashboard_routes.h)
//   POST /api/v1/bundles                       multipart upload (BundleReceiver)
//   POST /api/v1/jobs/<job_id>/fastpass        waits for the nodes' step bundles, runs a pass
//   GET  /metrics                              open (counts only): Prometheus text format
// Errors are {"error": "..."}; no exception leaves a handler (500 + log).
// Before any body is read (gate()): no Transfer-Encoding (411) or
// Content-Encoding (415) on any route; a POST only to the two write routes
// (else 404), with a Content-Length (411) within its limit (413) and a
// credential of a uid that may write (401/403/503). The handler then binds
// the credential's payload to the body (its digest) without decoding it
// again. Connections, lanes and deadlines: server/guarded_server.h.
#pragma once

#include <httplib.h>

#include <chrono>
#include <memory>
#include <string>

#include "agent/server/bundle_receiver.h"
#include "agent/server/guarded_server.h"
#include "agent/server/job_tracker.h"
#include "agent/server/pass_runner.h"
#include "agent/server/request_auth.h"
#include "agent/server/state_layout.h"
#include "agent/store/diagnosis_store.h"
#include "agent/suspects/suspect_report.h"

namespace ff::agent {

class AgentMetrics;

struct ApiSettings {
  std::size_t max_request_bytes = 268435456;
  std::chrono::seconds fastpass_wait{8};
  bool read_open = false;  // agent.yaml read_access: open
  std::string read_token;  // agent.yaml read_token_file's token; "" = none
  // agent.yaml suspects: (GET /api/v1/suspects)
  SuspectSettings suspects;
  // agent.yaml http_*: connection caps and deadlines, and the workers of
  // each lane (uploads, fast passes, reads; probes have two of their own).
  ConnectionLimits connections;
  std::size_t upload_workers = 8;
  std::size_t fastpass_workers = 8;
  std::size_t read_workers = 4;
};

// A fast pass's JSON body is a few fields; anything longer is refused (413).
inline constexpr std::size_t kFastPassMaxBytes = 65536;

class HttpApi {
 public:
  HttpApi(ApiSettings settings, StateLayout layout, DiagnosisStore& store, RequestAuth& auth,
          BundleReceiver& receiver, JobTracker& tracker, PassRunner& runner);

  // Binds; port 0 takes any free port. Returns the port, or -1.
  int bind(const std::string& host, int port);
  // Serves until stop(); returns false when the server failed.
  bool listen();
  void stop();
  // Serves GET /metrics and counts bundle refusals and fast passes; before
  // bind(). Null (the default): /metrics is 404.
  void set_metrics(AgentMetrics* metrics) { metrics_ = metrics; }

 private:
  void routes();
  // The pre-routing handler: every check that needs no body (see the top).
  httplib::Server::HandlerResponse gate(const httplib::Request& req, httplib::Response& res);
  void fastpass(const httplib::Request& req, httplib::Response& res);
  void diagnosis(const httplib::Request& req, httplib::Response& res);
  void diagnoses(const httplib::Request& req, httplib::Response& res);
  void suspects(const httplib::Request& req, httplib::Response& res);
  void bundles(const httplib::Request& req, httplib::Response& res);
  // True when the request may read job data; else the refusal is in `res`.
  bool may_read(const httplib::Request& req, httplib::Response& res);

  ApiSettings settings_;
  StateLayout layout_;
  DiagnosisStore& store_;
  RequestAuth& auth_;
  BundleReceiver& receiver_;
  JobTracker& tracker_;
  PassRunner& runner_;
  AgentMetrics* metrics_ = nullptr;
  GuardedServer server_;
  int listen_fd_ = -1;  // the listening socket, to raise httplib's backlog
};

}  // namespace ff::agent
