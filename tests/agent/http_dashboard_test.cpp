// The read-only dashboard, served by the real agent and rendered by a real
// headless Chromium (/usr/bin/chromium, Debian's `chromium`; the browser
// tests skip when it is absent):
//  - the static files are public, with Content-Security-Policy
//    default-src 'self' and Cache-Control no-cache; the API is not;
//  - read_token_file: `Authorization: Bearer <token>` reads (right 200,
//    wrong 403, none 401), never writes; a token file others may read stops
//    the agent from starting;
//  - the page: a job's diagnosis (root-cause node, sub_domain, evidence
//    lines per node, demoted symptoms), the recent failures, the suspects
//    (or "suspects unavailable"), the token form on 401; the job's own
//    output quoted in evidence, carrying markup, shows as text; the page
//    requests nothing but the agent (Chromium's net log);
//  - a screenshot of the job page (<build dir>/dashboard-job.png).
// The browser gets the token in the URL fragment (#/job/48213?token=...),
// which the page keeps in sessionStorage: fragments never reach a server.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <regex>
#include <set>

#include "common/run_process.h"
#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

constexpr const char* kChromium = "/usr/bin/chromium";
constexpr const char* kToken = "dashboard-test-token-6f1d2a9c0b";
// The job's own output, quoted in an evidence line: were it markup, the
// image would fail to load and its handler would add a <pwned> element.
constexpr const char* kHostile =
    "<img src=x onerror=document.body.appendChild(document.createElement('pwned'))>";

fs::path write_token(const fs::path& dir, mode_t mode) {
  fs::path p = dir / "read.token";
  write_file(p, std::string(kToken) + "\n");
  EXPECT_EQ(::chmod(p.c_str(), mode), 0);
  return p;
}

// Example 01 (Xid 79 on gpu-a02, NCCL timeouts elsewhere) through the real
// upload path, the markup appended to the first line of the job's output
// (srun's task exit on gpu-a01: evidence of a demoted symptom).
void store_hostile_example(AgentProcess& agent, httplib::Client& client, json* stored = nullptr) {
  for (auto b : example_bundles("01-xid79-fallen-off-bus", "epilog", 1797000000000000000LL)) {
    for (auto& [name, content] : b.files)
      if (name == "app/slurm-48213.out")
        content.insert(content.find('\n'), std::string(" ") + kHostile);
    auto res = upload(client, b);
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 201) << res->body;
  }
  auto d = wait_for_diagnosis(client, "48213");
  ASSERT_TRUE(d) << agent.log();
  ASSERT_NE(d->dump().find("<img src=x onerror="), std::string::npos) << "no hostile evidence";
  if (stored) *stored = *d;
}

bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

int status_of(httplib::Client& client, const std::string& path, const httplib::Headers& h = {}) {
  auto res = client.Get(path, h);
  return res ? res->status : -1;
}

httplib::Headers bearer(const std::string& token) {
  return {{"Authorization", "Bearer " + token}};
}

TEST(Dashboard, StaticFilesArePublicWithAStrictPolicy) {
  AgentProcess agent;  // read_access: credential (the default)
  auto client = agent.client();
  auto root = client.Get("/");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->status, 303);
  EXPECT_EQ(root->get_header_value("Location"), "/dashboard/");
  EXPECT_EQ(status_of(client, "/dashboard"), 303);

  struct File {
    std::string path, type, marker;
  };
  for (const File& f :
       {File{"/dashboard/", "text/html; charset=utf-8", "<script src=\"dashboard.js\""},
        File{"/dashboard/index.html", "text/html; charset=utf-8", "<main id=\"app\""},
        File{"/dashboard/dashboard.js", "text/javascript; charset=utf-8", "textContent"},
        File{"/dashboard/dashboard.css", "text/css; charset=utf-8", ".timeline"}}) {
    auto res = client.Get(f.path);
    ASSERT_TRUE(res) << f.path;
    EXPECT_EQ(res->status, 200) << f.path;
    EXPECT_EQ(res->get_header_value("Content-Type"), f.type) << f.path;
    EXPECT_EQ(res->get_header_value("Cache-Control"), "no-cache") << f.path;
    EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff") << f.path;
    std::string csp = res->get_header_value("Content-Security-Policy");
    EXPECT_EQ(csp.rfind("default-src 'self'", 0), 0u) << f.path << ": " << csp;
    EXPECT_EQ(csp.find("unsafe"), std::string::npos) << csp;
    EXPECT_NE(res->body.find(f.marker), std::string::npos) << f.path;
  }
  for (const char* missing :
       {"/dashboard/nope.js", "/dashboard/..%2fagent.yaml", "/dashboard/../agent.yaml",
        "/dashboard/%2e%2e/agent.yaml", "/dashboard/sub/dashboard.js"})
    EXPECT_EQ(status_of(client, missing), 404) << missing;
  // The files are public; the data is not.
  EXPECT_EQ(status_of(client, "/api/v1/diagnoses"), 401);
}

TEST(Dashboard, ReadTokenReadsButNeverWrites) {
  ScratchDirectory dir{"agent"};
  fs::path token = write_token(dir.path(), 0640);
  AgentProcess agent("read_token_file: " + token.string() + "\n", ended_job());
  auto client = agent.client();
  store_hostile_example(agent, client);
  for (const std::string path : {"/api/v1/jobs/48213/diagnosis", "/api/v1/diagnoses"}) {
    EXPECT_EQ(status_of(client, path, bearer(kToken)), 200) << path;
    EXPECT_EQ(status_of(client, path, bearer(std::string(kToken) + "x")), 403) << path;
    EXPECT_EQ(status_of(client, path, bearer("dashboard-test-token-6f1d2a9c0c")), 403) << path;
    EXPECT_EQ(status_of(client, path, bearer("")), 403) << path;
    EXPECT_EQ(status_of(client, path, {{"Authorization", std::string("Basic ") + kToken}}), 403)
        << path;
    EXPECT_EQ(status_of(client, path), 401) << path;
    // munge credentials still read.
    auto res = read(client, path);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << path;
  }
  auto listing = client.Get("/api/v1/diagnoses", bearer(kToken));
  ASSERT_TRUE(listing);
  EXPECT_NE(listing->body.find("\"48213\""), std::string::npos) << listing->body;
  // No write: an upload with the token and no credential is refused.
  Bundle b;
  b.job_id = "7";
  b.node = "n1";
  b.bundle_id = "n1-7-epilog-1";
  b.files = {{"job.json", R"({"job_id": "7"})"}};
  httplib::MultipartFormDataItems items = {
      {"meta",
       json({{"bundle_id", b.bundle_id}, {"job_id", "7"}, {"node", "n1"}, {"pass", "epilog"}})
           .dump(),
       "", "application/json"},
      {"file", "{}", "job.json", "application/json"}};
  auto up = client.Post("/api/v1/bundles", bearer(kToken), items);
  ASSERT_TRUE(up);
  EXPECT_EQ(up->status, 401) << up->body;
}

TEST(Dashboard, TokenFileOthersMayReadStopsTheAgent) {
  ScratchDirectory dir{"agent"};
  fs::path token = write_token(dir.path(), 0644);
  try {
    AgentProcess agent("read_token_file: " + token.string() + "\n");
    ADD_FAILURE() << "the agent started with a world-readable token file";
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("agent did not start"), std::string::npos) << what;
    EXPECT_NE(what.find(token.string() + " is readable or writable by other users (mode 0644)"),
              std::string::npos)
        << what;
  }
}

// ---- in the browser ------------------------------------------------------------

struct Page {
  bool ok = false;
  std::string dom;
  std::string log;  // Chromium's stderr: the page's console messages among it
  std::string describe;
};

// One headless Chromium run with a private profile and a time bound, so a
// hung browser fails the test. `extra`: --dump-dom, --screenshot=..., ...
Page chromium(const std::string& url, const std::vector<std::string>& extra) {
  ScratchDirectory profile{"agent"};
  std::vector<std::string> argv = {kChromium,
                                   "--headless=new",
                                   "--no-sandbox",  // as root in a container
                                   "--disable-gpu",
                                   "--user-data-dir=" + (profile.path() / "profile").string(),
                                   "--no-first-run",
                                   "--no-default-browser-check",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-default-apps",
                                   "--disable-extensions",
                                   "--disable-sync",
                                   "--virtual-time-budget=10000",
                                   "--enable-logging=stderr",  // the console, CSP refusals
                                   "--v=0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(url);
  ff::ProcessOptions options;
  options.timeout = std::chrono::seconds(90);
  options.max_output_bytes = 16 << 20;
  auto r = ff::run_process(argv, options);
  Page page;
  page.ok = r.ok();
  page.dom = r.out;
  page.log = r.err;
  page.describe = r.describe() + "\n" + r.err.substr(0, 4000);
  return page;
}

class DashboardBrowser : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fs::exists(kChromium)) return;
    token_dir_ = new ScratchDirectory("agent");
    fs::path token = write_token(token_dir_->path(), 0600);
    agent_ = new AgentProcess("read_token_file: " + token.string() + "\n", ended_job());
    auto client = agent_->client();
    diagnosis_ = new json;
    store_hostile_example(*agent_, client, diagnosis_);
  }
  static void TearDownTestSuite() {
    delete agent_;
    delete token_dir_;
    delete diagnosis_;
    diagnosis_ = nullptr;
    agent_ = nullptr;
    token_dir_ = nullptr;
  }
  void SetUp() override {
    if (!fs::exists(kChromium))
      GTEST_SKIP() << kChromium << " is absent (apt-get install chromium): no browser test";
    ASSERT_NE(agent_, nullptr);
    ASSERT_FALSE(HasFailure());
  }
  static std::string url(const std::string& fragment) {
    return "http://127.0.0.1:" + std::to_string(agent_->port()) + "/dashboard/#" + fragment;
  }
  static Page dump(const std::string& fragment, std::vector<std::string> extra = {}) {
    extra.push_back("--dump-dom");
    Page page = chromium(url(fragment), extra);
    EXPECT_TRUE(page.ok) << page.describe;
    // Nothing the policy had to stop (inline code, another origin), no
    // script error.
    EXPECT_FALSE(contains(page.log, "Content Security Policy")) << page.log;
    EXPECT_FALSE(contains(page.log, "Uncaught")) << page.log;
    return page;
  }

  static ScratchDirectory* token_dir_;
  static AgentProcess* agent_;
  static json* diagnosis_;  // as the API served it
};

ScratchDirectory* DashboardBrowser::token_dir_ = nullptr;
AgentProcess* DashboardBrowser::agent_ = nullptr;
json* DashboardBrowser::diagnosis_ = nullptr;

TEST_F(DashboardBrowser, JobPageShowsTheDiagnosisAndQuotesEvidenceAsText) {
  Page page = dump(std::string("/job/48213?token=") + kToken);
  const std::string& dom = page.dom;
  EXPECT_TRUE(contains(dom, R"(data-state="job")")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, R"(<span id="sub-domain">gpu.fallen_off_bus</span>)"));
  // The root-cause node: in the root causes and as the marked timeline lane.
  EXPECT_TRUE(contains(dom, R"(<td class="node root-cause-node">gpu-a02</td>)"));
  EXPECT_TRUE(std::regex_search(
      dom, std::regex(R"(<th class="lane lane-\d root-node" data-node="gpu-a02">gpu-a02)")));
  // One lane per node.
  for (const std::string node : {"gpu-a01", "gpu-a02", "gpu-a03"})
    EXPECT_TRUE(std::regex_search(
        dom, std::regex("<th class=\"lane lane-\\d( root-node)?\" data-node=\"" + node + "\">")))
        << node;
  // The Xid line, marked as root-cause evidence, in gpu-a02's lane.
  EXPECT_TRUE(std::regex_search(
      dom, std::regex(R"(data-node="gpu-a02"><div class="evidence root-cause" data-evidence="1" )"
                      R"(data-role="root-cause">[\s\S]*?NVRM: Xid \(PCI:0000:5d:00\): 79)")))
      << dom;
  // An NCCL watchdog line from gpu-a01: a demoted symptom's evidence.
  EXPECT_TRUE(contains(dom, "Watchdog caught collective operation timeout"));
  EXPECT_TRUE(contains(dom, R"(data-role="symptom-demoted")"));
  // The demoted symptoms, apart from the (here: no) active ones.
  auto demoted = dom.find(R"(<table id="demoted-symptoms">)");
  ASSERT_NE(demoted, std::string::npos);
  std::string demoted_table = dom.substr(demoted, dom.find("</table>", demoted) - demoted);
  EXPECT_TRUE(contains(demoted_table, "<td>nccl.timeout</td>"));
  EXPECT_TRUE(contains(demoted_table, "gpu.fallen_off_bus on gpu-a02"));
  EXPECT_FALSE(contains(dom, R"(id="active-symptoms")"));
  // The hostile line is text: escaped in the DOM, no element made of it.
  EXPECT_TRUE(contains(dom, "Exited with exit code 1 &lt;img src=x onerror=")) << dom;
  EXPECT_FALSE(contains(dom, "<img"));
  EXPECT_FALSE(contains(dom, "<pwned"));
  // Coverage gaps: the sources not read, one row each.
  int gaps = 0;
  for (const auto& c : (*diagnosis_)["coverage"])
    if (c["status"] != "ok") ++gaps;
  if (gaps == 0) {
    EXPECT_TRUE(contains(dom, R"(id="no-gaps")"));
  } else {
    std::regex row(R"(<tr class="gap">)");
    EXPECT_EQ(
        std::distance(std::sregex_iterator(dom.begin(), dom.end(), row), std::sregex_iterator()),
        gaps);
  }
  EXPECT_FALSE(contains(dom, R"(id="token-form")"));
}

TEST_F(DashboardBrowser, RecentFailuresListTheJob) {
  Page page = dump(std::string("/?token=") + kToken);
  EXPECT_TRUE(contains(page.dom, R"(data-state="failures")")) << page.dom;
  EXPECT_TRUE(contains(page.dom, R"(<tr data-job="48213">)")) << page.dom;
  EXPECT_TRUE(contains(page.dom, R"(<a href="#/job/48213" class="job">48213</a>)"));
  EXPECT_TRUE(contains(page.dom, R"(<span class="verdict verdict-attributed">attributed</span>)"));
  EXPECT_TRUE(contains(page.dom, R"(<td class="node">gpu-a02</td>)"));
}

TEST_F(DashboardBrowser, AsksForTheTokenWhenTheApiRefuses) {
  for (const std::string& fragment :
       {std::string("/"), std::string("/job/48213"), std::string("/?token=not-the-token-at-all")}) {
    Page page = dump(fragment);
    EXPECT_TRUE(contains(page.dom, R"(data-state="token")")) << fragment << "\n" << page.dom;
    EXPECT_TRUE(contains(page.dom, R"(<form id="token-form">)")) << fragment;
    EXPECT_FALSE(contains(page.dom, "data-job=")) << fragment;
    EXPECT_FALSE(contains(page.dom, "gpu-a02")) << fragment;
  }
}

TEST_F(DashboardBrowser, SuspectsOrSuspectsUnavailable) {
  auto client = agent_->client();
  auto api = client.Get("/api/v1/suspects", bearer(kToken));
  ASSERT_TRUE(api);
  Page page = dump(std::string("/suspects?token=") + kToken);
  if (api->status == 200) {
    EXPECT_TRUE(contains(page.dom, R"(data-state="suspects")")) << page.dom;
    json body = json::parse(api->body);
    for (const auto& s : body["suspects"])
      EXPECT_TRUE(contains(page.dom, ">" + s["id"].get<std::string>() + "<")) << s.dump();
  } else {
    // The endpoint is missing (or failing): said, not broken.
    EXPECT_TRUE(contains(page.dom, R"(data-state="suspects-unavailable")")) << page.dom;
    EXPECT_TRUE(contains(page.dom, "suspects unavailable: ")) << page.dom;
  }
}

// Chromium's own record of every request: all to the agent, none elsewhere.
TEST_F(DashboardBrowser, RequestsNothingButTheAgent) {
  ScratchDirectory out{"agent"};
  fs::path log = out.path() / "netlog.json";
  Page page = dump(std::string("/job/48213?token=") + kToken, {"--log-net-log=" + log.string()});
  ASSERT_TRUE(contains(page.dom, R"(data-state="job")"));
  json netlog = json::parse(read_file(log), nullptr, false);
  ASSERT_FALSE(netlog.is_discarded()) << log;
  int start_job = netlog["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"].get<int>();
  std::string origin = "http://127.0.0.1:" + std::to_string(agent_->port()) + "/";
  // What the page asked for carries its origin as initiator; the browser's
  // own traffic (component updates, time, accounts) has "not an origin".
  std::set<std::string> urls;
  for (const auto& e : netlog["events"]) {
    if (e.value("type", -1) != start_job || !e.contains("params")) continue;
    const auto& p = e["params"];
    if (p.value("initiator", "not an origin") != "not an origin") urls.insert(p.value("url", ""));
  }
  EXPECT_TRUE(urls.count(origin + "dashboard/dashboard.js")) << netlog["events"].size();
  EXPECT_TRUE(urls.count(origin + "api/v1/jobs/48213/diagnosis"));
  for (const auto& u : urls)
    EXPECT_EQ(u.rfind(origin, 0), 0u) << "request outside the agent: " << u;
}

TEST_F(DashboardBrowser, ScreenshotOfTheJobPage) {
  fs::path png = fs::path(FF_BINARY).parent_path().parent_path() / "dashboard-job.png";
  std::error_code ec;
  fs::remove(png, ec);
  Page page =
      chromium(url(std::string("/job/48213?token=") + kToken),
               {"--screenshot=" + png.string(), "--window-size=1400,1000", "--hide-scrollbars"});
  ASSERT_TRUE(page.ok) << page.describe;
  std::string bytes = read_file(png);
  ASSERT_GT(bytes.size(), 24u) << png;
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  auto be32 = [&](std::size_t at) {
    return (static_cast<unsigned char>(bytes[at]) << 24) |
           (static_cast<unsigned char>(bytes[at + 1]) << 16) |
           (static_cast<unsigned char>(bytes[at + 2]) << 8) |
           static_cast<unsigned char>(bytes[at + 3]);
  };
  EXPECT_EQ(bytes.substr(12, 4), "IHDR");
  EXPECT_EQ(be32(16), 1400u);
  EXPECT_EQ(be32(20), 1000u);
  // A blank page compresses to a few kB; the job page is text and colour.
  EXPECT_GT(bytes.size(), 30000u);
  std::printf("dashboard screenshot: %s (%zu bytes)\n", png.c_str(), bytes.size());
}

}  // namespace
