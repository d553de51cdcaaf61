// Step 3 of the pipeline: filter rules. Each is a small named unit that
// reads and annotates events, in three ordered phases:
//   EARLY  what an event is about: node, rank, device, Xid meaning, job scope
//   MAIN   whether it is relevant: clock, job window, GPUs in use, duplicates
//   FINAL  how events relate: bursts, pid/rank links
// on_event() runs as each event is extracted (streaming, before the bounded
// store); on_stream() runs once on the retained events after all input.
// The registry order in make_filter_rules() is the execution order.
#pragma once

#include <memory>
#include <vector>

#include "engine/filter/filter_context.h"
#include "engine/model/event.h"

namespace ff {

enum class Phase { kEarly, kMain, kFinal };
const char* phase_name(Phase p);

class FilterRule {
 public:
  virtual ~FilterRule() = default;
  virtual const char* name() const = 0;
  virtual Phase phase() const = 0;
  virtual void on_event(Event&, FilterContext&) {}
  virtual void on_stream(std::vector<Event>&, FilterContext&) {}
};

// All filter rules, sorted by phase, in their fixed order within a phase.
std::vector<std::unique_ptr<FilterRule>> make_filter_rules();

// Marks an event ignored (the first reason sticks).
inline void ignore_event(Event& e, const std::string& reason) {
  if (!e.ignored) {
    e.ignored = true;
    e.ignore_reason = reason;
  }
}

}  // namespace ff
