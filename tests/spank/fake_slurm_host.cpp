#include "tests/spank/fake_slurm_host.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

FakeSlurmHost& fake_host() {
  static FakeSlurmHost host;
  return host;
}

void ResetFakeHost() {
  FakeSlurmHost& host = fake_host();
  std::lock_guard<std::mutex> lock(host.mutex);
  host.context = S_CTX_REMOTE;
  host.job_id = 12;
  host.step_id = 0;
  host.node_count = 3;
  host.node_index = 1;
  host.local_task_count = 2;
  host.total_task_count = 6;
  host.restart_count = 0;
  host.uid = 1000;
  host.env.clear();
  host.task_id = -1;
  host.in_task_exit = false;
  host.options.clear();
  host.errors.clear();
  host.infos.clear();
}

namespace {

std::string Format(const char* format, va_list arguments) {
  char text[4096];
  vsnprintf(text, sizeof text, format, arguments);
  return text;
}

bool IsTaskItem(spank_item_t item) {
  return item == S_TASK_ID || item == S_TASK_GLOBAL_ID || item == S_TASK_PID ||
         item == S_TASK_EXIT_STATUS;
}

}  // namespace

extern "C" {

spank_context_t spank_context(void) {
  return fake_host().context;
}

spank_err_t spank_get_item(spank_t, spank_item_t item, ...) {
  FakeSlurmHost& host = fake_host();
  if (host.context != S_CTX_REMOTE) return static_cast<spank_err_t>(ESPANK_NOT_AVAIL);
  if (IsTaskItem(item) && host.task_id < 0) return static_cast<spank_err_t>(ESPANK_NOT_TASK);
  if (item == S_TASK_EXIT_STATUS && !host.in_task_exit)
    return static_cast<spank_err_t>(ESPANK_NOT_AVAIL);
  va_list arguments;
  va_start(arguments, item);
  spank_err_t result = static_cast<spank_err_t>(ESPANK_SUCCESS);
  switch (item) {
    case S_JOB_ID:
      *va_arg(arguments, uint32_t*) = host.job_id;
      break;
    case S_JOB_STEPID:
      *va_arg(arguments, uint32_t*) = host.step_id;
      break;
    case S_JOB_NNODES:
      *va_arg(arguments, uint32_t*) = host.node_count;
      break;
    case S_JOB_NODEID:
      *va_arg(arguments, uint32_t*) = host.node_index;
      break;
    case S_JOB_LOCAL_TASK_COUNT:
      *va_arg(arguments, uint32_t*) = host.local_task_count;
      break;
    case S_JOB_TOTAL_TASK_COUNT:
      *va_arg(arguments, uint32_t*) = host.total_task_count;
      break;
    case S_SLURM_RESTART_COUNT:
      *va_arg(arguments, uint32_t*) = host.restart_count;
      break;
    case S_JOB_UID:
      *va_arg(arguments, uid_t*) = host.uid;
      break;
    case S_TASK_ID:
      *va_arg(arguments, int*) = host.task_id;
      break;
    case S_TASK_GLOBAL_ID:
      *va_arg(arguments, uint32_t*) = host.task_global_id;
      break;
    case S_TASK_PID:
      *va_arg(arguments, pid_t*) = host.task_pid;
      break;
    case S_TASK_EXIT_STATUS:
      *va_arg(arguments, int*) = host.task_exit_status;
      break;
    default:
      result = static_cast<spank_err_t>(ESPANK_BAD_ARG);
  }
  va_end(arguments);
  return result;
}

spank_err_t spank_getenv(spank_t, const char* var, char* buf, int len) {
  FakeSlurmHost& host = fake_host();
  if (host.context != S_CTX_REMOTE) return static_cast<spank_err_t>(ESPANK_NOT_REMOTE);
  auto found = host.env.find(var);
  if (found == host.env.end()) return static_cast<spank_err_t>(ESPANK_ENV_NOEXIST);
  if (static_cast<int>(found->second.size()) >= len)
    return static_cast<spank_err_t>(ESPANK_NOSPACE);
  std::memcpy(buf, found->second.c_str(), found->second.size() + 1);
  return static_cast<spank_err_t>(ESPANK_SUCCESS);
}

spank_err_t spank_setenv(spank_t, const char* var, const char* val, int overwrite) {
  FakeSlurmHost& host = fake_host();
  if (host.context != S_CTX_REMOTE) return static_cast<spank_err_t>(ESPANK_NOT_REMOTE);
  if (!overwrite && host.env.count(var)) return static_cast<spank_err_t>(ESPANK_ENV_EXISTS);
  host.env[var] = val;
  return static_cast<spank_err_t>(ESPANK_SUCCESS);
}

spank_err_t spank_option_register(spank_t, struct spank_option* opt) {
  fake_host().options.push_back(*opt);
  return static_cast<spank_err_t>(ESPANK_SUCCESS);
}

const char* spank_strerror(spank_err_t) {
  return "fake spank error";
}

void slurm_error(const char* format, ...) {
  va_list arguments;
  va_start(arguments, format);
  std::string message = Format(format, arguments);
  va_end(arguments);
  std::lock_guard<std::mutex> lock(fake_host().mutex);
  fake_host().errors.push_back(message);
}

void slurm_info(const char* format, ...) {
  va_list arguments;
  va_start(arguments, format);
  std::string message = Format(format, arguments);
  va_end(arguments);
  std::lock_guard<std::mutex> lock(fake_host().mutex);
  fake_host().infos.push_back(message);
}

}  // extern "C"
