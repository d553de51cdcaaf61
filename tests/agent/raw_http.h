// Test support: HTTP/1.1 over a raw loopback socket, for requests no client
// library sends (chunked or compressed bodies, no Content-Length, headers
// one byte at a time, a body the server should never read) and for what a
// library hides (when the reply came, how much of the body the server took).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process_memory.h"

namespace fftest {

// A connection to 127.0.0.1:`port` from `from` (any 127/8 address: each is
// another peer for the agent's per-address limit).
class RawConnection {
 public:
  explicit RawConnection(int port, const std::string& from = "127.0.0.1") {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error("socket");
    sockaddr_in local{};
    local.sin_family = AF_INET;
    ::inet_pton(AF_INET, from.c_str(), &local.sin_addr);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0)
      throw std::runtime_error("bind " + from);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
      throw std::runtime_error("connect");
  }
  ~RawConnection() { close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  RawConnection(RawConnection&& o) noexcept
      : fd_(o.fd_), received_(std::move(o.received_)), eof_(o.eof_) {
    o.fd_ = -1;
  }

  int fd() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // False when the server closed or reset the connection.
  bool send_all(const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  // Sends `head`, then `body_bytes` bytes of `fill` in 64 KiB pieces while
  // watching for a reply: stops at the reply, at a send error (the server
  // closed or reset) or when all is sent. Returns the body bytes the
  // socket took (sent before the stop).
  std::uint64_t send_body_until_reply(const std::string& head, std::uint64_t body_bytes,
                                      std::chrono::seconds limit = std::chrono::seconds(60),
                                      char fill = 'x') {
    if (!send_all(head)) return 0;
    std::string piece(65536, fill);
    std::uint64_t sent = 0;
    auto until = std::chrono::steady_clock::now() + limit;
    while (sent < body_bytes && std::chrono::steady_clock::now() < until) {
      pollfd p{fd_, POLLIN | POLLOUT, 0};
      if (::poll(&p, 1, 1000) <= 0) continue;
      if (p.revents & POLLIN) {
        receive_some(0);
        if (!received_.empty() || eof_) break;
      }
      if (p.revents & (POLLERR | POLLHUP)) break;
      if (p.revents & POLLOUT) {
        std::size_t want =
            static_cast<std::size_t>(std::min<std::uint64_t>(piece.size(), body_bytes - sent));
        ssize_t n = ::send(fd_, piece.data(), want, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) break;
        sent += static_cast<std::uint64_t>(n);
      }
    }
    return sent;
  }

  // Reads until a whole reply (headers and Content-Length body) is in, the
  // server closes, or `timeout` passes. Returns what came ("" for none).
  std::string read_reply(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    auto until = std::chrono::steady_clock::now() + timeout;
    while (!complete() && !eof_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      until - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) break;
      receive_some(static_cast<int>(left));
    }
    return received_;
  }

  // The status of the reply read so far; 0 when none.
  int status() const {
    if (received_.rfind("HTTP/1.", 0) != 0 || received_.size() < 12) return 0;
    return std::stoi(received_.substr(9, 3));
  }
  const std::string& received() const { return received_; }

  // True when the server closed (or reset) the connection within `timeout`;
  // whatever it sent before is kept in received().
  bool closed_by_server(std::chrono::milliseconds timeout) {
    auto until = std::chrono::steady_clock::now() + timeout;
    while (!eof_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      until - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) return false;
      receive_some(static_cast<int>(left));
    }
    return true;
  }

 private:
  void receive_some(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return;
    char buf[65536];
    ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0)
      received_.append(buf, static_cast<std::size_t>(n));
    else if (n == 0 || (errno != EAGAIN && errno != EINTR))
      eof_ = true;
  }

  bool complete() const {
    auto end = received_.find("\r\n\r\n");
    if (end == std::string::npos) return false;
    std::string head = received_.substr(0, end);
    for (auto& ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    auto at = head.find("content-length:");
    if (at == std::string::npos) return true;
    std::size_t length = std::stoul(head.substr(at + 15));
    return received_.size() >= end + 4 + length;
  }

  int fd_ = -1;
  std::string received_;
  bool eof_ = false;
};

// The server-side sockets of connections to `port` in `pid`, by fd: the
// inodes /proc/net/tcp lists as established on that local port.
inline std::vector<std::string> connection_fds(pid_t pid, int port) {
  std::set<std::string> inodes;
  std::ifstream tcp("/proc/net/tcp");
  std::string line;
  std::getline(tcp, line);
  char local_port[8];
  std::snprintf(local_port, sizeof local_port, ":%04X", port);
  while (std::getline(tcp, line)) {
    std::istringstream fields(line);
    std::string sl, local, remote, state, queues, timer, retr, uid, timeout, inode;
    fields >> sl >> local >> remote >> state >> queues >> timer >> retr >> uid >> timeout >> inode;
    if (state == "01" && local.size() > 5 && local.substr(local.size() - 5) == local_port)
      inodes.insert(inode);
  }
  std::vector<std::string> fds;
  std::filesystem::path dir = "/proc/" + std::to_string(pid) + "/fd";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::error_code ec;
    std::string target = std::filesystem::read_symlink(e.path(), ec).string();
    if (target.rfind("socket:[", 0) == 0 && inodes.count(target.substr(8, target.size() - 9)))
      fds.push_back(e.path().filename().string());
  }
  return fds;
}

// Waits until `pid` holds `n` connections on `port` (accepted); false after 5 s.
inline bool wait_for_connections(pid_t pid, int port, std::size_t n) {
  for (int i = 0; i < 100; ++i) {
    if (connection_fds(pid, port).size() == n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace fftest
