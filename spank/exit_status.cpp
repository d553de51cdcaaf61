#include "spank/exit_status.h"

#include <sys/wait.h>

namespace firstfault::spank {

std::string FormatExitCode(int wait_status) {
  if (WIFSIGNALED(wait_status)) return "0:" + std::to_string(WTERMSIG(wait_status));
  if (WIFEXITED(wait_status)) return std::to_string(WEXITSTATUS(wait_status)) + ":0";
  // Stopped or continued: not an end; print the low bits the way Slurm would.
  return std::to_string((wait_status >> 8) & 0xff) + ":" + std::to_string(wait_status & 0x7f);
}

}  // namespace firstfault::spank
