#include "engine/filter/event_store.h"

#include <algorithm>

namespace ff {

void EventStore::summarise_ignored(const Event& e) {
  auto& item = ignored_[{e.node, e.kind, e.ignore_reason}];
  if (item.count == 0) {
    item.node = e.node;
    item.kind = e.kind;
    item.reason = e.ignore_reason;
    item.example = e.source + ":" + std::to_string(e.line);
  }
  ++item.count;
}

void EventStore::add(Event&& e) {
  if (e.ignored) {
    summarise_ignored(e);
    return;
  }
  auto& bucket = buckets_[{e.node, e.kind, e.device, e.field("code")}];
  bucket.push_back(std::move(e));
  if (bucket.size() > max_per_key_) {
    // Drop the latest: the earliest events carry the attribution.
    auto latest = std::max_element(bucket.begin(), bucket.end(), event_time_less);
    ++overflow_[{latest->node, latest->kind}];
    bucket.erase(latest);
  }
}

std::vector<Event> EventStore::take() {
  std::vector<Event> out;
  for (auto& [key, bucket] : buckets_)
    for (auto& e : bucket) out.push_back(std::move(e));
  buckets_.clear();
  std::sort(out.begin(), out.end(), [](const Event& a, const Event& b) { return a.seq < b.seq; });
  return out;
}

std::vector<IgnoredItem> EventStore::ignored() const {
  std::vector<IgnoredItem> out;
  for (const auto& [key, item] : ignored_) out.push_back(item);
  return out;
}

}  // namespace ff
