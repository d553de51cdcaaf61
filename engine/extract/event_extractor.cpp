#include "engine/extract/event_extractor.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>

namespace ff {
namespace {

unsigned bit_of(const std::string& kind) {
  unsigned b = source_kind_bit(kind);
  return b ? b : kSrcOther;
}

// Parses an in-message time such as Slurm's "CANCELLED AT 2026-11-06T16:00:41".
MaybeTime message_time(const std::string& text, const TimeContext& tc) {
  std::string bracketed = "[" + text + "]";
  ParsedLine p = parse_line_time(bracketed, tc);
  if (p.time) return p.time;
  return parse_iso8601_utc(text);
}

// Time of the closest preceding line that has one, at most 64 lines back:
// in `before` (the text of the buffer up to the line, without its last
// '\n'), then in `earlier` (complete lines that precede the buffer).
MaybeTime previous_line_time(std::string_view before, std::string_view earlier,
                             const TimeContext& tc) {
  int budget = 64;
  for (std::string_view text : {before, earlier}) {
    if (text.data() == earlier.data() && !text.empty() && text.back() == '\n')
      text.remove_suffix(1);
    std::size_t end = text.size();
    for (; budget > 0 && end > 0; --budget) {
      std::size_t start = text.rfind('\n', end - 1);
      start = start == std::string_view::npos ? 0 : start + 1;
      ParsedLine p = parse_line_time(text.substr(start, end - start), tc);
      if (p.time) return p.time;
      if (start == 0) {
        --budget;
        break;
      }
      end = start - 1;
    }
    if (budget <= 0) break;
  }
  return std::nullopt;
}

// Time of the closest following line that has one, within `budget` lines
// of `after`; `budget` is left with the lines not looked at, so that a
// search that ran out of text can go on in the text that follows.
MaybeTime next_line_time(std::string_view after, const TimeContext& tc, int& budget) {
  std::size_t start = 0;
  for (; budget > 0 && start < after.size(); --budget) {
    std::size_t end = after.find('\n', start);
    if (end == std::string_view::npos) end = after.size();
    ParsedLine p = parse_line_time(after.substr(start, end - start), tc);
    if (p.time) {
      budget = 0;
      return p.time;
    }
    start = end + 1;
  }
  return std::nullopt;
}

// Up to kContextBytes of complete lines of a plain file from `at` on.
std::string text_after(int fd, std::uint64_t at) {
  std::string text(kContextBytes, '\0');
  ssize_t r;
  do r = ::pread(fd, text.data(), text.size(), static_cast<off_t>(at));
  while (r < 0 && errno == EINTR);
  text.resize(r > 0 ? static_cast<std::size_t>(r) : 0);
  if (text.size() == kContextBytes) text.resize(text.rfind('\n') + 1);  // npos + 1 == 0
  return text;
}

// The time of the last timestamped line among the last lines of a buffer.
MaybeTime last_line_time(std::string_view text, const TimeContext& tc) {
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  return previous_line_time(text, {}, tc);
}

}  // namespace

bool source_kind_trusted(const std::string& kind) {
  return kind == "kernel" || kind == "fabricmanager" || kind == "slurmd" || kind == "slurmctld" ||
         kind == "cluster" || kind == "metrics";
}

void EventExtractor::match_line(std::string_view line, std::string_view before,
                                std::string_view earlier, std::string_view after,
                                std::uint64_t line_no, const SourceFile& file, unsigned kind_bit,
                                const TimeContext& tc, ExtractStats& st,
                                const LookaheadSink& sink) const {
  ++st.candidate_lines;
  std::vector<bool> group_done(rules_.groups.size(), false);
  bool parsed = false;
  ParsedLine when;
  bool looked_back = false, looked_ahead = false;
  MaybeTime prev_time, next_time;
  int ahead_left = kLookaheadLines;
  std::vector<re2::StringPiece> sub;
  const bool trusted = source_kind_trusted(file.kind);
  for (const auto& p : rules_.patterns) {
    if (!(p.source_mask & kind_bit)) continue;
    if (p.group_id >= 0 && group_done[static_cast<std::size_t>(p.group_id)]) continue;
    bool has_literal = false;
    for (const auto& lit : p.rule.literals)
      if (line.find(lit) != std::string_view::npos) {
        has_literal = true;
        break;
      }
    if (!has_literal) continue;
    int ngroups = p.re->NumberOfCapturingGroups() + 1;
    sub.assign(static_cast<std::size_t>(ngroups), re2::StringPiece());
    if (!p.re->Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::UNANCHORED,
                     sub.data(), ngroups))
      continue;
    if (p.group_id >= 0) group_done[static_cast<std::size_t>(p.group_id)] = true;
    if (!parsed) {
      when = parse_line_time(line, tc);
      parsed = true;
      if (when.bad_time) {
        if (!st.bad_times) st.first_bad_time_line = line_no;
        ++st.bad_times;
      }
    }
    Event e;
    e.kind = p.rule.kind;
    e.pattern = p.rule.name;
    e.node = file.node;
    e.source = file.rel;
    e.source_kind = file.kind;
    e.line = line_no;
    e.time = when.time;
    e.trusted = trusted;
    std::string_view text = line.substr(0, std::min(line.size(), kMaxEventText));
    e.text.assign(text.data(), text.size());
    std::size_t body_at = std::min(when.body, line.size());
    if (line.size() <= kMaxEventText) {
      e.body_at = static_cast<std::uint32_t>(body_at);
    } else {
      std::string_view body = line.substr(body_at);
      body = body.substr(0, std::min(body.size(), kMaxEventText));
      e.long_body.assign(body.data(), body.size());
    }
    if (when.dmesg_seconds) e.fields["dmesg_seconds"] = std::to_string(*when.dmesg_seconds);
    for (const auto& [name, idx] : p.captures) {
      const auto& s = sub[static_cast<std::size_t>(idx)];
      if (s.data() == nullptr || s.empty()) continue;
      e.fields[name] = std::string(s.data(), std::min<std::size_t>(s.size(), 512));
    }
    if (!e.time) {
      if (auto at = e.fields.find("at"); at != e.fields.end())
        e.time = message_time(at->second, tc);
    }
    if (!e.time && !(before.empty() && earlier.empty())) {
      if (!looked_back) {
        prev_time = previous_line_time(before, earlier, tc);
        looked_back = true;
      }
      if (prev_time) e.fields["prev_line_time"] = std::to_string(*prev_time);
    }
    if (!e.time) {
      if (!looked_ahead) {
        next_time = next_line_time(after, tc, ahead_left);
        looked_ahead = true;
      }
      if (next_time) e.fields["next_line_time"] = std::to_string(*next_time);
    }
    ++st.events;
    int wait_for = e.time || next_time ? 0 : ahead_left;
    sink(std::move(e), wait_for);
  }
}

ExtractStats EventExtractor::scan_file(const SourceFile& file, const TimeContext& tc,
                                       std::uint64_t& seq, const EventSink& sink) const {
  int fd = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    ExtractStats st;
    st.read.error = std::string("cannot open: ") + std::strerror(errno);
    return st;
  }
  ExtractStats st = scan_range(file, fd, ByteRange{}, tc, [&](Event&& e) {
    e.seq = ++seq;
    sink(std::move(e));
  });
  ::close(fd);
  return st;
}

ExtractStats EventExtractor::scan_range(const SourceFile& file, int fd, const ByteRange& range,
                                        const TimeContext& tc, const EventSink& sink) const {
  ExtractStats st;
  unsigned kind_bit = bit_of(file.kind);
  const RE2* pre = rules_.prefilter(kind_bit);
  // Events whose line has no time and whose search for the next timed line
  // reached the end of the buffer wait for the text that follows, so that
  // where a buffer or a range ends changes nothing. Later events queue
  // behind them: the sink sees line order. At most 64 lines' worth wait.
  std::deque<std::pair<Event, int>> waiting;
  auto emit = [&](Event&& e, int ahead_left) {
    if (waiting.empty() && ahead_left == 0)
      sink(std::move(e));
    else
      waiting.emplace_back(std::move(e), ahead_left);
  };
  auto look_ahead = [&](std::string_view text) {
    for (auto& [e, left] : waiting) {
      if (left == 0) continue;
      if (MaybeTime next = next_line_time(text, tc, left))
        e.fields["next_line_time"] = std::to_string(*next);
    }
  };
  auto release = [&](bool all) {
    while (!waiting.empty() && (all || waiting.front().second == 0)) {
      sink(std::move(waiting.front().first));
      waiting.pop_front();
    }
  };
  auto scan_chunk = [&](std::string_view chunk, std::uint64_t first_line,
                        std::string_view earlier) {
    if (!waiting.empty()) {
      look_ahead(chunk);
      release(false);
    }
    // The span of the file: its first and last timestamped lines.
    if (!st.first_time) {
      std::size_t start = 0;
      for (int n = 0; n < 64 && start < chunk.size() && !st.first_time; ++n) {
        std::size_t end = chunk.find('\n', start);
        if (end == std::string_view::npos) end = chunk.size();
        st.first_time = parse_line_time(chunk.substr(start, end - start), tc).time;
        start = end + 1;
      }
    }
    if (MaybeTime last = last_line_time(chunk, tc)) st.last_time = last;
    if (!pre) return;
    std::size_t pos = 0;      // search position in chunk
    std::size_t counted = 0;  // newlines counted up to here
    std::uint64_t line_no = first_line;
    re2::StringPiece text(chunk.data(), chunk.size());
    re2::StringPiece hit;
    while (pos < chunk.size() && pre->Match(text, pos, chunk.size(), RE2::UNANCHORED, &hit, 1)) {
      std::size_t at = static_cast<std::size_t>(hit.data() - chunk.data());
      // line boundaries around the hit
      std::size_t start = at;
      while (start > pos && chunk[start - 1] != '\n') --start;
      const char* nl =
          static_cast<const char*>(std::memchr(chunk.data() + at, '\n', chunk.size() - at));
      std::size_t end = nl ? static_cast<std::size_t>(nl - chunk.data()) : chunk.size();
      line_no += static_cast<std::uint64_t>(
          std::count(chunk.data() + counted, chunk.data() + start, '\n'));
      counted = start;
      std::string_view after = end + 1 < chunk.size() ? chunk.substr(end + 1) : std::string_view();
      match_line(chunk.substr(start, end - start), chunk.substr(0, start ? start - 1 : 0), earlier,
                 after, line_no, file, kind_bit, tc, st, emit);
      pos = end + 1;
    }
  };
  st.read = read_lines_chunked(fd, range, scan_chunk);
  // A range that ends before the file does: the next lines are the next
  // range's, read here only as what follows.
  if (!waiting.empty() && st.read.error.empty() && !range.whole())
    look_ahead(text_after(fd, st.read.end_offset));
  release(true);
  return st;
}

std::vector<Event> EventExtractor::extract_line(std::string_view line, const SourceFile& file,
                                                const TimeContext& tc,
                                                std::uint64_t line_no) const {
  std::vector<Event> out;
  ExtractStats st;
  match_line(line, {}, {}, {}, line_no, file, bit_of(file.kind), tc, st, [&](Event&& e, int) {
    e.seq = out.size() + 1;
    out.push_back(std::move(e));
  });
  return out;
}

}  // namespace ff
