#include "collectors/sources/kmsg_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

namespace ff::collect {

KmsgRead read_kmsg(const TimeWindow& window, const TimeContext& ctx,
                   const std::filesystem::path& out, const char* device) {
  KmsgRead result;
  int fd = ::open(device, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    result.error = std::strerror(errno);
    return result;
  }
  ::lseek(fd, 0, SEEK_DATA);  // from the oldest record still in the buffer
  std::string text;
  std::optional<TimeUs> oldest;
  char record[8192];
  for (;;) {
    ssize_t n = ::read(fd, record, sizeof record);
    if (n < 0 && errno == EPIPE) continue;  // records overwritten while reading
    if (n <= 0) break;                      // EAGAIN: the buffer is drained
    // "pri,seq,usec,flags[,...];message\n"  continuation lines start with ' '.
    std::string_view r(record, static_cast<std::size_t>(n));
    auto semi = r.find(';');
    if (semi == std::string_view::npos) continue;
    std::string_view header = r.substr(0, semi);
    std::string_view message = r.substr(semi + 1);
    auto nl = message.find('\n');
    if (nl != std::string_view::npos) message = message.substr(0, nl);
    auto c1 = header.find(',');
    auto c2 = header.find(',', c1 + 1);
    auto c3 = header.find(',', c2 + 1);
    if (c1 == std::string_view::npos || c2 == std::string_view::npos) continue;
    long long usec = std::atoll(std::string(header.substr(c2 + 1, c3 - c2 - 1)).c_str());
    if (ctx.boot_time) {
      TimeUs t = *ctx.boot_time + usec;
      if (!oldest) oldest = t;
      if (!window.contains(t)) continue;
    }
    char stamp[40];
    std::snprintf(stamp, sizeof stamp, "[%5lld.%06lld] ", usec / 1000000, usec % 1000000);
    text += stamp;
    text += message;
    text += '\n';
    ++result.lines;
  }
  ::close(fd);
  if (oldest) {
    result.covered_from = std::max(*oldest, window.begin);
    result.covered_until = std::min(window.end, wall_clock_now_us());
  }
  if (result.lines == 0) return result;
  std::FILE* f = std::fopen(out.c_str(), "we");
  if (!f) {
    result.error = "cannot write " + out.string();
    result.lines = 0;
    return result;
  }
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  result.bytes = text.size();
  return result;
}

}  // namespace ff::collect
