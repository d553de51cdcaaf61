// After a restart the tracker's memory is gone: job attempts whose bundles
// arrived but that never got their final or deadline pass are handed to the
// tracker again, so their passes still run (the deadline counts from now).
#pragma once

#include <atomic>
#include <chrono>

#include "agent/server/job_tracker.h"
#include "agent/server/pass_runner.h"
#include "agent/server/state_layout.h"
#include "agent/store/diagnosis_store.h"

namespace ff::agent {

// Looks at job attempts whose bundles/ changed within `recent`. Returns how
// many were handed over.
int recover_unfinished_jobs(const StateLayout& layout, DiagnosisStore& store, JobTracker& tracker,
                            std::chrono::hours recent = std::chrono::hours(48));

// A pass is stored before its Comment is written: an agent that stopped
// between the two (killed, the machine down) left passes whose
// comment_status is still "". Their Comments are written now, newest pass
// of each job attempt only, passes stored within `recent`; `stop` ends the
// loop early (the agent is stopping). Returns how many were tried.
int recover_pending_comments(DiagnosisStore& store, PassRunner& runner,
                             const std::atomic<bool>& stop,
                             std::chrono::hours recent = std::chrono::hours(48));

}  // namespace ff::agent
