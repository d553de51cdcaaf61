// A task's raw wait(2) status as Slurm shows it ("exit:signal", e.g. "1:0", "0:9").
#ifndef FIRSTFAULT_SPANK_EXIT_STATUS_H_
#define FIRSTFAULT_SPANK_EXIT_STATUS_H_

#include <string>

namespace firstfault::spank {

std::string FormatExitCode(int wait_status);

// A task failed when it exited non-zero or was killed by a signal.
inline bool IsFailedExit(int wait_status) {
  return wait_status != 0;
}

}  // namespace firstfault::spank

#endif  // FIRSTFAULT_SPANK_EXIT_STATUS_H_
