// The stretch of time a bundle covers: the job's lifetime widened by the
// configured margins. Log lines are cut to it so a bundle stays small.
#pragma once

#include "model/time.h"

namespace ff::collect {

struct TimeWindow {
  TimeUs begin = 0;
  TimeUs end = 0;

  bool contains(TimeUs t) const { return t >= begin && t <= end; }
};

}  // namespace ff::collect
