// An httplib::Server that owns every connection it accepts, so that no
// client, authenticated or not, can hold the agent's workers or memory:
//   - the socket is close-on-exec at once (scontrol children never inherit
//     a client's connection);
//   - at most max_connections open connections in all and
//     max_connections_per_peer from one address; one over is answered 503
//     and closed without blocking the accepting thread;
//   - one poller thread waits for the complete header block of every
//     request (its first byte to its empty line within header_timeout,
//     idle keep-alive time included) before any worker sees it, so slow or
//     idle clients hold a file descriptor and a small buffer, never a
//     worker;
//   - a request with complete headers goes to the workers of its lane
//     (lane_of, from the request line): each lane has its own threads and a
//     bounded queue (503 when full), so uploads, fast passes and probes
//     cannot starve one another;
//   - the worker reads the body and writes the reply through a stream with
//     a per-read/write timeout (io_timeout) and a total deadline: the body
//     must arrive within request_timeout of the headers, the reply must be
//     taken within request_timeout of its first byte.
// httplib 0.11 (Debian's compiled library) accepts in listen_after_bind()
// and hands each socket to the private virtual process_and_close_socket();
// this class overrides it and drives the protected process_request() with
// its own Stream. Its task queue (new_task_queue) runs that at once on the
// accepting thread; do not replace it.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace ff::agent {

struct ConnectionLimits {
  std::size_t max_connections = 512;
  std::size_t max_connections_per_peer = 32;
  std::chrono::milliseconds header_timeout{10000};
  std::chrono::milliseconds request_timeout{120000};
  std::chrono::milliseconds io_timeout{60000};
  // Request line and headers together; more is answered 431.
  std::size_t max_header_bytes = 32768;
};

struct Lane {
  std::string name;             // for the log
  std::size_t workers = 1;      // requests of this lane served at once
  std::size_t max_waiting = 0;  // with complete headers, waiting for a worker; more: 503
};

class GuardedServer : public httplib::Server {
 public:
  // Index into `lanes` for a request line's method and path (no query).
  using LaneOf = std::function<std::size_t(std::string_view method, std::string_view path)>;

  GuardedServer(ConnectionLimits limits, std::vector<Lane> lanes, LaneOf lane_of);
  ~GuardedServer() override;
  GuardedServer(const GuardedServer&) = delete;
  GuardedServer& operator=(const GuardedServer&) = delete;

  // For the handler (or pre-routing handler) of the request this thread
  // serves: the reply goes out before the request's body was read, so the
  // connection ends after it. The unread bytes are discarded for a moment
  // (linger) so that the client still reads the reply.
  static void close_after_reply();

  // Connections open now (accepted, not yet closed); for tests and the log.
  std::size_t open_connections() const;

 private:
  struct Connection;
  class ConnectionStream;
  class AcceptInline;
  using ConnectionPtr = std::shared_ptr<Connection>;

  struct LaneState {
    Lane lane;
    std::unique_ptr<httplib::ThreadPool> pool;
    std::atomic<std::size_t> queued{0};  // waiting or being served
  };

  bool process_and_close_socket(socket_t sock) override;

  void start_serving();
  void stop_serving();
  void poll_loop();
  void hand_to_poller(ConnectionPtr c);
  // Poller side: true when `c` stays in the poller's set.
  bool on_readable(const ConnectionPtr& c);
  bool dispatch_if_complete(const ConnectionPtr& c);
  void serve(const ConnectionPtr& c, LaneState& lane);
  // Sends a short canned reply without blocking and lingers.
  void refuse(const ConnectionPtr& c, int status, const char* message);
  void linger(const ConnectionPtr& c);
  void close_connection(const ConnectionPtr& c);
  void log_refusals(bool force);

  ConnectionLimits limits_;
  LaneOf lane_of_;
  std::vector<std::unique_ptr<LaneState>> lanes_;

  mutable std::mutex mutex_;
  std::size_t open_ = 0;
  std::map<std::string, std::size_t> per_peer_;
  std::vector<ConnectionPtr> incoming_;  // for the poller
  bool serving_ = false;
  std::thread poller_;
  int wake_[2] = {-1, -1};  // pipe: wakes the poller

  // Refusals since the last log line (one line every few seconds at most:
  // a flood must not become a flood of log lines).
  std::atomic<unsigned long> refused_total_{0}, refused_peer_{0}, refused_lane_{0},
      refused_header_{0}, expired_header_{0};
  std::chrono::steady_clock::time_point last_refusal_log_{};
};

}  // namespace ff::agent
