// srun (local context) and sbatch/salloc (allocator context): the user's side only
// accepts --firstfault; everything else happens on the compute node.
#ifndef FIRSTFAULT_SPANK_SPANK_CLIENT_H_
#define FIRSTFAULT_SPANK_SPANK_CLIENT_H_

#include "spank/slurm_api.h"

namespace firstfault::spank {

int ClientInit(spank_t spank, int argc, char** argv);

}  // namespace firstfault::spank

#endif  // FIRSTFAULT_SPANK_SPANK_CLIENT_H_
