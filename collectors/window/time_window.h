// The stretch of time a bundle covers: the job's lifetime widened by the
// configured margins. Log lines are cut to it so a bundle stays small.
#pragma once

#include <chrono>

#include "incident/time/time.h"

namespace ff::collect {

struct TimeWindow {
  TimeUs begin = 0;
  TimeUs end = 0;

  bool contains(TimeUs t) const { return t >= begin && t <= end; }
};

// The wall clock at the moment a live source (the ring buffer, the journal)
// is read: nothing it holds is later than that.
inline TimeUs wall_clock_now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace ff::collect
