// After a restart the tracker's memory is gone: job attempts whose bundles
// arrived but that never got their final or deadline pass are handed to the
// tracker again, so their passes still run (the deadline counts from now).
#pragma once

#include <chrono>

#include "server/job_tracker.h"
#include "server/state_layout.h"
#include "store/diagnosis_store.h"

namespace ff::agent {

// Looks at job attempts whose bundles/ changed within `recent`. Returns how
// many were handed over.
int recover_unfinished_jobs(const StateLayout& layout, DiagnosisStore& store, JobTracker& tracker,
                            std::chrono::hours recent = std::chrono::hours(48));

}  // namespace ff::agent
