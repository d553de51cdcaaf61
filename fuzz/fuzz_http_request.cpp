// Fuzzes the agent's HTTP request handling: every input is sent as raw bytes
// over a fresh loopback connection to a real httplib::Server that carries the
// agent's routes (server/http_api.h, constructed as agent_daemon.cpp does,
// with a scratch state directory, a database holding one diagnosis of job 12,
// no scontrol and no munged needed). The client writes the input and reads
// what comes back until the connection is quiet for kQuietMs (the server
// answered and waits for the next keep-alive request, or waits for more of
// this one), then half-closes it (so the server never waits for bytes that
// will not come) and reads until the server closes, at most kReplyTimeoutMs
// in all. Half-closing at once would lose the replies: httplib does not
// write a response once it sees the client's end of stream. An input without
// an empty line ends no request header, so it is half-closed at once.
//
// Must not crash, hang (no reply end within the timeout aborts) or leak
// (LeakSanitizer; a file-descriptor count that keeps growing aborts).
// Requests with an X-Firstfault-Munge header reach the credential check: it
// answers 503 without munged and 401 with it (no input is a valid
// credential), so bundles are never stored and no pass runs. Reads are open
// (read_access: open), so the GET handlers run without a credential.
//
// Debian's cpp-httplib is a compiled library (libcpp-httplib.so) without
// sanitizer or coverage instrumentation: its request parser is exercised
// but only its crashes and the sanitizers' libc interceptors see errors
// there; coverage feedback comes from the handlers and the inline parts of
// httplib.h. FF_FUZZ_HTTP_PRINT=1 prints every reply (to check the seeds).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/server/bundle_receiver.h"
#include "agent/server/http_api.h"
#include "agent/server/job_locks.h"
#include "agent/server/job_tracker.h"
#include "agent/server/pass_runner.h"
#include "agent/server/request_auth.h"
#include "agent/slurm/slurm_client.h"
#include "agent/store/diagnosis_store.h"
#include "engine/rules/compiled_rules.h"
#include "fuzz/fuzz_common.h"

namespace {

namespace fs = std::filesystem;
using namespace ff::agent;

constexpr int kReplyTimeoutMs = 30000;
constexpr int kQuietMs = 25;
constexpr std::size_t kMaxOpenFds = 256;

SlurmPaths no_slurm() {
  SlurmPaths p;
  p.scontrol = (fuzz::scratch_dir() / "no-scontrol").string();  // never exists: lookups fail
  p.sacctmgr = "";
  p.timeout_s = 1;
  return p;
}

// The agent as run_agent() assembles it, serving on 127.0.0.1:<any port>.
// Created once and never destroyed: the server thread runs until the fuzzer
// exits.
struct Agent {
  StateLayout layout{fuzz::scratch_dir() / "state"};
  std::unique_ptr<DiagnosisStore> store;
  SlurmClient slurm{no_slurm()};
  RequestAuth auth{{}, "", &slurm};
  JobLocks locks;
  std::shared_ptr<const ff::CompiledRules> rules;
  std::unique_ptr<PassRunner> runner;
  std::unique_ptr<JobTracker> tracker;
  std::unique_ptr<BundleReceiver> receiver;
  std::unique_ptr<HttpApi> api;
  std::thread server;
  int port = -1;

  Agent() {
    fs::create_directories(layout.root() / "jobs");
    fs::create_directories(layout.tmp());
    store = DiagnosisStore::open((fuzz::scratch_dir() / "agent.db").string());
    // One stored pass, so GET /api/v1/jobs/12/diagnosis and /api/v1/diagnoses find something.
    store->add_pass("12", 0, "final",
                    {{"job_id", "12"},
                     {"verdict", "attributed"},
                     {"summary", "gpu/fallen_off_bus on n2 (Xid 79)"}},
                    1764478800);
    std::vector<ff::RuleError> errors;
    rules = ff::load_rules(false, {}, errors);
    runner = std::make_unique<PassRunner>(layout, *store, slurm, locks, rules);
    tracker = std::make_unique<JobTracker>(*runner, std::chrono::seconds(300));
    receiver = std::make_unique<BundleReceiver>(layout, *store, *tracker, BundleLimits{});
    ApiSettings settings;
    settings.max_request_bytes = 1 << 20;  // the fuzzer's inputs are smaller; 413 stays reachable
    settings.fastpass_wait = std::chrono::seconds(1);
    settings.read_open = true;  // agent.yaml read_access: open, so GET reaches the handlers
    api = std::make_unique<HttpApi>(settings, layout, *store, auth, *receiver, *tracker, *runner);
    port = api->bind("127.0.0.1", 0);
    if (port <= 0) {
      std::fprintf(stderr, "fuzz_http_request: cannot bind 127.0.0.1\n");
      std::abort();
    }
    tracker->start();
    server = std::thread([this] { api->listen(); });
    server.detach();
  }
};

std::size_t open_fds() {
  std::size_t n = 0;
  std::error_code ec;
  for (fs::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) ++n;
  return n;
}

// Sends `request` on a new connection and returns what the server sent back
// (see the top of the file for when the connection is half-closed).
std::string round_trip(int port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) std::abort();
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::perror("fuzz_http_request: connect");
    std::abort();
  }
  timeval send_timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout);
  std::size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may answer and close before reading everything
    sent += static_cast<std::size_t>(n);
  }
  bool header_end =
      request.find("\n\n") != std::string::npos || request.find("\n\r\n") != std::string::npos;
  bool half_closed = false;
  if (!header_end) {
    ::shutdown(fd, SHUT_WR);
    half_closed = true;
  }

  std::string reply;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kReplyTimeoutMs);
  char buf[8192];
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      std::fprintf(stderr, "fuzz_http_request: no end of reply within %d ms (%zu bytes so far)\n",
                   kReplyTimeoutMs, reply.size());
      std::abort();
    }
    pollfd p{fd, POLLIN, 0};
    int r =
        ::poll(&p, 1, static_cast<int>(half_closed ? left : std::min<long long>(left, kQuietMs)));
    if (r < 0) continue;
    if (r == 0) {
      if (!half_closed) {  // quiet: the server waits for us; tell it nothing more comes
        ::shutdown(fd, SHUT_WR);
        half_closed = true;
      }
      continue;  // the deadline check above ends it
    }
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;  // closed (or reset after an early answer)
    reply.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return reply;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // the request log would fill the fuzzer's output
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Agent* agent = new Agent();  // reachable from here: no leak report at exit
  static std::size_t runs = 0;
  std::string reply =
      round_trip(agent->port, std::string(reinterpret_cast<const char*>(data), size));
  static const bool print = std::getenv("FF_FUZZ_HTTP_PRINT") != nullptr;  // debugging seeds
  if (print) std::fprintf(stderr, "---- reply (%zu bytes)\n%s\n", reply.size(), reply.c_str());
  // A reply, when there is one, is HTTP.
  if (!reply.empty() && reply.rfind("HTTP/1.", 0) != 0) {
    std::fprintf(stderr, "fuzz_http_request: reply is not HTTP: %.80s\n", reply.c_str());
    std::abort();
  }
  if (++runs % 256 == 0 && open_fds() > kMaxOpenFds) {
    std::fprintf(stderr, "fuzz_http_request: %zu open file descriptors\n", open_fds());
    std::abort();
  }
  return 0;
}
