// firstfault-slurm-job JOB_ID: what slurmctld says of one job, read with
// libslurm (slurm_load_job) and printed as one JSON object (slurm_job.h) on
// stdout. The agent runs it with a time bound instead of linking libslurm,
// and instead of parsing `scontrol show job -o`, whose single line mixes the
// user's text (Comment, job name, paths) with the fields.
//
// JOB_ID: "12", an array task "12_3", a het component "12+1".
// Exit status: 0 found (the object on stdout), 3 no such job, 2 usage,
// 1 any other failure (slurmctld unreachable, ...; why on stderr).
#include <pwd.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "agent/slurm/slurm_job.h"

// Exported by libslurm (and what scontrol prints as JobState=), but not
// declared in 22.05's slurm.h.
extern "C" char* slurm_job_state_string(uint32_t state);

namespace {

constexpr int kFound = 0, kFailed = 1, kUsage = 2, kNotFound = 3;

struct JobIdArg {
  uint32_t job_id = 0;
  std::optional<uint32_t> array_task;  // "12_3"
  std::optional<uint32_t> het_offset;  // "12+1"
};

std::optional<uint32_t> number(const std::string& s) {
  if (s.empty() || s.size() > 10 || s.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  unsigned long long v = std::stoull(s);
  if (v == 0 || v >= NO_VAL) return std::nullopt;
  return static_cast<uint32_t>(v);
}

std::optional<JobIdArg> parse_job_id(const std::string& text) {
  JobIdArg arg;
  auto sep = text.find_first_of("_+");
  auto head = number(text.substr(0, sep));
  if (!head) return std::nullopt;
  arg.job_id = *head;
  if (sep == std::string::npos) return arg;
  std::string tail = text.substr(sep + 1);
  // A task or offset may be 0, which number() refuses for a job id.
  if (tail.empty() || tail.size() > 10 || tail.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  unsigned long long v = std::stoull(tail);
  if (v >= NO_VAL) return std::nullopt;
  (text[sep] == '_' ? arg.array_task : arg.het_offset) = static_cast<uint32_t>(v);
  return arg;
}

// The record scontrol would show for the id: slurm_load_job of an array or
// het job id answers with every task or component.
slurm_job_info_t* pick(job_info_msg_t& msg, const JobIdArg& arg) {
  for (uint32_t i = 0; i < msg.record_count; ++i) {
    slurm_job_info_t& r = msg.job_array[i];
    if (arg.array_task) {
      if (r.array_job_id == arg.job_id && r.array_task_id == *arg.array_task) return &r;
    } else if (arg.het_offset) {
      if (r.het_job_id == arg.job_id && r.het_job_offset == *arg.het_offset) return &r;
    } else if (r.job_id == arg.job_id) {
      return &r;
    }
  }
  return nullptr;
}

std::string text(const char* s) {
  return s ? s : "";
}

std::vector<std::string> expand(const char* hostlist) {
  std::vector<std::string> out;
  if (!hostlist || !*hostlist) return out;
  hostlist_t hl = slurm_hostlist_create(hostlist);
  if (!hl) return out;
  while (char* host = slurm_hostlist_shift(hl)) {
    out.emplace_back(host);
    std::free(host);
  }
  slurm_hostlist_destroy(hl);
  return out;
}

std::string user_name(uint32_t uid, const char* from_slurm) {
  if (from_slurm && *from_slurm) return from_slurm;
  struct passwd pw {
  }, *found = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found) return found->pw_name;
  return "";
}

// As scontrol prints ExitCode=: the exit status, or 0 and the signal.
std::string exit_code(uint32_t status) {
  if (status == NO_VAL) return "";
  int s = static_cast<int>(status);
  unsigned code = 0, sig = 0;
  if (WIFSIGNALED(s))
    sig = WTERMSIG(s);
  else if (WIFEXITED(s))
    code = WEXITSTATUS(s);
  return std::to_string(code) + ":" + std::to_string(sig);
}

ff::agent::SlurmJob to_job(slurm_job_info_t& r) {
  ff::agent::SlurmJob job;
  // A het job's leader is asked for by its plain id, a component as "12+1".
  if (r.het_job_id != 0 && r.het_job_id != NO_VAL && r.het_job_offset != 0)
    job.job_id = std::to_string(r.het_job_id) + "+" + std::to_string(r.het_job_offset);
  else if (r.array_job_id != 0 && r.array_task_id != NO_VAL)
    job.job_id = std::to_string(r.array_job_id) + "_" + std::to_string(r.array_task_id);
  else
    job.job_id = std::to_string(r.job_id);
  job.state = text(slurm_job_state_string(r.job_state));
  job.exit_code = exit_code(r.exit_code);
  job.start_time = ff::agent::slurm_epoch_to_utc(r.start_time);
  job.end_time = ff::agent::slurm_epoch_to_utc(r.end_time);
  job.nodes = expand(r.nodes);
  job.batch_host = text(r.batch_host);
  // The default "slurm-%j.out" in the working directory, and the %-patterns
  // of -o/-e, expanded by libslurm itself, as for scontrol's StdOut=.
  std::vector<char> path(4096 + 1);
  slurm_get_job_stdout(path.data(), static_cast<int>(path.size()), &r);
  job.std_out = path.data();
  path.assign(path.size(), '\0');
  slurm_get_job_stderr(path.data(), static_cast<int>(path.size()), &r);
  job.std_err = path.data();
  job.user = user_name(r.user_id, r.user_name);
  job.uid = r.user_id == NO_VAL ? -1 : static_cast<int>(r.user_id);
  job.restart_count = r.restart_cnt;
  return job;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: firstfault-slurm-job JOB_ID\n");
    return kUsage;
  }
  auto arg = parse_job_id(argv[1]);
  if (!arg) {
    std::fprintf(stderr, "firstfault-slurm-job: not a job id: %.40s\n", argv[1]);
    return kUsage;
  }
  slurm_init(nullptr);
  job_info_msg_t* msg = nullptr;
  if (slurm_load_job(&msg, arg->job_id, SHOW_DETAIL) != SLURM_SUCCESS) {
    int err = slurm_get_errno();
    slurm_fini();
    if (err == ESLURM_INVALID_JOB_ID) return kNotFound;
    std::fprintf(stderr, "slurm_load_job %s: %s\n", argv[1], slurm_strerror(err));
    return kFailed;
  }
  int status = kNotFound;
  if (msg) {
    if (slurm_job_info_t* r = pick(*msg, *arg)) {
      std::string out = ff::agent::slurm_job_json(to_job(*r)) + "\n";
      status =
          std::fwrite(out.data(), 1, out.size(), stdout) == out.size() && std::fflush(stdout) == 0
              ? kFound
              : kFailed;
    }
    slurm_free_job_info_msg(msg);
  }
  slurm_fini();
  return status;
}
