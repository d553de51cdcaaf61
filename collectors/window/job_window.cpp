#include "collectors/window/job_window.h"

namespace ff::collect {

JobWindow job_window(const std::vector<AllocRecord>& allocs, TimeUs now, const NodeConfig& config) {
  JobWindow result;
  for (const auto& a : allocs)
    if (a.start_time && (!result.job_start || *a.start_time < *result.job_start))
      result.job_start = a.start_time;
  TimeUs start =
      result.job_start ? *result.job_start : now - config.fallback_lookback_s * kUsPerSecond;
  result.window.begin = start - config.margin_before_s * kUsPerSecond;
  result.window.end = now + config.margin_after_s * kUsPerSecond;
  return result;
}

}  // namespace ff::collect
