#include "collectors/window/window_reader.h"

#include <optional>

#include "collectors/window/line_scanner.h"

namespace ff::collect {
namespace {

// Below this span the search stops and the rest is read line by line.
constexpr std::uint64_t kLinearSpan = 64 * 1024;
// A probe gives up after this many bytes without a timestamped line.
constexpr std::uint64_t kProbeLimit = 1 << 20;
constexpr std::size_t kProbeReadSize = 16 * 1024;
constexpr std::size_t kStreamReadSize = 256 * 1024;

struct Probe {
  std::uint64_t line_offset;
  TimeUs time;
};

// The first line starting at or after `offset` (and before `limit`) with a
// readable time.
std::optional<Probe> probe(LineScanner& scanner, std::uint64_t offset, std::uint64_t limit,
                           const TimeContext& ctx) {
  scanner.set_read_size(kProbeReadSize);
  scanner.seek(offset, true);
  std::string_view line;
  while (scanner.next(line)) {
    std::uint64_t at = scanner.line_offset();
    if (at >= limit || at - offset > kProbeLimit) return std::nullopt;
    ParsedLine parsed = parse_line_time(line, ctx);
    if (parsed.time) return Probe{at, *parsed.time};
  }
  return std::nullopt;
}

// Where to start reading: a line start at or before the window's first line.
std::uint64_t search_window_start(LineScanner& scanner, const TimeWindow& window,
                                  const TimeContext& ctx, int& probes) {
  std::uint64_t lo = 0, hi = scanner.size();
  while (hi - lo > kLinearSpan) {
    std::uint64_t mid = lo + (hi - lo) / 2;
    ++probes;
    auto p = probe(scanner, mid, hi, ctx);
    if (p && p->time < window.begin)
      lo = p->line_offset;  // everything up to this line is before the window
    else
      hi = mid;  // the window starts before mid, or this stretch has no times: look left
  }
  return lo;
}

// Decides line by line, in file order, what belongs to the window: from the
// first timed line inside it up to (not including) the first timed line after it.
class WindowFilter {
 public:
  WindowFilter(const TimeWindow& window, const TimeContext& ctx, const LineSink& sink,
               WindowReadStats& stats)
      : window_(window), ctx_(ctx), sink_(sink), stats_(stats) {}

  // False once a line after the window was seen: nothing later can be inside.
  bool take(std::string_view line) {
    ParsedLine parsed = parse_line_time(line, ctx_);
    if (parsed.time) {
      seen_time_ = true;
      if (*parsed.time > window_.end) return false;
      if (!inside_) {
        if (*parsed.time < window_.begin) return true;
        inside_ = true;
      }
    } else if (!inside_) {
      return true;
    }
    sink_(line);
    ++stats_.lines_kept;
    stats_.bytes_kept += line.size() + 1;
    return true;
  }
  bool seen_time() const { return seen_time_; }

 private:
  const TimeWindow& window_;
  const TimeContext& ctx_;
  const LineSink& sink_;
  WindowReadStats& stats_;
  bool inside_ = false;
  bool seen_time_ = false;
};

// A file in which no line has a readable time cannot be cut to the window;
// all of it is kept (the bundle's size limit keeps its end).
void keep_all_lines(LineScanner& scanner, const LineSink& sink, WindowReadStats& stats) {
  scanner.seek(0, false);
  std::string_view line;
  while (scanner.next(line)) {
    sink(line);
    ++stats.lines_kept;
    stats.bytes_kept += line.size() + 1;
  }
  stats.untimed = true;
}

void read_gzip_window(const std::string& path, LineScanner& scanner, const TimeWindow& window,
                      const TimeContext& ctx, const LineSink& sink,
                      const WindowReadOptions& options, WindowReadStats& stats) {
  // The opened file's own time: a path swapped after open does not decide.
  if (static_cast<TimeUs>(scanner.mtime()) * kUsPerSecond < window.begin) {
    stats.skipped = "last written before the window";
    return;
  }
  // The first timed line decides whether the file can hold the window; the
  // lines read until then are kept to be filtered like the rest.
  scanner.set_read_size(kProbeReadSize);
  std::string_view line;
  std::optional<TimeUs> first;
  std::string head;
  while (!first && head.size() < kProbeLimit && scanner.next(line)) {
    first = parse_line_time(line, ctx).time;
    head.append(line);
    head.push_back('\n');
  }
  if (first && *first > window.end) {
    stats.skipped = "first line after the window";
    return;
  }
  if (!first && !options.keep_untimed) {
    stats.untimed = true;
    return;
  }
  WindowFilter filter(window, ctx, sink, stats);
  std::string_view rest(head);
  while (!rest.empty()) {
    std::size_t nl = rest.find('\n');
    if (!filter.take(rest.substr(0, nl))) return;
    rest.remove_prefix(nl + 1);
  }
  scanner.set_read_size(kStreamReadSize);
  while (scanner.next(line))
    if (!filter.take(line)) return;
  if (!filter.seen_time() && !options.keep_untimed) {
    stats.untimed = true;
  } else if (!filter.seen_time()) {  // gzip cannot seek back: reopen
    LineScanner again;
    if (again.open(path, options.follow_symlinks)) {
      keep_all_lines(again, sink, stats);
      stats.bytes_read += again.bytes_read();
    }
  }
}

}  // namespace

WindowReadStats read_window(const std::string& path, const TimeWindow& window,
                            const TimeContext& ctx, const LineSink& sink,
                            const WindowReadOptions& options) {
  WindowReadStats stats;
  LineScanner scanner;
  if (!scanner.open(path, options.follow_symlinks)) {
    stats.error = scanner.error();
    return stats;
  }
  if (scanner.compressed()) {
    read_gzip_window(path, scanner, window, ctx, sink, options, stats);
  } else {
    std::uint64_t start = search_window_start(scanner, window, ctx, stats.probes);
    scanner.seek(start, false);
    scanner.set_read_size(kStreamReadSize);
    WindowFilter filter(window, ctx, sink, stats);
    std::string_view line;
    bool stopped = false;
    while (!stopped && scanner.next(line)) {
      stopped = !filter.take(line);
      if (!options.keep_untimed && !filter.seen_time() &&
          scanner.line_offset() - start > kProbeLimit)
        break;  // no readable time in the first MiB: not a format this reads
    }
    if (!filter.seen_time() && start == 0 && scanner.error().empty()) {
      if (options.keep_untimed)
        keep_all_lines(scanner, sink, stats);
      else
        stats.untimed = true;
    }
  }
  stats.bytes_read = scanner.bytes_read();
  stats.error = scanner.error();
  return stats;
}

}  // namespace ff::collect
