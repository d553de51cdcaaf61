#include "agent/server/http_api.h"
#include "agent/server/json_reply.h"

#include <sys/socket.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>

#include "agent/metrics/agent_metrics.h"
#include "agent/server/bundle_rules.h"
#include "agent/server/dashboard_routes.h"
#include "agent/server/read_token.h"
#include "agent/suspects/time_window.h"
#include "common/content_digest.h"
#include "engine/pipeline/analyze.h"

namespace ff::agent {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

enum LaneIndex : std::size_t { kUploads, kFastPasses, kReads, kProbes };

bool is_fastpass_path(std::string_view path) {
  constexpr std::string_view prefix = "/api/v1/jobs/", suffix = "/fastpass";
  return path.size() > prefix.size() + suffix.size() && path.substr(0, prefix.size()) == prefix &&
         path.substr(path.size() - suffix.size()) == suffix &&
         path.substr(prefix.size(), path.size() - prefix.size() - suffix.size()).find('/') ==
             std::string_view::npos;
}

std::size_t lane_of(std::string_view method, std::string_view path) {
  if (method == "POST" && path == "/api/v1/bundles") return kUploads;
  if (method == "POST" && is_fastpass_path(path)) return kFastPasses;
  if (method == "GET" && (path == "/api/v1/health" || path == "/metrics")) return kProbes;
  return kReads;
}

std::vector<Lane> lanes(const ApiSettings& s) {
  std::vector<Lane> out(4);
  // Uploads wait for a worker as long as they are under max_connections:
  // the collector's retry would send them again anyway.
  out[kUploads] = {"uploads", s.upload_workers, s.connections.max_connections};
  // A fast pass that waits long is useless to its client (its deadline is
  // seconds): as many may wait as run, the next ones are refused at once.
  out[kFastPasses] = {"fast passes", s.fastpass_workers, s.fastpass_workers};
  out[kReads] = {"reads", s.read_workers, 64};
  // Health and /metrics answer from memory: two workers of their own, so
  // monitoring sees the agent alive while every other lane is busy.
  out[kProbes] = {"probes", 2, 64};
  return out;
}

// The credential of the write request this thread serves, decoded by
// gate() before the body was read: munged refuses to decode it twice.
thread_local std::optional<AuthDecision> tl_writer;
// gate() already ran for this request, in the Expect: 100-continue handler.
thread_local bool tl_gate_passed = false;
// Debian's httplib is a compiled library that listens with a backlog of 5:
// when hundreds of nodes upload at the end of a job, connections beyond it
// stall in TCP retransmission and httplib closes them unanswered after its
// 5 s keep-alive wait. listen() again on the bound socket raises it.
constexpr int kListenBacklog = 1024;

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  set_json_reply(nullptr, res, body.dump() + "\n");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, status, {{"error", message}});
}

// Every handler runs inside this: an exception becomes a 500 and a log line.
template <typename F>
httplib::Server::Handler guarded(const char* route, F&& f) {
  return [route, f = std::forward<F>(f)](const httplib::Request& req, httplib::Response& res) {
    try {
      f(req, res);
    } catch (const std::exception& e) {
      spdlog::error("{} {}: {}", route, req.path, e.what());
      send_error(res, 500, "internal error");
    } catch (...) {
      spdlog::error("{} {}: unknown exception", route, req.path);
      send_error(res, 500, "internal error");
    }
  };
}

json pass_summary(const PassRecord& p) {
  return {{"job_id", p.job_id},         {"attempt", p.attempt},
          {"pass_no", p.pass_no},       {"trigger", p.trigger},
          {"created_at", p.created_at}, {"verdict", p.verdict},
          {"domain", p.domain},         {"summary", p.summary},
          {"root_node", p.root_node},   {"comment_status", p.comment_status}};
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

HttpApi::HttpApi(ApiSettings settings, StateLayout layout, DiagnosisStore& store, RequestAuth& auth,
                 BundleReceiver& receiver, JobTracker& tracker, PassRunner& runner)
    : settings_(settings),
      layout_(std::move(layout)),
      store_(store),
      auth_(auth),
      receiver_(receiver),
      tracker_(tracker),
      runner_(runner),
      server_(settings_.connections, lanes(settings_), lane_of) {
  routes();
}

void HttpApi::routes() {
  // gate() refuses a longer Content-Length before httplib gets here; this
  // stays as a second bound.
  server_.set_payload_max_length(settings_.max_request_bytes);
  server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (tl_gate_passed) {
      tl_gate_passed = false;
      return httplib::Server::HandlerResponse::Unhandled;
    }
    return gate(req, res);
  });
  // A client that asks before sending its body gets the refusal instead of
  // "100 Continue". gate() runs once per request: it decodes the credential.
  server_.set_expect_100_continue_handler(
      [this](const httplib::Request& req, httplib::Response& res) {
        tl_gate_passed = false;
        if (gate(req, res) == httplib::Server::HandlerResponse::Handled) return res.status;
        tl_gate_passed = true;
        return 100;
      });
  server_.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    // Multipart bodies are parsed into parts, so the size is the header's.
    // Scrapes and health probes that succeed come every few seconds: debug.
    bool routine = res.status < 400 && (req.path == "/metrics" || req.path == "/api/v1/health" ||
                                        req.path.rfind("/dashboard/", 0) == 0);
    spdlog::log(routine ? spdlog::level::debug : spdlog::level::info,
                "{} {} {} {} bytes -> {} ({} bytes)", req.remote_addr, req.method, req.path,
                req.get_header_value("Content-Length"), res.status, res.body.size());
  });
  // httplib's own refusals (413, 404, 400) get a JSON body too.
  server_.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    // Every answer >= 400 passes here before it is sent, httplib's own 413
    // (the handler never runs) included.
    if (metrics_ && req.method == "POST" && req.path == "/api/v1/bundles")
      metrics_->bundle_refused(res.status);
    if (!res.body.empty()) return;
    std::string message = res.status == 413 ? "request too large"
                          : res.status == 404
                              ? "no such endpoint"
                              : "request refused (HTTP " + std::to_string(res.status) + ")";
    set_json_reply(nullptr, res, json({{"error", message}}).dump() + "\n");
  });

  server_.Get("/api/v1/health",
              guarded("health", [this](const httplib::Request&, httplib::Response& res) {
                send_json(res, 200,
                          {{"status", "ok"},
                           {"engine_version", ff::kEngineVersion},
                           {"schema_version", store_.schema_version()}});
              }));
  server_.Get("/metrics",
              guarded("metrics", [this](const httplib::Request&, httplib::Response& res) {
                if (!metrics_) return send_error(res, 404, "no such endpoint");
                res.set_content(metrics_->scrape(), AgentMetrics::kContentType);
              }));
  add_dashboard_routes(server_);
  server_.Get(R"(/api/v1/jobs/([^/]+)/diagnosis)",
              guarded("diagnosis", [this](const auto& req, auto& res) { diagnosis(req, res); }));
  server_.Get("/api/v1/diagnoses",
              guarded("diagnoses", [this](const auto& req, auto& res) { diagnoses(req, res); }));
  server_.Get("/api/v1/suspects",
              guarded("suspects", [this](const auto& req, auto& res) { suspects(req, res); }));
  server_.Post("/api/v1/bundles",
               guarded("bundles", [this](const auto& req, auto& res) { bundles(req, res); }));
  server_.Post(R"(/api/v1/jobs/([^/]+)/fastpass)",
               guarded("fastpass", [this](const auto& req, auto& res) { fastpass(req, res); }));
}

httplib::Server::HandlerResponse HttpApi::gate(const httplib::Request& req,
                                               httplib::Response& res) {
  tl_writer.reset();
  auto refuse = [&res](int status, const std::string& message) {
    send_error(res, status, message);
    res.set_header("Connection", "close");
    GuardedServer::close_after_reply();
    return httplib::Server::HandlerResponse::Handled;
  };
  // httplib would read a chunked body without any bound and inflate a
  // compressed one without any bound: neither is ever accepted.
  if (req.has_header("Transfer-Encoding"))
    return refuse(411, "Transfer-Encoding is not accepted: send the body with a Content-Length");
  if (req.has_header("Content-Encoding"))
    return refuse(415, "Content-Encoding is not accepted: send the body as it is");
  if (req.get_header_value_count("Content-Length") > 1)
    return refuse(400, "more than one Content-Length");
  std::string length_text = req.get_header_value("Content-Length");
  if (req.method != "POST") {
    // httplib reads the body of PUT, PATCH and DELETE before routing, and
    // no route has one; a GET's body would be read as the next request.
    if (req.method != "GET" && req.method != "HEAD" && req.method != "OPTIONS")
      return refuse(405, "method not allowed");
    if (!length_text.empty() && length_text != "0")
      return refuse(400, "a " + req.method + " request has no body");
    return httplib::Server::HandlerResponse::Unhandled;
  }
  std::size_t limit = 0;
  if (req.path == "/api/v1/bundles")
    limit = settings_.max_request_bytes;
  else if (is_fastpass_path(req.path))
    limit = kFastPassMaxBytes;
  else
    return refuse(404, "no such endpoint");
  if (length_text.empty()) return refuse(411, "Content-Length required");
  if (length_text.size() > 18 || length_text.find_first_not_of("0123456789") != std::string::npos)
    return refuse(400, "Content-Length is not a number");
  if (std::stoull(length_text) > limit)
    return refuse(413, "request too large: Content-Length " + length_text + " is over " +
                           std::to_string(limit) + " bytes");
  if (!req.has_header(kMungeHeader))
    return refuse(401, "no credential (header X-Firstfault-Munge)");
  AuthDecision writer = auth_.authenticate_writer(req.get_header_value(kMungeHeader));
  if (writer.status != 200) return refuse(writer.status, writer.error);
  tl_writer = std::move(writer);
  return httplib::Server::HandlerResponse::Unhandled;
}

int HttpApi::bind(const std::string& host, int port) {
  server_.set_socket_options([this](socket_t sock) {
    httplib::default_socket_options(sock);
    listen_fd_ = sock;
  });
  int bound =
      port == 0 ? server_.bind_to_any_port(host) : (server_.bind_to_port(host, port) ? port : -1);
  if (bound > 0 && listen_fd_ >= 0 && ::listen(listen_fd_, kListenBacklog) != 0)
    spdlog::warn("cannot raise the listen backlog: {}", std::strerror(errno));
  return bound;
}

bool HttpApi::listen() {
  return server_.listen_after_bind();
}

void HttpApi::stop() {
  server_.stop();
}

void HttpApi::bundles(const httplib::Request& req, httplib::Response& res) {
  if (!req.is_multipart_form_data())
    return send_error(res, 400, "expected multipart/form-data with parts 'meta' and 'file'");
  std::string meta;
  std::vector<UploadedFile> files;
  for (const auto& [name, part] : req.files) {
    if (name == "meta") {
      meta = part.content;
    } else if (name == "file") {
      files.push_back({part.filename, part.content});
    } else {
      return send_error(res, 400, "unexpected part '" + name + "'");
    }
  }
  if (meta.empty()) return send_error(res, 400, "part 'meta' missing");
  if (!tl_writer) return send_error(res, 401, "no credential (header X-Firstfault-Munge)");
  Reply reply = receiver_.receive(*tl_writer, meta, files);
  send_json(res, reply.status, reply.body);
}

void HttpApi::fastpass(const httplib::Request& req, httplib::Response& res) {
  auto start = std::chrono::steady_clock::now();
  std::string path_job = req.matches[1];
  if (!valid_job_id(path_job)) return send_error(res, 400, "job id not valid");
  if (!tl_writer) return send_error(res, 401, "no credential (header X-Firstfault-Munge)");
  json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) return send_error(res, 400, "body: not JSON");
  if (body.contains("job_id") &&
      (!body["job_id"].is_string() || body["job_id"].get<std::string>() != path_job))
    return send_error(res, 400, "job_id: differs from the URL");
  if (!body.contains("node") || !body["node"].is_string() ||
      !valid_node_name(body["node"].get<std::string>()))
    return send_error(res, 400, "node: missing or not a node name");
  if (!body.contains("exit_status") || !body["exit_status"].is_number_integer())
    return send_error(res, 400, "exit_status: missing or not an integer");
  int attempt = 0;
  if (body.contains("attempt")) {
    if (!body["attempt"].is_number_integer() || body["attempt"].get<long long>() < 0 ||
        body["attempt"].get<long long>() > 1000000)
      return send_error(res, 400, "attempt: not a non-negative integer");
    attempt = body["attempt"].get<int>();
  }
  std::string node = body["node"].get<std::string>();
  AuthDecision auth =
      RequestAuth::bind_payload(*tl_writer, "firstfault-fastpass " + path_job + " " + node + " " +
                                                ff::content_digest::sha256_hex(req.body));
  if (auth.status != 200) return send_error(res, auth.status, auth.error);

  // Wait for the other nodes' step bundles, at most fastpass_wait_s and never
  // past the client's deadline, keeping a quarter of it (up to 2 s) for the
  // engine and the reply.
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(settings_.fastpass_wait);
  long long client_ms = 0;
  if (req.has_header("X-Firstfault-Deadline-Ms")) {
    try {
      client_ms = std::stoll(req.get_header_value("X-Firstfault-Deadline-Ms"));
      long long reserve = std::min<long long>(client_ms / 4, 2000);
      wait = std::min(wait, std::chrono::milliseconds(std::max<long long>(0, client_ms - reserve)));
    } catch (const std::exception&) {
      return send_error(res, 400, "X-Firstfault-Deadline-Ms: not a number");
    }
  }
  JobKey key{path_job, runner_.attempt_of_fastpass(path_job, attempt)};
  bool all = tracker_.wait_for_all_nodes(key, start + wait);
  // scontrol (job state, Comment) may use what is left of the client's time.
  std::optional<std::chrono::steady_clock::time_point> answer_by;
  if (client_ms > 0) answer_by = start + std::chrono::milliseconds(client_ms);
  PassOutcome out = runner_.run(key, "fastpass", body["exit_status"].get<int>(), answer_by);
  if (metrics_) metrics_->fastpass_answered(std::chrono::steady_clock::now() - start);
  if (!out.ok) return send_error(res, out.http_status, out.error);
  send_json(res, 200,
            {{"job_id", path_job},
             {"attempt", key.attempt},
             {"pass", "fastpass"},
             {"pass_no", out.record.pass_no},
             {"verdict", out.record.verdict},
             {"summary", out.record.summary},
             {"all_nodes_reported", all},
             {"comment_written", out.comment_written},
             {"comment_status", out.record.comment_status}});
}

bool HttpApi::may_read(const httplib::Request& req, httplib::Response& res) {
  if (settings_.read_open) return true;
  if (!settings_.read_token.empty() && req.has_header("Authorization")) {
    if (bearer_token_matches(req.get_header_value("Authorization"), settings_.read_token))
      return true;
    send_error(res, 403, "read token refused");
    return false;
  }
  std::string credential = req.get_header_value(kMungeHeader);
  if (credential.empty()) {
    send_error(res, 401,
               std::string(settings_.read_token.empty()
                               ? ""
                               : "no read token (Authorization: Bearer <token>) and ") +
                   "no credential (header X-Firstfault-Munge, payload \"firstfault-read " +
                   req.path + "\"); read_access is 'credential'");
    return false;
  }
  AuthDecision auth = auth_.check_read(credential, "firstfault-read " + req.path);
  if (auth.status != 200) {
    send_error(res, auth.status, auth.error);
    return false;
  }
  return true;
}

void HttpApi::diagnosis(const httplib::Request& req, httplib::Response& res) {
  if (!may_read(req, res)) return;
  std::string job_id = req.matches[1];
  if (!valid_job_id(job_id)) return send_error(res, 400, "job id not valid");
  auto pass = store_.latest_pass(job_id, -1);
  if (!pass) return send_error(res, 404, "no diagnosis for job " + job_id);
  // The engine's own bytes when the pass file is there; the stored JSON else.
  std::string text = read_text(layout_.passes({job_id, pass->attempt}) /
                               (std::to_string(pass->pass_no) + ".json"));
  if (text.empty()) text = pass->diagnosis.dump(2) + "\n";
  res.status = 200;
  set_json_reply(&req, res, std::move(text));
}

void HttpApi::diagnoses(const httplib::Request& req, httplib::Response& res) {
  if (!may_read(req, res)) return;
  ListFilter filter;
  filter.node = req.get_param_value("node");
  if (!filter.node.empty() && !valid_node_name(filter.node))
    return send_error(res, 400, "node: not a node name");
  try {
    if (req.has_param("since")) filter.since = std::stoll(req.get_param_value("since"));
    if (req.has_param("limit")) filter.limit = std::stoi(req.get_param_value("limit"));
  } catch (const std::exception&) {
    return send_error(res, 400, "since and limit must be integers (since: unix seconds)");
  }
  if (filter.limit < 1 || filter.limit > 1000)
    return send_error(res, 400, "limit must be between 1 and 1000");
  // failures=1: leave out completed jobs in the store, so a limit of 200
  // means 200 failures (the dashboard's list).
  std::string failures = req.get_param_value("failures");
  filter.failures_only = failures == "1" || failures == "true";
  json out = json::array();
  for (const auto& p : store_.list(filter)) out.push_back(pass_summary(p));
  send_json(res, 200, {{"diagnoses", out}});
}

void HttpApi::suspects(const httplib::Request& req, httplib::Response& res) {
  if (!may_read(req, res)) return;
  // The agent's clock only chooses the window; nothing here feeds the engine.
  auto now = static_cast<std::int64_t>(std::time(nullptr));
  std::int64_t since = now - settings_.suspects.window_s;
  if (req.has_param("since")) {
    std::string text = req.get_param_value("since");
    // Unix seconds like /api/v1/diagnoses (0 included), else what
    // `firstfault suspects --since` takes.
    std::optional<std::int64_t> parsed;
    if (!text.empty() && text.size() <= 12 &&
        text.find_first_not_of("0123456789") == std::string::npos)
      parsed = std::stoll(text);
    else
      parsed = parse_since(text, now);
    if (!parsed)
      return send_error(res, 400, "since: unix seconds, RFC 3339 or an age (90m, 24h, 7d, 2w)");
    since = *parsed;
  }
  std::string all = req.get_param_value("all");
  bool include_unflagged = all == "1" || all == "true";
  auto report = find_suspects(store_.sightings(since), settings_.suspects, since, now);
  send_json(res, 200, suspects_to_json(report, include_unflagged));
}

}  // namespace ff::agent
