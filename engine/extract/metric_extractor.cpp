#include "engine/extract/metric_extractor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ff {

std::string format_metric_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string metric_series_node(const MetricSeries& s, const std::vector<std::string>& labels,
                               const JobInfo& job) {
  auto strip_port = [](const std::string& v) {
    auto colon = v.rfind(':');
    if (colon == std::string::npos || colon + 1 == v.size()) return v;
    bool digits = std::all_of(v.begin() + static_cast<long>(colon) + 1, v.end(),
                              [](char c) { return c >= '0' && c <= '9'; });
    return digits ? v.substr(0, colon) : v;
  };
  for (const auto& label : labels) {
    auto it = s.labels.find(label);
    if (it == s.labels.end() || it->second.empty()) continue;
    std::string host = strip_port(it->second);
    if (job.nodes.empty()) return host;
    for (const std::string& candidate : {it->second, host, host.substr(0, host.find('.'))})
      if (job.has_node(candidate)) return candidate;
  }
  return "";
}

namespace {

std::string bound_text(const MetricCondition& c) {
  std::string s;
  if (c.above) s += "above " + format_metric_value(*c.above);
  if (c.below)
    s += std::string(s.empty() ? "" : " and ") + "below " + format_metric_value(*c.below);
  return s;
}

// Median spacing of a series' samples: its scrape/step interval.
TimeUs sample_step(const MetricSeries& s) {
  std::vector<TimeUs> gaps;
  for (std::size_t i = 1; i < s.samples.size(); ++i)
    gaps.push_back(s.samples[i].time - s.samples[i - 1].time);
  if (gaps.empty()) return 0;
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<long>(gaps.size() / 2), gaps.end());
  return gaps[gaps.size() / 2];
}

class SeriesEvents {
 public:
  SeriesEvents(const MetricsFile& f, std::size_t index, const MetricSeries& s,
               const MetricCondition& c, const std::string& node, std::uint64_t& seq,
               const EventSink& sink, MetricExtractStats& st)
      : f_(f), index_(index), s_(s), c_(c), node_(node), seq_(seq), sink_(sink), st_(st) {}

  void emit(const MetricSample& at, const std::string& what,
            std::map<std::string, std::string> extra = {}) {
    Event e;
    e.seq = ++seq_;
    e.kind = c_.kind;
    e.pattern = "metric:" + c_.name;
    e.node = node_;
    e.source = f_.rel;
    e.source_kind = "metrics";
    e.trusted = true;     // exporters on the node, scraped by Prometheus
    e.line = index_ + 1;  // the series' position in data.result, 1-based
    e.time = at.time;
    std::string text = series_text(s_) + " " + what;
    if (text.size() > kMaxEventText) text.resize(kMaxEventText);
    e.text = text;  // all of it is the message: body_at 0
    e.fields = std::move(extra);
    e.fields["metric"] = s_.metric();
    e.fields["labels"] = series_text(s_);
    e.fields["value"] = format_metric_value(at.value);
    e.fields["condition"] = c_.name;
    for (const auto& [field, label] : c_.fields)
      if (auto it = s_.labels.find(label); it != s_.labels.end() && !it->second.empty())
        e.fields[field] = it->second;
    if (c_.code_from_value) e.fields["code"] = format_metric_value(at.value);
    ++st_.events;
    sink_(std::move(e));
  }

  void increase() {
    if (s_.samples.size() < 2) return;
    double total = 0;
    bool fired = false;
    const MetricSample* hit = nullptr;
    const MetricSample* before = nullptr;
    for (std::size_t i = 1; i < s_.samples.size(); ++i) {
      const MetricSample& prev = s_.samples[i - 1];
      const MetricSample& cur = s_.samples[i];
      // A counter that went down was reset: it counted `cur` since (increase()'s rule).
      total += cur.value >= prev.value ? cur.value - prev.value : cur.value;
      if (!fired && total >= c_.min_increase) {
        fired = true;
        hit = &cur;
        before = &prev;
      }
    }
    if (!fired) return;
    emit(*hit,
         "rose from " + format_metric_value(before->value) + " to " +
             format_metric_value(hit->value) + " between " + format_time(before->time) + " and " +
             format_time(hit->time) + " (+" + format_metric_value(total) + " over the range)",
         {{"previous_value", format_metric_value(before->value)},
          {"previous_time", format_time(before->time)},
          {"increase", format_metric_value(total)}});
  }

  void threshold() {
    for (const auto& m : s_.samples)
      if (c_.holds(m.value)) {
        emit(m, "= " + format_metric_value(m.value) + " (" + bound_text(c_) + ") at " +
                    format_time(m.time));
        return;
      }
  }

  void change() {
    constexpr int kMaxChangesPerSeries = 16;
    int n = 0;
    for (std::size_t i = 1; i < s_.samples.size() && n < kMaxChangesPerSeries; ++i) {
      const MetricSample& prev = s_.samples[i - 1];
      const MetricSample& cur = s_.samples[i];
      if (cur.value == prev.value || !c_.holds(cur.value)) continue;
      emit(cur,
           "changed from " + format_metric_value(prev.value) + " to " +
               format_metric_value(cur.value) + " at " + format_time(cur.time),
           {{"previous_value", format_metric_value(prev.value)},
            {"previous_time", format_time(prev.time)}});
      ++n;
    }
  }

  void absent(TimeUs reference_end) {
    if (s_.samples.empty()) return;
    const MetricSample& last = s_.samples.back();
    TimeUs step = sample_step(s_);
    TimeUs need =
        c_.for_s ? static_cast<TimeUs>(*c_.for_s * 1e6) : std::max<TimeUs>(3 * step, kUsPerSecond);
    if (reference_end - last.time < need) return;
    emit(last,
         "stopped reporting after " + format_time(last.time) + " (last value " +
             format_metric_value(last.value) + "); other series went on until " +
             format_time(reference_end),
         {{"last_seen", format_time(last.time)}});
  }

 private:
  const MetricsFile& f_;
  std::size_t index_;
  const MetricSeries& s_;
  const MetricCondition& c_;
  const std::string& node_;
  std::uint64_t& seq_;
  const EventSink& sink_;
  MetricExtractStats& st_;
};

}  // namespace

MetricExtractStats extract_metric_events(const MetricsFile& file, const CompiledRules& rules,
                                         const JobInfo& job, std::uint64_t& seq,
                                         const EventSink& sink) {
  MetricExtractStats st;
  if (!file.ok) return st;
  // "Absent" is judged against the newest sample of the whole file (how far
  // Prometheus had data), cut at the end of the job's window.
  TimeUs file_end = 0;
  for (const auto& s : file.series)
    if (!s.samples.empty()) file_end = std::max(file_end, s.samples.back().time);
  TimeUs reference_end = file_end;
  if (auto end = job.window_end())
    reference_end = std::min(reference_end,
                             *end + static_cast<TimeUs>(rules.settings.window_after_end_s * 1e6));
  for (std::size_t i = 0; i < file.series.size(); ++i) {
    const MetricSeries& s = file.series[i];
    ++st.series;
    std::string node = metric_series_node(s, rules.metric_node_labels, job);
    if (node.empty()) {
      ++st.outside_job;
      continue;
    }
    st.nodes.insert(node);
    for (const auto& c : rules.metric_conditions) {
      if (!c.applies_to(file.query, s.metric())) continue;
      SeriesEvents ev(file, i, s, c, node, seq, sink, st);
      switch (c.type) {
        case MetricConditionType::kIncrease:
          ev.increase();
          break;
        case MetricConditionType::kThreshold:
          ev.threshold();
          break;
        case MetricConditionType::kChange:
          ev.change();
          break;
        case MetricConditionType::kAbsent:
          ev.absent(reference_end);
          break;
      }
    }
  }
  return st;
}

}  // namespace ff
