// The one place that includes <slurm/spank.h>. Its callback declarations sit outside
// the header's own extern "C" block, so C++ must wrap the include (shared notes 1.5).
#ifndef FIRSTFAULT_SPANK_SLURM_API_H_
#define FIRSTFAULT_SPANK_SLURM_API_H_

extern "C" {
#include <slurm/spank.h>
}

#endif  // FIRSTFAULT_SPANK_SLURM_API_H_
