// fetch_metrics against a local HTTP server that answers as Prometheus's
// /api/v1/query_range does — and as it fails: refused connection, 401, a
// proxy's HTML, a bad query, a timeout, warnings, empty results. Every case
// ends in a coverage status, never in a crash or a file that reads as health.
// Also the `prometheus:` config section: defaults, overrides, errors with
// file and line, and the {{nodes}} expansion.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "central/prometheus/prometheus_config.h"
#include "central/prometheus/prometheus_fetch.h"
#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace ff::sources {
namespace {

namespace fs = std::filesystem;
using ff::test_support::read_file;
using ff::test_support::ScratchDirectory;
using nlohmann::json;

// A local stand-in for Prometheus: `reply` decides each answer; requests are kept.
class FakePrometheus {
 public:
  using Reply = std::function<void(const httplib::Request&, httplib::Response&)>;
  explicit FakePrometheus(Reply reply) : reply_(std::move(reply)) {
    server_.Get("/api/v1/query_range", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(req);
      }
      reply_(req, res);
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~FakePrometheus() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<httplib::Request> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  Reply reply_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<httplib::Request> requests_;
};

const std::vector<std::string> kNodes = {"gpu-a01", "gpu-a02"};
const auto kStart = Clock::time_point(std::chrono::seconds(1793613600));
const auto kEnd = kStart + std::chrono::hours(1);

PrometheusConfig config_for(const std::string& url, std::vector<PrometheusQuery> queries = {}) {
  PrometheusConfig c;
  c.url = url;
  c.timeout_s = 2;
  c.queries = queries.empty() ? std::vector<PrometheusQuery>{{"up", "up{ {{node_selector}} }",
                                                              std::nullopt, std::nullopt}}
                              : queries;
  return c;
}

std::string matrix(const std::string& result, const std::string& extra = "") {
  return R"({"status":"success",)" + extra + R"("data":{"resultType":"matrix","result":)" + result +
         "}}";
}

const std::string kTwoNodes =
    R"([{"metric":{"__name__":"up","instance":"gpu-a01:9100"},"values":[[1793613600,"1"]]},)"
    R"({"metric":{"__name__":"up","instance":"gpu-a02:9100"},"values":[[1793613600,"1"]]}])";

TEST(PrometheusFetch, SuccessIsStoredAsSentAndAsksForTheWindowWithMargins) {
  std::string body = matrix(kTwoNodes);
  FakePrometheus prom([&](const httplib::Request&, httplib::Response& res) {
    res.set_content(body, "application/json");
  });
  ScratchDirectory dir{"prometheus"};
  auto cov = fetch_metrics(config_for(prom.url()), kNodes, kStart, kEnd, dir.path());
  ASSERT_EQ(cov.size(), 1u);
  EXPECT_EQ(cov[0].collector, "prometheus:up");
  EXPECT_EQ(cov[0].status_text(), "ok") << cov[0].detail;
  EXPECT_EQ(cov[0].detail, "2 series, 2 samples, 2/2 nodes");
  EXPECT_EQ(read_file(dir.path() / "metrics" / "up.json"), body);  // byte for byte
  auto reqs = prom.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].get_param_value("query"), R"(up{ instance=~"(gpu-a01|gpu-a02)([.:].*)?" })");
  EXPECT_EQ(reqs[0].get_param_value("start"), "1793613300.000");  // 300 s before
  EXPECT_EQ(reqs[0].get_param_value("end"), "1793617320.000");    // 120 s after
  EXPECT_EQ(reqs[0].get_param_value("step"), "15");
  EXPECT_FALSE(reqs[0].has_header("Authorization"));
}

TEST(PrometheusFetch, RefusedConnectionIsUnreachableAndWritesNothing) {
  int port;
  {
    FakePrometheus gone([](const httplib::Request&, httplib::Response&) {});
    port = std::stoi(gone.url().substr(gone.url().rfind(':') + 1));
  }  // stopped: nothing listens there now
  ScratchDirectory dir{"prometheus"};
  auto cov = fetch_metrics(config_for("http://127.0.0.1:" + std::to_string(port)), kNodes, kStart,
                           kEnd, dir.path());
  ASSERT_EQ(cov.size(), 1u);
  EXPECT_EQ(cov[0].status_text(), "unreachable");
  EXPECT_NE(cov[0].detail.find("no reply"), std::string::npos) << cov[0].detail;
  EXPECT_FALSE(fs::exists(dir.path() / "metrics" / "up.json"));
}

TEST(PrometheusFetch, SlowServerIsUnreachableWithinTheTimeout) {
  FakePrometheus prom([](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    res.set_content(matrix("[]"), "application/json");
  });
  ScratchDirectory dir{"prometheus"};
  PrometheusConfig c = config_for(prom.url());
  c.timeout_s = 0.3;
  auto t0 = std::chrono::steady_clock::now();
  auto cov = fetch_metrics(c, kNodes, kStart, kEnd, dir.path());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1200));
  EXPECT_EQ(cov.at(0).status_text(), "unreachable") << cov[0].detail;
}

TEST(PrometheusFetch, BearerTokenIsSentAnd401IsUnauthorised) {
  FakePrometheus prom([](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Authorization") != "Bearer s3cret") {
      res.status = 401;
      res.set_content("Unauthorized\n", "text/plain");
      return;
    }
    res.set_content(matrix(kTwoNodes), "application/json");
  });
  ScratchDirectory dir{"prometheus"};
  std::ofstream(dir.path() / "token") << "wrong\n";
  PrometheusConfig c = config_for(prom.url());
  c.bearer_token_file = (dir.path() / "token").string();
  auto cov = fetch_metrics(c, kNodes, kStart, kEnd, dir.path());
  EXPECT_EQ(cov.at(0).status_text(), "unauthorised");
  EXPECT_EQ(cov[0].detail, "HTTP 401: Unauthorized");
  EXPECT_FALSE(fs::exists(dir.path() / "metrics" / "up.json"));

  std::ofstream(dir.path() / "token") << "s3cret\n";
  cov = fetch_metrics(c, kNodes, kStart, kEnd, dir.path());
  EXPECT_EQ(cov.at(0).status_text(), "ok") << cov[0].detail;
}

TEST(PrometheusFetch, MissingTokenFileIsAnErrorBeforeAnyRequest) {
  FakePrometheus prom([](const httplib::Request&, httplib::Response& res) {
    res.set_content(matrix("[]"), "application/json");
  });
  ScratchDirectory dir{"prometheus"};
  PrometheusConfig c = config_for(prom.url());
  c.bearer_token_file = (dir.path() / "nope").string();
  auto cov = fetch_metrics(c, kNodes, kStart, kEnd, dir.path());
  EXPECT_EQ(cov.at(0).status_text(), "error");
  EXPECT_NE(cov[0].detail.find("cannot read bearer_token_file"), std::string::npos);
  EXPECT_TRUE(prom.requests().empty());
}

TEST(PrometheusFetch, MalformedRepliesAreErrors) {
  std::vector<std::pair<std::string, std::string>> cases = {
      {"<html><body>502 Bad Gateway</body></html>", "malformed reply"},
      {R"({"status":"success"})", "no data.result matrix"},
      {R"({"status":"success","data":{"resultType":"vector","result":[]}})", "no data.result"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[)", "malformed reply"},
      {"", "malformed reply"},
  };
  for (const auto& c : cases) {
    // Named copies: clang 14 cannot capture structured bindings in a lambda.
    const std::string body = c.first, why = c.second;
    FakePrometheus prom([&](const httplib::Request&, httplib::Response& res) {
      res.set_content(body, "application/json");
    });
    ScratchDirectory dir{"prometheus"};
    auto cov = fetch_metrics(config_for(prom.url()), kNodes, kStart, kEnd, dir.path());
    EXPECT_EQ(cov.at(0).status_text(), "error") << body;
    EXPECT_NE(cov[0].detail.find(why), std::string::npos) << cov[0].detail;
    EXPECT_FALSE(fs::exists(dir.path() / "metrics" / "up.json")) << body;
  }
}

TEST(PrometheusFetch, RefusedQueryKeepsPrometheusExplanation) {
  FakePrometheus prom([](const httplib::Request&, httplib::Response& res) {
    res.status = 400;
    res.set_content(
        R"({"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected \"}\""})",
        "application/json");
  });
  ScratchDirectory dir{"prometheus"};
  auto cov = fetch_metrics(config_for(prom.url()), kNodes, kStart, kEnd, dir.path());
  EXPECT_EQ(cov.at(0).status_text(), "error");
  EXPECT_EQ(cov[0].detail, "HTTP 400 bad_data: 1:5: parse error: unexpected \"}\"");
}

TEST(PrometheusFetch, EmptyResultIsEmptyAndStillStored) {
  FakePrometheus prom([](const httplib::Request&, httplib::Response& res) {
    res.set_content(matrix("[]"), "application/json");
  });
  ScratchDirectory dir{"prometheus"};
  auto cov = fetch_metrics(config_for(prom.url()), kNodes, kStart, kEnd, dir.path());
  EXPECT_EQ(cov.at(0).status_text(), "empty");
  EXPECT_TRUE(fs::exists(dir.path() / "metrics" / "up.json"));
}

TEST(PrometheusFetch, NodeWithoutSeriesOrWarningsArePartial) {
  std::string one =
      R"([{"metric":{"__name__":"up","instance":"gpu-a01:9100"},"values":[[1793613600,"1"]]}])";
  FakePrometheus prom([&](const httplib::Request& req, httplib::Response& res) {
    if (req.get_param_value("query").find("warned") != std::string::npos)
      res.set_content(matrix(kTwoNodes, R"("warnings":["remote read: store s3 unavailable"],)"),
                      "application/json");
    else
      res.set_content(matrix(one), "application/json");
  });
  ScratchDirectory dir{"prometheus"};
  auto cov =
      fetch_metrics(config_for(prom.url(), {{"up", "up", std::nullopt, std::nullopt},
                                            {"warned", "warned", std::nullopt, std::nullopt}}),
                    kNodes, kStart, kEnd, dir.path());
  ASSERT_EQ(cov.size(), 2u);
  EXPECT_EQ(cov[0].status_text(), "partial");
  EXPECT_NE(cov[0].detail.find("no series for gpu-a02"), std::string::npos) << cov[0].detail;
  EXPECT_EQ(cov[1].status_text(), "partial");
  EXPECT_NE(cov[1].detail.find("store s3 unavailable"), std::string::npos) << cov[1].detail;
  EXPECT_TRUE(fs::exists(dir.path() / "metrics" / "warned.json"));
}

TEST(PrometheusFetch, LongWindowsRaiseTheStepUnderPrometheusPointLimit) {
  EXPECT_EQ(prometheus_step_s(15, kStart, kStart + std::chrono::hours(24)), 15);
  double step = prometheus_step_s(15, kStart, kStart + std::chrono::hours(24 * 7));
  EXPECT_EQ(step, 61);  // 604800 s / 10000, rounded up
  EXPECT_LE(7 * 24 * 3600 / step, 10000);
}

TEST(PrometheusConfig, DefaultsAndOverrides) {
  YAML::Node n = YAML::Load(R"(
url: http://prom:9090/
step_s: 30
node_label: Hostname
queries:
  - {name: up, query: 'up{job="node", {{node_selector}}}'}
  - {name: fans, query: 'ipmi_fan_speed_rpm{ {{node_selector}} }', step_s: 60, node_label: instance}
)");
  PrometheusConfig c = parse_prometheus_config(n, "agent.yaml");
  EXPECT_EQ(c.url, "http://prom:9090");
  EXPECT_EQ(c.step_s, 30);
  std::vector<std::string> names;
  for (const auto& q : c.queries) names.push_back(q.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"gpu_xid", "gpu_ecc_dbe", "gpu_temperature", "gpu_power",
                                      "nvlink_errors", "ib_port_errors", "up", "fans"}));
  EXPECT_EQ(c.queries[6].query, R"(up{job="node", {{node_selector}}})");
  EXPECT_EQ(expand_prometheus_query(c.queries[7], c, {"gpu-a01"}),
            R"(ipmi_fan_speed_rpm{ instance=~"(gpu-a01)([.:].*)?" })");
  EXPECT_EQ(expand_prometheus_query(c.queries[0], c, {"gpu-a01"}),
            R"(DCGM_FI_DEV_XID_ERRORS{ Hostname=~"(gpu-a01)([.:].*)?" })");

  PrometheusConfig only = parse_prometheus_config(
      YAML::Load("url: http://p\ndefault_queries: false\nqueries: [{name: x, query: up}]\n"), "f");
  ASSERT_EQ(only.queries.size(), 1u);
}

TEST(PrometheusConfig, NodesAreEscapedForRe2InsideAPromQLString) {
  EXPECT_EQ(promql_node_alternation({"gpu-a01", "node1.cluster", "we\"ird"}),
            R"(gpu-a01|node1\\.cluster|we\"ird)");
}

TEST(PrometheusConfig, ErrorsNameFileAndLine) {
  std::vector<std::pair<std::string, std::string>> cases = {
      {"url: http://p\nstep_s: 0\n", "agent.yaml:2: 'step_s' must be more than 0"},
      {"url: http://p\nqueries:\n  - {name: ../x, query: up}\n", "agent.yaml:3: query name"},
      {"url: http://p\nqueries:\n  - {name: x}\n", "agent.yaml:3: query 'x' needs a 'query'"},
      {"url: http://p\nqueries:\n  - {name: x, query: up, stepp: 3}\n",
       "agent.yaml:3: unknown query setting 'stepp'"},
      {"url: http://p\nnode_label_regex: '(['\n", "agent.yaml:2: 'node_label_regex' does not"},
      {"url: ftp://p\n", "agent.yaml:1: 'url' must start with http"},
      {"timeout_s: 3\n", "agent.yaml:1: 'prometheus' needs a 'url'"},
      {"url: http://p\nquerys: []\n", "agent.yaml:2: unknown prometheus setting 'querys'"},
      {"url: http://p\nqueries:\n  - {name: a, query: up}\n  - {name: a, query: up}\n",
       "agent.yaml:4: query 'a' is defined twice"},
  };
  for (const auto& [yaml, want] : cases) {
    try {
      parse_prometheus_config(YAML::Load(yaml), "agent.yaml");
      ADD_FAILURE() << "accepted: " << yaml;
    } catch (const PrometheusConfigError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(want, 0), 0u) << e.what();
    }
  }
}

TEST(PrometheusConfig, FileNeedsAPrometheusSection) {
  ScratchDirectory dir{"prometheus"};
  std::ofstream(dir.path() / "c.yaml") << "loki:\n  url: http://l\n";
  EXPECT_THROW(load_prometheus_config_file((dir.path() / "c.yaml").string()),
               PrometheusConfigError);
  std::ofstream(dir.path() / "d.yaml") << "prometheus:\n  url: http://p:9090\n";
  EXPECT_EQ(load_prometheus_config_file((dir.path() / "d.yaml").string()).queries.size(), 7u);
}

}  // namespace
}  // namespace ff::sources
