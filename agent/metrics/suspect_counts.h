// firstfault_suspects: how many components the suspects report flags now,
// by kind, from the database (the same report as `firstfault suspects`).
#pragma once

#include "agent/metrics/agent_metrics.h"
#include "agent/store/diagnosis_store.h"
#include "agent/suspects/suspect_report.h"

namespace ff::agent {

// Flagged suspects of the last settings.window_s seconds, every kind
// present (0 when none), so a kind's series does not vanish when it empties.
AgentMetrics::SuspectCounts flagged_suspect_counts(DiagnosisStore& store,
                                                   const SuspectSettings& settings);

}  // namespace ff::agent
