#include "agent/server/guarded_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ff::agent {

namespace {

using Clock = std::chrono::steady_clock;

// After a reply sent before the request's body was read, the connection
// lingers: what the client still sends is read and dropped, at most this
// long and this much, so that closing does not reset the connection before
// the client read the reply. A client that keeps sending past it is reset.
constexpr std::chrono::milliseconds kLinger{2000};
constexpr std::size_t kLingerBytes = 262144;
constexpr std::size_t kRecvChunk = 16384;
constexpr std::chrono::seconds kRefusalLogInterval{10};

thread_local bool tl_close_after_reply = false;

std::string reason_phrase(int status) {
  switch (status) {
    case 408:
      return "Request Timeout";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

std::string canned_reply(int status, const char* message) {
  std::string body = std::string("{\"error\":\"") + message + "\"}\n";
  return "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n" + (status == 503 ? "Retry-After: 1\r\n" : "") + "\r\n" + body;
}

void address_of(const sockaddr_storage& a, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(a);
    inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    port = ntohs(in.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(a);
    inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
    port = ntohs(in6.sin6_port);
  }
  ip = text;
}

int poll_ms(Clock::duration d) {
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(d).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, 60000));
}

}  // namespace

struct GuardedServer::Connection {
  int fd = -1;
  std::string peer_ip, local_ip;
  int peer_port = 0, local_port = 0;
  // Bytes received and not yet consumed by a request: buffer[consumed..].
  std::string buffer;
  std::size_t consumed = 0;
  bool lingering = false;
  std::size_t lingered_bytes = 0;  // read and dropped while lingering
  Clock::time_point deadline;      // headers complete by then (or linger ends)
  std::size_t requests = 0;        // served on this connection

  std::size_t unread() const { return buffer.size() - consumed; }
  void compact() {
    if (consumed == 0) return;
    buffer.erase(0, consumed);
    consumed = 0;
  }
};

// The stream process_request() reads and writes: the bytes the poller
// buffered first, then the socket, each wait bounded by io_timeout and by
// the request's total deadline.
class GuardedServer::ConnectionStream : public httplib::Stream {
 public:
  ConnectionStream(Connection& c, const ConnectionLimits& limits)
      : c_(c), limits_(limits), read_deadline_(Clock::now() + limits.request_timeout) {}

  bool is_readable() const override { return c_.unread() > 0 || wait(POLLIN, read_deadline_); }
  bool is_writable() const override { return wait(POLLOUT, write_deadline()); }

  // A read or write that failed or timed out: httplib may still answer
  // (400), but the connection is not reused, its request half read.
  bool broken() const { return broken_; }

  ssize_t read(char* ptr, size_t size) override {
    if (size == 0) return 0;
    if (c_.unread() == 0) {
      c_.buffer.clear();
      c_.consumed = 0;
      if (!wait(POLLIN, read_deadline_)) return fail();
      // httplib never asks for more than the request holds (the header
      // lines byte by byte, the body up to its Content-Length), so a large
      // read goes straight into its buffer.
      if (size >= kRecvChunk) {
        ssize_t n = receive(ptr, size);
        return n > 0 ? n : fail(n);
      }
      char chunk[kRecvChunk];
      ssize_t n = receive(chunk, sizeof chunk);
      if (n <= 0) return fail(n);
      c_.buffer.assign(chunk, static_cast<std::size_t>(n));
    }
    std::size_t k = std::min(size, c_.unread());
    std::memcpy(ptr, c_.buffer.data() + c_.consumed, k);
    c_.consumed += k;
    return static_cast<ssize_t>(k);
  }

  // All of it or -1: httplib writes a header line with one call and does
  // not retry a short write there.
  ssize_t write(const char* ptr, size_t size) override {
    if (!write_started_) {
      write_started_ = true;
      write_deadline_ = Clock::now() + limits_.request_timeout;
    }
    std::size_t done = 0;
    while (done < size) {
      if (!wait(POLLOUT, write_deadline_)) return fail();
      ssize_t n = ::send(c_.fd, ptr + done, size - done, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
        return fail();
      }
      done += static_cast<std::size_t>(n);
    }
    return static_cast<ssize_t>(size);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.peer_ip;
    port = c_.peer_port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.local_ip;
    port = c_.local_port;
  }
  socket_t socket() const override { return c_.fd; }

 private:
  Clock::time_point write_deadline() const {
    return write_started_ ? write_deadline_ : Clock::now() + limits_.request_timeout;
  }

  // Waits for `events` until io_timeout passes or `deadline` comes.
  bool wait(short events, Clock::time_point deadline) const {
    auto until = std::min(deadline, Clock::now() + limits_.io_timeout);
    for (;;) {
      auto now = Clock::now();
      if (now >= until) return false;
      pollfd p{c_.fd, events, 0};
      int r = ::poll(&p, 1, std::max(1, poll_ms(until - now)));
      if (r > 0) return true;  // readiness, or an error the next call reports
      if (r < 0 && errno != EINTR) return false;
    }
  }

  ssize_t receive(char* ptr, size_t size) {
    for (;;) {
      ssize_t n = ::recv(c_.fd, ptr, size, MSG_DONTWAIT);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait(POLLIN, read_deadline_)) continue;
      return -1;
    }
  }

  ssize_t fail(ssize_t result = -1) {
    broken_ = true;
    return result;
  }

  Connection& c_;
  const ConnectionLimits& limits_;
  bool broken_ = false;
  Clock::time_point read_deadline_;
  Clock::time_point write_deadline_{};
  bool write_started_ = false;
};

// httplib's accept loop enqueues process_and_close_socket(sock) for each
// connection; this queue runs it at once, on the accepting thread, which
// only counts the connection and passes it to the poller.
class GuardedServer::AcceptInline : public httplib::TaskQueue {
 public:
  explicit AcceptInline(GuardedServer& server) : server_(server) {}
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override { server_.stop_serving(); }

 private:
  GuardedServer& server_;
};

GuardedServer::GuardedServer(ConnectionLimits limits, std::vector<Lane> lanes, LaneOf lane_of)
    : limits_(limits), lane_of_(std::move(lane_of)) {
  for (auto& lane : lanes) {
    auto state = std::make_unique<LaneState>();
    state->lane = std::move(lane);
    state->lane.workers = std::max<std::size_t>(1, state->lane.workers);
    lanes_.push_back(std::move(state));
  }
  auto header_s = std::chrono::ceil<std::chrono::seconds>(limits_.header_timeout).count();
  set_keep_alive_timeout(std::max<time_t>(1, static_cast<time_t>(header_s)));
  new_task_queue = [this] {
    start_serving();
    return new AcceptInline(*this);
  };
}

GuardedServer::~GuardedServer() {
  stop_serving();
}

void GuardedServer::close_after_reply() {
  tl_close_after_reply = true;
}

std::size_t GuardedServer::open_connections() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return open_;
}

void GuardedServer::start_serving() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (serving_) return;
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  for (auto& lane : lanes_) lane->pool = std::make_unique<httplib::ThreadPool>(lane->lane.workers);
  serving_ = true;
  poller_ = std::thread([this] { poll_loop(); });
}

void GuardedServer::stop_serving() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!serving_) return;
    serving_ = false;
  }
  char byte = 1;
  (void)!::write(wake_[1], &byte, 1);
  poller_.join();
  // Requests being served finish; their connections close after them.
  for (auto& lane : lanes_) {
    lane->pool->shutdown();
    lane->pool.reset();
  }
  std::vector<ConnectionPtr> left;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    left.swap(incoming_);
  }
  for (auto& c : left) close_connection(c);
  ::close(wake_[0]);
  ::close(wake_[1]);
  wake_[0] = wake_[1] = -1;
  log_refusals(true);
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  // First of all: scontrol runs in other threads at any time.
  ::fcntl(sock, F_SETFD, ::fcntl(sock, F_GETFD) | FD_CLOEXEC);
  auto c = std::make_shared<Connection>();
  c->fd = sock;
  sockaddr_storage peer{}, local{};
  socklen_t len = sizeof peer;
  if (::getpeername(sock, reinterpret_cast<sockaddr*>(&peer), &len) == 0)
    address_of(peer, c->peer_ip, c->peer_port);
  len = sizeof local;
  if (::getsockname(sock, reinterpret_cast<sockaddr*>(&local), &len) == 0)
    address_of(local, c->local_ip, c->local_port);

  bool over_total = false, over_peer = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t& from_peer = per_peer_[c->peer_ip];
    over_total = !serving_ || open_ >= limits_.max_connections;
    over_peer = from_peer >= limits_.max_connections_per_peer;
    if (!over_total && !over_peer) {
      ++open_;
      ++from_peer;
    } else if (from_peer == 0) {
      per_peer_.erase(c->peer_ip);
    }
  }
  if (over_total || over_peer) {
    (over_peer ? refused_peer_ : refused_total_)++;
    // No linger here: the accepting thread must not wait, and a lingering
    // connection would be one more open connection.
    std::string reply = canned_reply(
        503, over_peer ? "too many connections from this address" : "too many connections");
    (void)!::send(sock, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    ::shutdown(sock, SHUT_WR);
    char drop[4096];
    while (::recv(sock, drop, sizeof drop, MSG_DONTWAIT) > 0) {
    }
    ::close(sock);
    return true;
  }
  spdlog::debug("http: {}:{} accepted ({} connections open)", c->peer_ip, c->peer_port,
                open_connections());
  c->deadline = Clock::now() + limits_.header_timeout;
  hand_to_poller(std::move(c));
  return true;
}

void GuardedServer::hand_to_poller(ConnectionPtr c) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (serving_) {
      incoming_.push_back(std::move(c));
      c = nullptr;
    }
  }
  if (c) {
    close_connection(c);
    return;
  }
  char byte = 1;
  (void)!::write(wake_[1], &byte, 1);
}

void GuardedServer::close_connection(const ConnectionPtr& c) {
  if (c->fd < 0) return;
  ::close(c->fd);
  c->fd = -1;
  std::lock_guard<std::mutex> lock(mutex_);
  --open_;
  auto it = per_peer_.find(c->peer_ip);
  if (it != per_peer_.end() && --it->second == 0) per_peer_.erase(it);
}

void GuardedServer::linger(const ConnectionPtr& c) {
  ::shutdown(c->fd, SHUT_WR);
  c->lingering = true;
  c->lingered_bytes = c->unread();
  c->buffer.clear();
  c->consumed = 0;
  c->deadline = Clock::now() + kLinger;
}

void GuardedServer::refuse(const ConnectionPtr& c, int status, const char* message) {
  std::string reply = canned_reply(status, message);
  (void)!::send(c->fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  linger(c);
}

void GuardedServer::log_refusals(bool force) {
  auto now = Clock::now();
  if (!force && now - last_refusal_log_ < kRefusalLogInterval) return;
  last_refusal_log_ = now;
  unsigned long total = refused_total_.exchange(0), peer = refused_peer_.exchange(0),
                lane = refused_lane_.exchange(0), header = refused_header_.exchange(0),
                expired = expired_header_.exchange(0);
  if (total + peer + lane + header + expired == 0) return;
  spdlog::warn(
      "connections refused: {} over max_connections, {} over max_connections_per_peer, {} with "
      "their lane's workers and queue full, {} with headers over {} bytes; {} closed without "
      "complete headers within {} s",
      total, peer, lane, header, limits_.max_header_bytes, expired,
      std::chrono::duration_cast<std::chrono::seconds>(limits_.header_timeout).count());
}

bool GuardedServer::dispatch_if_complete(const ConnectionPtr& c) {
  std::string_view unread(c->buffer.data() + c->consumed, c->unread());
  // The empty line that ends the headers; httplib ends them at the first
  // line that is exactly CRLF, which always follows a line's LF.
  if (unread.find("\n\r\n") == std::string_view::npos) {
    if (c->unread() >= limits_.max_header_bytes) {
      refused_header_++;
      refuse(c, 431, "request headers too large");
      return false;
    }
    return false;
  }
  c->compact();
  std::string_view line(c->buffer);
  line = line.substr(0, line.find('\n'));
  std::string_view method = line.substr(0, line.find(' '));
  std::string_view path;
  if (method.size() < line.size()) {
    path = line.substr(method.size() + 1);
    path = path.substr(0, std::min(path.find(' '), path.find('?')));
  }
  std::size_t index = std::min(lane_of_(method, path), lanes_.size() - 1);
  LaneState& lane = *lanes_[index];
  if (lane.queued.load() >= lane.lane.workers + lane.lane.max_waiting) {
    refused_lane_++;
    refuse(c, 503, "busy: too many requests of this kind");
    return false;
  }
  ++lane.queued;
  lane.pool->enqueue([this, c, &lane] { serve(c, lane); });
  return true;
}

bool GuardedServer::on_readable(const ConnectionPtr& c) {
  char chunk[kRecvChunk];
  std::size_t want = sizeof chunk;
  if (!c->lingering) want = std::min(want, limits_.max_header_bytes + 1 - c->unread());
  ssize_t n = ::recv(c->fd, chunk, want, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
  if (n <= 0) {
    close_connection(c);
    return false;
  }
  if (c->lingering) {
    c->lingered_bytes += static_cast<std::size_t>(n);
    if (c->lingered_bytes <= kLingerBytes) return true;
    close_connection(c);
    return false;
  }
  c->buffer.append(chunk, static_cast<std::size_t>(n));
  if (dispatch_if_complete(c)) return false;
  return true;  // still waiting, or lingering after a refusal
}

void GuardedServer::poll_loop() {
  std::vector<ConnectionPtr> waiting, next;
  std::vector<pollfd> fds;
  for (;;) {
    std::vector<ConnectionPtr> added;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!serving_) break;
      added.swap(incoming_);
    }
    for (auto& c : added) {
      // A keep-alive client may have sent its next request already.
      if (c->lingering || !dispatch_if_complete(c)) waiting.push_back(std::move(c));
    }
    fds.assign(1, pollfd{wake_[0], POLLIN, 0});
    auto now = Clock::now();
    auto nearest = now + std::chrono::seconds(1);
    for (const auto& c : waiting) {
      fds.push_back(pollfd{c->fd, POLLIN, 0});
      nearest = std::min(nearest, c->deadline);
    }
    int r = ::poll(fds.data(), fds.size(), poll_ms(nearest - now) + 1);
    if (r < 0 && errno != EINTR) {
      spdlog::error("http poller: poll: {}", std::strerror(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (fds[0].revents) {
      char drain[256];
      while (::read(wake_[0], drain, sizeof drain) > 0) {
      }
    }
    now = Clock::now();
    next.clear();
    for (std::size_t i = 0; i < waiting.size(); ++i) {
      const ConnectionPtr& c = waiting[i];
      bool keep = true;
      if (r > 0 && fds[i + 1].revents) keep = on_readable(c);
      if (keep && now >= c->deadline) {
        if (!c->lingering) {
          expired_header_++;
          // Headers begun and not finished: say why before closing.
          if (c->unread() > 0) {
            std::string reply = canned_reply(408, "request headers not complete in time");
            (void)!::send(c->fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
          }
        }
        close_connection(c);
        keep = false;
      }
      if (keep) next.push_back(c);
    }
    waiting.swap(next);
    log_refusals(false);
  }
  for (auto& c : waiting) close_connection(c);
}

void GuardedServer::serve(const ConnectionPtr& c, LaneState& lane) {
  bool keep_open = false;
  bool linger_after = false;
  {
    ConnectionStream stream(*c, limits_);
    tl_close_after_reply = false;
    bool last = c->requests + 1 >= keep_alive_max_count_;
    bool client_closes = false;
    bool ok = false;
    try {
      ok = process_request(stream, last, client_closes, nullptr);
    } catch (const std::exception& e) {
      spdlog::error("http: {}:{}: {}", c->peer_ip, c->peer_port, e.what());
    } catch (...) {
      spdlog::error("http: {}:{}: unknown exception", c->peer_ip, c->peer_port);
    }
    ++c->requests;
    linger_after = ok && tl_close_after_reply && !stream.broken();
    keep_open = ok && !tl_close_after_reply && !last && !client_closes && !stream.broken();
    tl_close_after_reply = false;
  }
  --lane.queued;
  if (linger_after) {
    linger(c);
    hand_to_poller(c);
  } else if (keep_open) {
    c->compact();
    c->deadline = Clock::now() + limits_.header_timeout;
    hand_to_poller(c);
  } else {
    close_connection(c);
  }
}

}  // namespace ff::agent
