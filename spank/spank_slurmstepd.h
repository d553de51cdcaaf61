// slurmstepd (remote context, root): one process per step on each node. Records the
// step and its tasks in the node spool and, when a task failed, starts the collector:
// detached for a normal step, bounded (the fast pass) for a failed batch script.
#ifndef FIRSTFAULT_SPANK_SPANK_SLURMSTEPD_H_
#define FIRSTFAULT_SPANK_SPANK_SLURMSTEPD_H_

#include "spank/slurm_api.h"

namespace firstfault::spank {

int StepdInit(spank_t spank, int argc, char** argv);
int StepdInitPostOpt(spank_t spank, int argc, char** argv);
int StepdTaskPostFork(spank_t spank, int argc, char** argv);
int StepdTaskExit(spank_t spank, int argc, char** argv);
int StepdExit(spank_t spank, int argc, char** argv);

}  // namespace firstfault::spank

#endif  // FIRSTFAULT_SPANK_SPANK_SLURMSTEPD_H_
