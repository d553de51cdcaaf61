// The bounded store between extraction and the stream rules. Memory must not
// grow with log volume: per (node, kind, device, code) only the earliest
// `max_events_per_key` events are kept, the rest are counted. Ignored events
// are summarised per (node, kind, reason) with one example each.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "engine/model/event.h"
#include "incident/diagnosis.h"

namespace ff {

class EventStore {
 public:
  explicit EventStore(std::size_t max_per_key) : max_per_key_(max_per_key) {}

  void add(Event&& e);
  // Moves the retained events out, in read order.
  std::vector<Event> take();
  // Events counted but not kept, per (node, kind).
  const std::map<std::pair<std::string, std::string>, std::uint64_t>& overflow() const {
    return overflow_;
  }
  // Adds ignored events of the stream phase to the summary.
  void summarise_ignored(const Event& e);
  std::vector<IgnoredItem> ignored() const;

 private:
  std::size_t max_per_key_;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::vector<Event>>
      buckets_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> overflow_;
  std::map<std::tuple<std::string, std::string, std::string>, IgnoredItem> ignored_;
};

}  // namespace ff
