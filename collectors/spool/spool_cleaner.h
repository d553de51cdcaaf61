// Removes what the spool no longer needs: job records, pending hand-offs and
// undelivered and rejected bundles older than spool_keep_days, and leftovers
// of staging.
#pragma once

#include "collectors/spool/spool_layout.h"

namespace ff::collect {

// Returns how many entries were removed.
int clean_spool(const SpoolLayout& spool, int keep_days);

}  // namespace ff::collect
