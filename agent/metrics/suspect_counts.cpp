#include "agent/metrics/suspect_counts.h"

#include <ctime>

namespace ff::agent {

AgentMetrics::SuspectCounts flagged_suspect_counts(DiagnosisStore& store,
                                                   const SuspectSettings& settings) {
  auto now = static_cast<std::int64_t>(std::time(nullptr));
  std::int64_t since = now - settings.window_s;
  SuspectReport report = find_suspects(store.sightings(since), settings, since, now);
  AgentMetrics::SuspectCounts counts;
  for (auto kind : {ComponentKind::node, ComponentKind::gpu, ComponentKind::ib_port,
                    ComponentKind::switch_port})
    counts[to_string(kind)] = 0;
  for (const auto& s : report.suspects)
    if (s.flagged) counts[to_string(s.kind)] += 1;
  return counts;
}

}  // namespace ff::agent
