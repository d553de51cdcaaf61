// Step 2 of the pipeline: where a log line becomes an event.
//
// One RE2 pass per buffer finds the lines that contain any prefilter literal
// of the file's kind; only those lines are split out, checked for each
// pattern's own literals, and matched against the pattern's regex. A matching
// pattern yields one event whose fields are the named captures. Everything
// else about the event (node, rank, device, relevance) is decided later by
// the filter rules.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "engine/model/event.h"
#include "engine/read/incident_layout.h"
#include "engine/read/line_reader.h"
#include "engine/rules/compiled_rules.h"
#include "incident/time/timestamp_parser.h"

namespace ff {

struct ExtractStats {
  ReadStats read;
  std::uint64_t candidate_lines = 0;  // lines the prefilter let through
  std::uint64_t events = 0;
  std::uint64_t bad_times = 0;  // lines whose timestamp looked wrong
  std::uint64_t first_bad_time_line = 0;
  // Times of the first and last timestamped lines of the file: the span a
  // source covers, so that a message missing from it can be told from a
  // message from before or after it.
  MaybeTime first_time, last_time;
};

// Whether the job's user can write lines of this source kind: syslog (via
// logger) and the job's own output can be; the kernel's ring buffer, daemon
// logs and controller-side logs cannot.
bool source_kind_trusted(const std::string& kind);

using EventSink = std::function<void(Event&&)>;

// Lines a line without a time looks ahead, and back, for one that has one.
constexpr int kLookaheadLines = 64;

class EventExtractor {
 public:
  explicit EventExtractor(const CompiledRules& rules) : rules_(rules) {}

  // Reads `range` of the open file; events go to `sink` in line order, with
  // line numbers counted from the range's first line and no `seq` (the
  // caller numbers events in the global read order). Safe to call from
  // several threads at once.
  ExtractStats scan_range(const SourceFile& file, int fd, const ByteRange& range,
                          const TimeContext& tc, const EventSink& sink) const;

  // Opens and reads the whole file; `seq` numbers events across files.
  ExtractStats scan_file(const SourceFile& file, const TimeContext& tc, std::uint64_t& seq,
                         const EventSink& sink) const;

  // The events of one line (no prefilter): for tests and `firstfault rules test`.
  std::vector<Event> extract_line(std::string_view line, const SourceFile& file,
                                  const TimeContext& tc, std::uint64_t line_no = 1) const;

 private:
  // Receives each event with the lines its search for a following timed
  // line could still look at (0: the search is over).
  using LookaheadSink = std::function<void(Event&&, int ahead_left)>;
  // `before` and `after` are the text around the line in its buffer, and
  // `earlier` the lines that precede the buffer: a line without a time
  // looks in them for the timestamped lines that bound it.
  void match_line(std::string_view line, std::string_view before, std::string_view earlier,
                  std::string_view after, std::uint64_t line_no, const SourceFile& file,
                  unsigned kind_bit, const TimeContext& tc, ExtractStats& st,
                  const LookaheadSink& sink) const;
  const CompiledRules& rules_;
};

}  // namespace ff
