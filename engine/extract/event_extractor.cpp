#include "extract/event_extractor.h"

#include <algorithm>
#include <cstring>

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

// Time of the closest preceding line that has one (at most 64 lines back).
MaybeTime previous_line_time(std::string_view before, const TimeContext& tc) {
  std::size_t end = before.size();
  for (int n = 0; n < 64 && end > 0; ++n) {
    std::size_t start = before.rfind('\n', end - 1);
    start = start == std::string_view::npos ? 0 : start + 1;
    ParsedLine p = parse_line_time(before.substr(start, end - start), tc);
    if (p.time) return p.time;
    if (start == 0) break;
    end = start - 1;
  }
  return std::nullopt;
}

// Time of the closest following line that has one (at most 64 lines ahead).
MaybeTime next_line_time(std::string_view after, const TimeContext& tc) {
  std::size_t start = 0;
  for (int n = 0; n < 64 && start < after.size(); ++n) {
    std::size_t end = after.find('\n', start);
    if (end == std::string_view::npos) end = after.size();
    ParsedLine p = parse_line_time(after.substr(start, end - start), tc);
    if (p.time) return p.time;
    start = end + 1;
  }
  return std::nullopt;
}

// The time of the last timestamped line among the last lines of a buffer.
MaybeTime last_line_time(std::string_view text, const TimeContext& tc) {
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  return previous_line_time(text, tc);
}

}  // namespace

bool source_kind_trusted(const std::string& kind) {
  return kind == "kernel" || kind == "fabricmanager" || kind == "slurmd" || kind == "slurmctld" ||
         kind == "cluster" || kind == "metrics";
}

void EventExtractor::match_line(std::string_view line, std::string_view before,
                                std::string_view after, std::uint64_t line_no,
                                const SourceFile& file, unsigned kind_bit, const TimeContext& tc,
                                std::uint64_t& seq, ExtractStats& st, const EventSink& sink) const {
  ++st.candidate_lines;
  std::vector<bool> group_done(rules_.groups.size(), false);
  bool parsed = false;
  ParsedLine when;
  bool looked_back = false, looked_ahead = false;
  MaybeTime prev_time, next_time;
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
    e.seq = ++seq;
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
    std::string_view body = line.substr(std::min(when.body, line.size()));
    body = body.substr(0, std::min(body.size(), kMaxEventText));
    e.body.assign(body.data(), body.size());
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
    if (!e.time && !before.empty()) {
      if (!looked_back) {
        prev_time = previous_line_time(before, tc);
        looked_back = true;
      }
      if (prev_time) e.fields["prev_line_time"] = std::to_string(*prev_time);
    }
    if (!e.time && !after.empty()) {
      if (!looked_ahead) {
        next_time = next_line_time(after, tc);
        looked_ahead = true;
      }
      if (next_time) e.fields["next_line_time"] = std::to_string(*next_time);
    }
    ++st.events;
    sink(std::move(e));
  }
}

ExtractStats EventExtractor::scan_file(const SourceFile& file, const TimeContext& tc,
                                       std::uint64_t& seq, const EventSink& sink) const {
  ExtractStats st;
  unsigned kind_bit = bit_of(file.kind);
  const RE2* pre = rules_.prefilter(kind_bit);
  st.read = read_lines_chunked(file.path.string(), [&](std::string_view chunk,
                                                       std::uint64_t first_line) {
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
      match_line(chunk.substr(start, end - start), chunk.substr(0, start ? start - 1 : 0), after,
                 line_no, file, kind_bit, tc, seq, st, sink);
      pos = end + 1;
    }
  });
  return st;
}

std::vector<Event> EventExtractor::extract_line(std::string_view line, const SourceFile& file,
                                                const TimeContext& tc,
                                                std::uint64_t line_no) const {
  std::vector<Event> out;
  ExtractStats st;
  std::uint64_t seq = 0;
  match_line(line, {}, {}, line_no, file, bit_of(file.kind), tc, seq, st,
             [&](Event&& e) { out.push_back(std::move(e)); });
  return out;
}

}  // namespace ff
