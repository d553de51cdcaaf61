// The C entry points Slurm looks up in spank_firstfault.so. Each one dispatches on
// spank_context() to the file of that context and never lets an exception reach
// Slurm (that would terminate slurmstepd, srun or sbatch). The plugin is optional
// in spirit: every callback returns 0, failures are only logged.
#include <exception>

#include "spank/plugin_log.h"
#include "spank/slurm_api.h"
#include "spank/spank_client.h"
#include "spank/spank_slurmstepd.h"

namespace {

using firstfault::spank::LogError;

template <typename Callback>
int Guarded(const char* callback_name, Callback&& callback) {
  try {
    callback();
  } catch (const std::exception& error) {
    try {
      LogError(std::string(callback_name) + ": " + error.what());
    } catch (...) {
    }
  } catch (...) {
    try {
      LogError(std::string(callback_name) + ": unknown exception");
    } catch (...) {
    }
  }
  return 0;
}

bool IsRemote() {
  return spank_context() == S_CTX_REMOTE;
}

}  // namespace

extern "C" {

// Defined by hand rather than with SPANK_PLUGIN(): in C++ a namespace-scope const
// has internal linkage, and Slurm's dlsym() would not find it (shared notes 1.5).
extern __attribute__((visibility("default"))) const char plugin_name[] = "firstfault";
extern __attribute__((visibility("default"))) const char plugin_type[] = "spank";
extern __attribute__((visibility("default"))) const unsigned int plugin_version =
    SLURM_VERSION_NUMBER;

__attribute__((visibility("default"))) int slurm_spank_init(spank_t spank, int argc, char** argv) {
  return Guarded("init", [&] {
    switch (spank_context()) {
      case S_CTX_LOCAL:
      case S_CTX_ALLOCATOR:
        firstfault::spank::ClientInit(spank, argc, argv);
        break;
      case S_CTX_REMOTE:
        firstfault::spank::StepdInit(spank, argc, argv);
        break;
      default:  // slurmd, job_script: nothing to do
        break;
    }
  });
}

__attribute__((visibility("default"))) int slurm_spank_init_post_opt(spank_t spank, int argc,
                                                                     char** argv) {
  return Guarded("init_post_opt", [&] {
    if (IsRemote()) firstfault::spank::StepdInitPostOpt(spank, argc, argv);
  });
}

__attribute__((visibility("default"))) int slurm_spank_task_post_fork(spank_t spank, int argc,
                                                                      char** argv) {
  return Guarded("task_post_fork", [&] {
    if (IsRemote()) firstfault::spank::StepdTaskPostFork(spank, argc, argv);
  });
}

__attribute__((visibility("default"))) int slurm_spank_task_exit(spank_t spank, int argc,
                                                                 char** argv) {
  return Guarded("task_exit", [&] {
    if (IsRemote()) firstfault::spank::StepdTaskExit(spank, argc, argv);
  });
}

__attribute__((visibility("default"))) int slurm_spank_exit(spank_t spank, int argc, char** argv) {
  return Guarded("exit", [&] {
    if (IsRemote()) firstfault::spank::StepdExit(spank, argc, argv);
  });
}

}  // extern "C"
