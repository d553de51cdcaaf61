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
//  - a hang (a diagnosis with a `hang`, written into the agent's
//    database): the ranks x collectives grid, one row per
//    rank with the lagging rank first, one column per collective with the
//    divergence marked, a node name carrying markup shown as text; a job of
//    4,096 ranks draws 64 and says how many it left out; a diagnosis without
//    `hang` has no Hang section;
//  - screenshots of the job page and of the hang (<build dir>/dashboard-job.png,
//    dashboard-hang.png).
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

// Writes a pass of `job_id` into the agent's database: the diagnoses row
// only, which is all GET /api/v1/jobs/<id>/diagnosis (the page's source) reads.
void insert_diagnosis(const fs::path& db, const std::string& job_id, const json& diagnosis) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_busy_timeout(h, 5000);
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v2(
      h,
      "INSERT INTO diagnoses (job_id, attempt, pass_no, trigger, created_at, verdict, summary, "
      "diagnosis_json) VALUES (?1, 0, 1, 'final', strftime('%s', 'now'), ?2, ?3, ?4)",
      -1, &st, nullptr);
  std::string text = diagnosis.dump();
  std::string verdict = diagnosis.value("verdict", "unattributed");
  std::string summary = diagnosis.value("summary", "");
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(st, 1, job_id.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, verdict.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, summary.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, text.c_str(), -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(st);
  }
  std::string error = sqlite3_errmsg(h);
  sqlite3_finalize(st);
  sqlite3_close(h);
  ASSERT_EQ(rc, SQLITE_DONE) << error;
}

// A hang in the shape of the diagnosis' `hang` object (docs/spec/diagnosis.md):
// `size` ranks of process group 0, two per node, stopped at collective 808;
// `lagging` never reached it. Rank 5's node name carries markup.
json hang_of(int size, int lagging) {
  auto node = [](int rank) {
    return rank == 5 ? std::string(kHostile) : "gpu-b" + std::to_string(rank / 2 + 1);
  };
  json ranks = json::array();
  json rows = json::array();
  for (int r = 0; r < size; ++r) {
    bool lags = r == lagging;
    ranks.push_back({{"rank", r},
                     {"group_rank", r},
                     {"node", node(r)},
                     {"gpu", r % 2 ? "00000000:3B:00.0" : "00000000:5D:00.0"},
                     {"state", lags ? "lagging" : "joined"},
                     {"last_enqueued", lags ? 807 : 808},
                     {"last_completed", 807},
                     {"timed_out_at", lags ? json(nullptr) : json(808)},
                     {"op", nullptr},
                     {"sources", {"watchdog", "flight_recorder"}},
                     {"evidence", json::array()}});
    json cells = {"completed", "completed", "completed", lags ? "not_reached" : "started",
                  "not_reached"};
    if (r == 4) cells[3] = "enqueued";  // known from a log line only
    if (r == 6) cells[3] = "scheduled";
    if (r == 7) cells[4] = nullptr;  // nothing says
    rows.push_back({{"rank", r}, {"node", node(r)}, {"cells", cells}});
  }
  return {
      {"status", "lagging"},
      {"summary", "rank " + std::to_string(lagging) + " never reached ALLREDUCE 808 of " +
                      "process group 0; " + std::to_string(size - 1) + " other ranks wait in it"},
      {"process_groups",
       {{{"pg", "0"},
         {"name", "default_pg"},
         {"seq", 808},
         {"op", "ALLREDUCE"},
         {"status", "lagging"},
         {"size", size},
         {"ranks", ranks}},
        {{"pg", "2"},
         {"name", nullptr},
         {"seq", 41},
         {"op", nullptr},
         {"status", "all_joined"},
         {"size", 2},
         {"ranks",
          {{{"rank", 0}, {"group_rank", 0}, {"node", "gpu-b1"}, {"state", "joined"}},
           {{"rank", 1}, {"group_rank", 1}, {"node", "gpu-b1"}, {"state", "joined"}}}}}}},
      {"view", {{"pg", "0"}, {"seqs", {805, 806, 807, 808, 809}}, {"rows", rows}}}};
}

// Jobs 9301 (8 ranks, rank 3 lagging) and 9302 (4,096 ranks, rank 4,000
// lagging): the example's diagnosis with a `hang` added.
void store_hangs(AgentProcess& agent, const json& base) {
  json small = base;
  small["job_id"] = "9301";
  small["hang"] = hang_of(8, 3);
  insert_diagnosis(agent.state() / "firstfault.db", "9301", small);
  json large = base;
  large["job_id"] = "9302";
  large["hang"] = hang_of(4096, 4000);
  insert_diagnosis(agent.state() / "firstfault.db", "9302", large);
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
    store_hangs(*agent_, *diagnosis_);
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
  // The Hang section exactly when the diagnosis has a `hang` (this one's
  // watchdog lines leave a rank silent: "undetermined").
  bool hang = diagnosis_->contains("hang");
  EXPECT_EQ(contains(dom, R"(id="hang")"), hang);
  EXPECT_EQ(contains(dom, "hang-grid"), hang);
}

long matches(const std::string& s, const std::string& pattern) {
  std::regex re(pattern);
  return std::distance(std::sregex_iterator(s.begin(), s.end(), re), std::sregex_iterator());
}

// The part of `dom` from `start` to the first `end` after it ("" when absent).
std::string part(const std::string& dom, const std::string& start, const std::string& end) {
  auto from = dom.find(start);
  if (from == std::string::npos) return "";
  auto to = dom.find(end, from);
  return dom.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

TEST_F(DashboardBrowser, HangShowsRanksByCollectivesWithTheLaggingRankFirst) {
  Page page = dump(std::string("/job/9301?token=") + kToken);
  const std::string& dom = page.dom;
  ASSERT_TRUE(contains(dom, R"(data-state="job")")) << dom.substr(0, 3000);
  std::string hang = part(dom, R"(<section id="hang")", "</section>");
  ASSERT_FALSE(hang.empty()) << dom;
  EXPECT_TRUE(contains(hang, R"(data-status="lagging")"));
  EXPECT_TRUE(contains(hang, "rank 3 never reached ALLREDUCE 808 of process group 0"));
  // One table per process group, the lagging rank first in its rows.
  EXPECT_EQ(matches(hang, R"(<div class="hang-group" data-pg=")"), 2);
  std::string pg0 = part(hang, R"(<div class="hang-group" data-pg="0">)", "</table>");
  EXPECT_EQ(matches(pg0, R"(<tr data-rank=")"), 8) << pg0;
  EXPECT_TRUE(contains(pg0, R"(<tbody><tr data-rank="3" class="rank-row rank-lagging">)")) << pg0;
  // The grid: a row per rank, a column per collective.
  std::string grid =
      part(hang, R"(<table class="hang-grid" id="hang-grid" data-pg="0">)", "</table>");
  ASSERT_FALSE(grid.empty()) << hang;
  EXPECT_EQ(matches(grid, R"(<tr data-rank=")"), 8) << grid;
  EXPECT_EQ(matches(grid, R"(<th class="seq( divergence)?" data-seq="\d+")"), 5) << grid;
  EXPECT_EQ(matches(grid, R"(<td class="cell cell-)"), 8 * 5);
  EXPECT_TRUE(contains(grid, R"(<tbody><tr data-rank="3" class="rank-lagging">)")) << grid;
  // The divergence: collective 808's column, header and every cell.
  EXPECT_EQ(matches(grid, R"(<th class="seq divergence" data-seq="808")"), 1) << grid;
  EXPECT_EQ(matches(grid, R"(class="[^"]*divergence")"), 1 + 8 + 1);  // header, cells, its tag
  // Each state a word as well as a colour.
  EXPECT_TRUE(contains(grid,
                       R"(<td class="cell cell-not_reached divergence" data-state="not_reached" )"
                       R"(title="rank 3, collective 808: not reached">—</td>)"))
      << grid;
  EXPECT_TRUE(contains(grid, R"(data-state="started" title="rank 0, collective 808: )"
                             R"(started, not completed">started</td>)"));
  EXPECT_TRUE(contains(grid, R"(data-state="enqueued")"));
  EXPECT_TRUE(contains(grid, R"(data-state="scheduled")"));
  EXPECT_TRUE(
      contains(grid, R"(data-state="unknown" title="rank 7, collective 809: unknown">?</td>)"));
  EXPECT_TRUE(contains(hang, R"(<ul class="hang-legend">)"));
  // The node name with markup is text, in the table and in the grid.
  EXPECT_TRUE(contains(pg0, "<td class=\"node\">&lt;img src=x onerror=")) << pg0;
  EXPECT_TRUE(contains(grid, "&lt;img src=x onerror=")) << grid;
  EXPECT_FALSE(contains(dom, "<img"));
  EXPECT_FALSE(contains(dom, "<pwned"));
  EXPECT_FALSE(contains(hang, "more ranks not drawn"));
}

TEST_F(DashboardBrowser, HangOfThousandsOfRanksDrawsABoundedGrid) {
  auto started = std::chrono::steady_clock::now();
  Page page = dump(std::string("/job/9302?token=") + kToken);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  started)
                .count();
  const std::string& dom = page.dom;
  std::string hang = part(dom, R"(<section id="hang")", "</section>");
  ASSERT_FALSE(hang.empty()) << dom.substr(0, 3000);
  std::string grid = part(hang, R"(<table class="hang-grid")", "</table>");
  EXPECT_EQ(matches(grid, R"(<tr data-rank=")"), 64);
  EXPECT_TRUE(contains(grid, R"(<tbody><tr data-rank="4000" class="rank-lagging">)")) << grid;
  // Then by rank.
  EXPECT_TRUE(contains(grid, R"(</tr><tr data-rank="0" class="rank-joined">)"));
  // Said twice: under the process group's table and under the grid.
  EXPECT_EQ(matches(hang, "4032 more ranks not drawn\\."), 2) << hang.substr(0, 2000);
  EXPECT_LT(dom.size(), 1u << 20);
  std::printf("4,096-rank hang: page loaded and dumped in %lld ms, %zu bytes of DOM\n",
              static_cast<long long>(ms), dom.size());
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

// A PNG of the page at `fragment` in the build directory, checked to be an
// image of that size with more than a blank page in it.
void screenshot(const std::string& page_url, const std::string& name, unsigned width,
                unsigned height) {
  fs::path png = fs::path(FF_BINARY).parent_path().parent_path() / name;
  std::error_code ec;
  fs::remove(png, ec);
  Page page =
      chromium(page_url, {"--screenshot=" + png.string(),
                          "--window-size=" + std::to_string(width) + "," + std::to_string(height),
                          "--hide-scrollbars"});
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
  EXPECT_EQ(be32(16), width);
  EXPECT_EQ(be32(20), height);
  // A blank page compresses to a few kB; the job page is text and colour.
  EXPECT_GT(bytes.size(), 30000u);
  std::printf("dashboard screenshot: %s (%zu bytes)\n", png.c_str(), bytes.size());
}

TEST_F(DashboardBrowser, ScreenshotOfTheJobPage) {
  screenshot(url(std::string("/job/48213?token=") + kToken), "dashboard-job.png", 1400, 1000);
}

TEST_F(DashboardBrowser, ScreenshotOfTheHang) {
  screenshot(url(std::string("/job/9301?token=") + kToken), "dashboard-hang.png", 1400, 1600);
}

}  // namespace
