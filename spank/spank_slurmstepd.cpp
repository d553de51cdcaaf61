#include "spank/spank_slurmstepd.h"

#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "spank/exit_status.h"
#include "spank/gpu_map.h"
#include "spank/plugin_args.h"
#include "spank/plugin_log.h"
#include "spank/process_launcher.h"
#include "spank/spank_option.h"
#include "spank/spool_records.h"
#include "spank/spool_writer.h"
#include "spank/step_name.h"
#include "spank/user_option.h"

namespace firstfault::spank {
namespace {

// What one slurmstepd knows about its step, from init to exit.
struct StepState {
  PluginArgs args;
  uint32_t step_id = 0;
  std::string job_id;
  std::string step;  // StepName(step_id)
  std::string node;
  std::unique_ptr<SpoolWriter> spool;
  bool recording = false;  // not opted out, init_post_opt ran
  std::vector<std::string> gpus;
  std::vector<std::string> gpu_pci;

  // task_post_fork and task_exit may run on different threads.
  std::mutex mutex;
  bool task_failed = false;
  std::optional<int> batch_script_status;
};

// Created in init and deleted in exit, so nothing runs at dlopen or dlclose.
StepState* step_state = nullptr;

std::string GetEnv(spank_t spank, const char* name) {
  std::vector<char> buffer(4096);
  spank_err_t error = spank_getenv(spank, name, buffer.data(), static_cast<int>(buffer.size()));
  if (error == ESPANK_NOSPACE) {  // a long SLURM_JOB_NODELIST
    buffer.resize(1 << 20);
    error = spank_getenv(spank, name, buffer.data(), static_cast<int>(buffer.size()));
  }
  return error == ESPANK_SUCCESS ? std::string(buffer.data()) : std::string();
}

template <typename T>
T GetItem(spank_t spank, spank_item_t item, T fallback = T()) {
  T value = fallback;
  if (spank_get_item(spank, item, &value) != ESPANK_SUCCESS) return fallback;
  return value;
}

// slurmstepd sets SLURMD_NODENAME in its own environment from slurmd's config. The
// job's environment may carry another node's name (srun inside a batch script
// inherits the batch node's), so it is only the second choice.
std::string NodeName(spank_t spank) {
  if (const char* name = std::getenv("SLURMD_NODENAME"); name != nullptr && *name != '\0') {
    return name;
  }
  if (std::string name = GetEnv(spank, "SLURMD_NODENAME"); !name.empty()) return name;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

uint32_t ParseCount(const std::string& text) {
  uint32_t count = 0;
  std::from_chars(text.data(), text.data() + text.size(), count);
  return count;
}

bool IsExternStep(const StepState& state) {
  return state.step_id == kExternStep;
}
bool IsBatchStep(const StepState& state) {
  return state.step_id == kBatchStep;
}

RankRecord TaskRecord(spank_t spank, const StepState& state) {
  RankRecord record;
  record.job_id = state.job_id;
  record.step = state.step;
  record.node = state.node;
  record.rank = GetItem<uint32_t>(spank, S_TASK_GLOBAL_ID);
  record.local_rank = GetItem<int>(spank, S_TASK_ID);
  record.pid = GetItem<pid_t>(spank, S_TASK_PID);
  record.gpus = state.gpus;
  record.gpu_pci = state.gpu_pci;
  return record;
}

std::vector<std::string> CollectCommand(const StepState& state, const std::string& pass) {
  std::vector<std::string> argv = {state.args.collect, pass,     "--job",
                                   state.job_id,       "--node", state.node};
  return argv;
}

void AppendConfig(const StepState& state, std::vector<std::string>* argv) {
  if (state.args.config.empty()) return;
  argv->push_back("--config");
  argv->push_back(state.args.config);
}

void StartStepCollection(const StepState& state) {
  std::vector<std::string> argv = CollectCommand(state, "step");
  AppendConfig(state, &argv);
  if (std::string error = LaunchDetached(argv); !error.empty()) {
    LogError("job " + state.job_id + " step " + state.step + ": collector not started: " + error);
    return;
  }
  LogInfo("job " + state.job_id + " step " + state.step + " failed: started " + argv[0] + " step");
}

// A batch script ended by SIGTERM/SIGKILL was killed by Slurm (time limit,
// scancel, preemption): the job has already ended, slurmctld would refuse the
// Comment, and waiting for a fast pass would only hold the job in COMPLETING.
// Its bundle goes early, detached, like a failed step's.
bool KilledBySlurm(int wait_status) {
  return WIFSIGNALED(wait_status) &&
         (WTERMSIG(wait_status) == SIGTERM || WTERMSIG(wait_status) == SIGKILL);
}

// The batch script failed: while the job still runs, have the agent diagnose it and
// write the Comment. The job waits for this, at most fastpass_timeout (+ the kill).
void RunFastPass(const StepState& state, int script_status) {
  std::vector<std::string> argv = CollectCommand(state, "fastpass");
  argv.insert(argv.end(), {"--exit-status", std::to_string(script_status), "--timeout",
                           std::to_string(state.args.fastpass_timeout_s)});
  AppendConfig(state, &argv);
  BoundedRun run = RunBounded(argv, std::chrono::seconds(state.args.fastpass_timeout_s));
  std::string what = "job " + state.job_id + " batch script ended " +
                     FormatExitCode(script_status) + ": fast pass " + DescribeBoundedRun(run);
  bool delivered = run.outcome == BoundedRun::Outcome::kExited && WEXITSTATUS(run.wait_status) == 0;
  if (delivered) {
    LogInfo(what);
  } else {
    LogError(what);
  }
}

}  // namespace

int StepdInit(spank_t spank, int argc, char** argv) {
  delete step_state;
  step_state = nullptr;
  auto state = std::make_unique<StepState>();
  ParsedPluginArgs parsed = ParsePluginArgs(argc, argv);
  SetLogLevel(parsed.args.log);
  for (const std::string& problem : parsed.problems) LogError("plugstack argument " + problem);
  state->args = parsed.args;
  state->job_id = std::to_string(GetItem<uint32_t>(spank, S_JOB_ID));
  state->step_id = GetItem<uint32_t>(spank, S_JOB_STEPID);
  state->step = StepName(state->step_id);
  state->node = NodeName(spank);
  std::string spool_root = ExpandNodeName(state->args.spool, state->node);
  state->spool = std::make_unique<SpoolWriter>(
      spool_root, [](const std::string& message) { LogError(message); });
  step_state = state.release();
  return RegisterUserOption(spank);
}

int StepdInitPostOpt(spank_t spank, int /*argc*/, char** /*argv*/) {
  StepState* state = step_state;
  if (state == nullptr) return 0;
  if (UserOptedOut()) {
    if (IsBatchStep(*state)) {
      // Slurm removed the option from the job's environment before this call; put it
      // back so the job's sruns opt out as well.
      spank_setenv(spank, kOptOutEnvironmentVariable, "off", 1);
    }
    LogInfo("job " + state->job_id + " step " + state->step + ": --firstfault=off, not recorded");
    return 0;
  }
  AllocRecord alloc;
  alloc.job_id = state->job_id;
  alloc.step = state->step;
  alloc.node = state->node;
  alloc.node_index = GetItem<uint32_t>(spank, S_JOB_NODEID);
  alloc.node_count = GetItem<uint32_t>(spank, S_JOB_NNODES);
  alloc.local_task_count = GetItem<uint32_t>(spank, S_JOB_LOCAL_TASK_COUNT);
  alloc.total_task_count = GetItem<uint32_t>(spank, S_JOB_TOTAL_TASK_COUNT);
  alloc.restart_count = GetItem<uint32_t>(spank, S_SLURM_RESTART_COUNT);
  alloc.uid = GetItem<uid_t>(spank, S_JOB_UID);
  if (IsBatchStep(*state)) {
    // The batch step reports no node or task count of its own: it runs one task, the
    // script, on the job's first node.
    if (alloc.node_count == 0) alloc.node_count = ParseCount(GetEnv(spank, "SLURM_JOB_NUM_NODES"));
    if (alloc.total_task_count == 0) alloc.total_task_count = alloc.local_task_count;
  }
  alloc.start_time = std::time(nullptr);
  alloc.cuda_visible_devices = GetEnv(spank, "CUDA_VISIBLE_DEVICES");
  alloc.slurm_job_gpus = GetEnv(spank, "SLURM_JOB_GPUS");
  alloc.nodelist = GetEnv(spank, "SLURM_JOB_NODELIST");
  if (alloc.nodelist.empty()) alloc.nodelist = GetEnv(spank, "SLURM_NODELIST");

  // Slurm's node-global indices first: inside the job CUDA_VISIBLE_DEVICES may be
  // renumbered from 0 when devices are constrained by cgroup.
  std::string gpu_list = GetEnv(spank, "SLURM_STEP_GPUS");
  if (gpu_list.empty()) gpu_list = alloc.slurm_job_gpus;
  if (gpu_list.empty()) gpu_list = alloc.cuda_visible_devices;
  state->gpus = SplitGpuList(gpu_list);
  if (!state->gpus.empty()) state->gpu_pci = MapGpusToBusIds(state->gpus, ReadNvidiaGpus());

  state->spool->WriteFile(AllocRecordPath(alloc.job_id, alloc.step), AllocRecordJson(alloc));
  // The extern step has no tasks of the job; its task callbacks see task id -1.
  state->recording = !IsExternStep(*state);
  return 0;
}

int StepdTaskPostFork(spank_t spank, int /*argc*/, char** /*argv*/) {
  StepState* state = step_state;
  if (state == nullptr || !state->recording) return 0;
  RankRecord record = TaskRecord(spank, *state);
  std::string content = RankRecordJson(record);
  std::lock_guard<std::mutex> lock(state->mutex);
  state->spool->WriteFile(RankRecordPath(record.job_id, record.step, record.rank), content);
  return 0;
}

int StepdTaskExit(spank_t spank, int /*argc*/, char** /*argv*/) {
  StepState* state = step_state;
  if (state == nullptr || !state->recording) return 0;
  int status = 0;
  if (spank_get_item(spank, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS) {
    LogError("job " + state->job_id + " step " + state->step + ": no task exit status");
    return 0;
  }
  RankRecord record = TaskRecord(spank, *state);
  record.exit_status = status;
  std::string content = RankRecordJson(record);
  std::lock_guard<std::mutex> lock(state->mutex);
  if (IsFailedExit(status)) state->task_failed = true;
  if (IsBatchStep(*state)) state->batch_script_status = status;
  state->spool->WriteFile(RankRecordPath(record.job_id, record.step, record.rank), content);
  return 0;
}

int StepdExit(spank_t /*spank*/, int /*argc*/, char** /*argv*/) {
  std::unique_ptr<StepState> state(step_state);
  step_state = nullptr;
  if (state == nullptr || !state->recording) return 0;
  std::lock_guard<std::mutex> lock(state->mutex);
  if (IsBatchStep(*state)) {
    if (!state->batch_script_status || !IsFailedExit(*state->batch_script_status)) return 0;
    if (state->args.fastpass_timeout_s > 0 && !KilledBySlurm(*state->batch_script_status)) {
      RunFastPass(*state, *state->batch_script_status);
    } else {
      StartStepCollection(*state);  // no fast pass: the bundle still goes early
    }
    return 0;
  }
  if (state->task_failed) StartStepCollection(*state);
  return 0;
}

}  // namespace firstfault::spank
