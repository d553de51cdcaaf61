// A stand-in for the Slurm process that loads spank_firstfault.so: the test binary
// defines spank_* and slurm_* (exported with -rdynamic, as libslurmfull does in
// slurmstepd), and this header lets a test set what they answer.
#ifndef FIRSTFAULT_TESTS_SPANK_FAKE_SLURM_HOST_H_
#define FIRSTFAULT_TESTS_SPANK_FAKE_SLURM_HOST_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

extern "C" {
#include <slurm/spank.h>
}

struct FakeSlurmHost {
  spank_context_t context = S_CTX_REMOTE;
  uint32_t job_id = 12;
  uint32_t step_id = 0;
  uint32_t node_count = 3;
  uint32_t node_index = 1;
  uint32_t local_task_count = 2;
  uint32_t total_task_count = 6;
  uint32_t restart_count = 0;
  uid_t uid = 1000;
  std::map<std::string, std::string> env;  // the job's environment (spank_getenv)

  // The task whose callback runs; task_id -1 outside task callbacks.
  int task_id = -1;
  uint32_t task_global_id = 0;
  pid_t task_pid = 0;
  int task_exit_status = 0;
  bool in_task_exit = false;

  std::vector<struct spank_option> options;  // spank_option_register
  std::vector<std::string> errors;           // slurm_error
  std::vector<std::string> infos;            // slurm_info
  std::mutex mutex;
};

FakeSlurmHost& fake_host();
void ResetFakeHost();

#endif  // FIRSTFAULT_TESTS_SPANK_FAKE_SLURM_HOST_H_
