#include "engine/verdict/text_report.h"

#include <map>
#include <set>
#include <sstream>

namespace ff {
namespace {

struct Style {
  bool on;
  std::string bold() const { return on ? "\033[1m" : ""; }
  std::string red() const { return on ? "\033[1;31m" : ""; }
  std::string yellow() const { return on ? "\033[33m" : ""; }
  std::string green() const { return on ? "\033[32m" : ""; }
  std::string dim() const { return on ? "\033[2m" : ""; }
  std::string reset() const { return on ? "\033[0m" : ""; }
};

std::string t(const MaybeTime& m) {
  return m ? format_time(*m) : std::string("(no time)");
}

// "10:41:07 .. 10:51:07" for an interval, the time alone for a point.
std::string span(const MaybeTime& from, const MaybeTime& to) {
  if (from && to && *from == *to) return format_time(*from);
  return (from ? format_time(*from) : std::string("?")) + " .. " +
         (to ? format_time(*to) : std::string("?"));
}

// Text from the incident (file and node names, job.json's fields, log lines)
// as one line without control characters: a name holding a newline or an
// escape sequence cannot forge a line of the report or drive the terminal.
std::string printable(const std::string& s, std::size_t max) {
  std::string out;
  for (unsigned char c : s) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    out.push_back(c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c));
  }
  return out;
}

}  // namespace

std::string diagnosis_to_text(const Diagnosis& d, bool colour) {
  Style st{colour};
  std::ostringstream o;
  std::string vcol = d.verdict == "attributed"   ? st.red()
                     : d.verdict == "no_failure" ? st.green()
                                                 : st.yellow();
  o << st.bold() << "job " << printable(d.job_id, 64)
    << (d.cluster.empty() ? "" : " on " + printable(d.cluster, 64)) << st.reset() << "  state "
    << (d.terminal_state.empty() ? "unknown" : printable(d.terminal_state, 64)) << "\n";
  o << vcol << d.verdict << st.reset();
  if (!d.domain.empty())
    o << "  " << d.domain << (d.sub_domain.empty() ? "" : " / " + d.sub_domain);
  o << "\n" << st.bold() << printable(d.summary, 400) << st.reset() << "\n";
  o << "action: " << st.bold() << d.recommended_action << st.reset() << "\n";

  if (!d.root_causes.empty()) {
    o << "\n"
      << st.bold() << (d.verdict == "ambiguous" ? "candidate causes" : "root cause") << st.reset()
      << "\n";
    for (const auto& r : d.root_causes) {
      o << "  " << (r.node.empty() ? "(job-wide)" : printable(r.node, 128));
      if (!r.device.empty()) o << " " << printable(r.device, 64);
      if (r.rank >= 0) o << " rank " << r.rank;
      o << "  " << r.sub_domain << "  at ";
      if (r.earliest && r.latest && *r.earliest != *r.latest)
        o << "~" << span(r.earliest, r.latest);
      else
        o << t(r.time);
      o << "\n    " << printable(r.summary, 200) << "\n";
      if (!r.related_devices.empty()) {
        o << "    same fault on";
        for (const auto& dev : r.related_devices) o << " " << printable(dev, 64);
        o << "\n";
      }
      if (!r.trusted)
        o << "    " << st.yellow() << "evidence not trusted: " << printable(r.provenance, 160)
          << st.reset() << "\n";
    }
  }

  if (!d.evidence.empty()) {
    // Root-cause evidence in full; of the rest, the first line of each kind.
    std::set<int> keep;
    for (const auto& r : d.root_causes) keep.insert(r.evidence.begin(), r.evidence.end());
    std::set<std::string> kinds_shown;
    for (const auto& e : d.evidence)
      if (!keep.count(e.id) && kinds_shown.insert(e.event).second) keep.insert(e.id);
    o << "\n" << st.bold() << "timeline" << st.reset() << "\n";
    for (const auto& e : d.evidence) {
      if (!keep.count(e.id)) continue;
      o << "  [" << e.id << "] " << t(e.time) << (e.time_inferred ? "~" : " ") << " "
        << (e.node.empty() ? "-" : printable(e.node, 128)) << "  " << e.event;
      if (e.time_inferred)
        o << st.dim() << "  (between " << span(e.earliest, e.latest) << ")" << st.reset();
      if (!e.trusted) o << st.dim() << "  [user-writable source]" << st.reset();
      o << "\n      " << st.dim() << printable(e.source, 200) << ":" << e.line << st.reset() << "  "
        << printable(e.text, 160) << "\n";
    }
    if (keep.size() < d.evidence.size())
      o << "  " << st.dim() << "... " << d.evidence.size() - keep.size()
        << " more evidence line(s) in --format json" << st.reset() << "\n";
  }

  std::map<std::string, std::set<std::string>> demoted, active;
  std::map<std::string, std::uint64_t> counts;
  for (const auto& s : d.symptoms) {
    (s.status == "demoted" ? demoted : active)[s.kind].insert(s.node.empty() ? "-" : s.node);
    counts[s.kind] += s.count;
  }
  if (!active.empty()) {
    o << "\n" << st.bold() << "active symptoms" << st.reset() << "\n";
    for (const auto& [k, nodes] : active)
      o << "  " << k << " on " << nodes.size() << " node(s), " << counts[k] << " event(s)\n";
  }
  if (!demoted.empty()) {
    o << "\n"
      << st.bold() << "demoted symptoms" << st.reset() << " (explained by the root cause)\n";
    for (const auto& [k, nodes] : demoted) o << "  " << k << " on " << nodes.size() << " node(s)\n";
  }

  std::vector<const CoverageItem*> gaps;
  for (const auto& c : d.coverage)
    if (c.status != "ok") gaps.push_back(&c);
  if (!gaps.empty()) {
    o << "\n" << st.bold() << "coverage gaps" << st.reset() << "\n";
    for (const auto* c : gaps)
      o << "  " << (c->node.empty() ? "cluster" : printable(c->node, 128)) << " "
        << printable(c->source, 128) << ": " << printable(c->status, 32) << " ("
        << printable(c->detail, 160) << ")\n";
  }
  if (!d.ignored.empty()) {
    std::uint64_t n = 0;
    for (const auto& i : d.ignored) n += i.count;
    o << "\n"
      << st.dim() << n
      << " event(s) ignored (stale, other jobs, unused GPUs, context); see --format json"
      << st.reset() << "\n";
  }
  if (!d.errors.empty()) {
    o << "\n" << st.bold() << "input problems" << st.reset() << "\n";
    for (const auto& e : d.errors) {
      o << "  " << printable(e.source, 200);
      if (e.line) o << ':' << e.line;
      o << ": " << printable(e.message, 200) << "\n";
    }
  }
  return o.str();
}

}  // namespace ff
