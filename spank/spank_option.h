// Registers --firstfault=on|off with Slurm and remembers the user's choice for this
// process. Registration must happen in slurm_spank_init of every context that sees
// the option: srun and sbatch/salloc to accept it, slurmstepd to receive it (its
// callback then runs with remote=1 before init_post_opt).
#ifndef FIRSTFAULT_SPANK_SPANK_OPTION_H_
#define FIRSTFAULT_SPANK_SPANK_OPTION_H_

#include "spank/slurm_api.h"

namespace firstfault::spank {

// Returns 0; a failed registration is logged (the option is then unknown to srun).
int RegisterUserOption(spank_t spank);

bool UserOptedOut();

}  // namespace firstfault::spank

#endif  // FIRSTFAULT_SPANK_SPANK_OPTION_H_
