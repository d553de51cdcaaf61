// firstfault-slurm-job: what Slurm says of one job, read with libslurm and
// printed as JSON (slurm_job.h) on stdout. The agent runs it with a time
// bound instead of linking libslurm, and instead of parsing `scontrol show
// job -o` or `sacct`, whose lines mix the user's text (Comment, job name,
// paths) with the fields.
//
//   firstfault-slurm-job JOB_ID
//       slurmctld's record (slurm_load_job): one SlurmJob object.
//   firstfault-slurm-job --accounting JOB_ID
//       slurmdbd's records of every attempt of the job (slurmdb_jobs_get
//       with duplicates), oldest first: one AccountingRecord object.
//   firstfault-slurm-job --set-comment | --set-admin-comment JOB_ID ATTEMPT TEXT
//       writes TEXT (already made safe by the agent) as the Comment of that
//       attempt's accounting record alone. sacctmgr cannot: `modify job`
//       changes the newest record of a job id (a requeued job's attempt 0
//       would overwrite attempt 1's Comment), every task of an array whose
//       id is also the array's, and it lower-cases the text. Here the record
//       is picked by its state and end time, and nothing is written unless
//       exactly that one record matches.
//
// JOB_ID: "12", an array task "12_3", a het component "12+1".
// Exit status: 0 found / written (the object on stdout), 3 no such job or
// attempt, 2 usage, 1 any other failure (slurmctld or slurmdbd unreachable,
// ...; why on stderr).
#include <pwd.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "agent/slurm/slurm_job.h"

// Exported by libslurm (and what scontrol prints as JobState=), but not
// declared in 22.05's slurm.h.
extern "C" char* slurm_job_state_string(uint32_t state);
// Exported by libslurm, not declared in 22.05's slurmdb.h: a record with
// every member "unset" (NO_VAL), as sacctmgr's modify starts from.
extern "C" slurmdb_job_rec_t* slurmdb_create_job_rec(void);

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

namespace {

int show_job(const JobIdArg& arg, const char* text_id) {
  job_info_msg_t* msg = nullptr;
  if (slurm_load_job(&msg, arg.job_id, SHOW_DETAIL) != SLURM_SUCCESS) {
    int err = slurm_get_errno();
    if (err == ESLURM_INVALID_JOB_ID) return kNotFound;
    std::fprintf(stderr, "slurm_load_job %s: %s\n", text_id, slurm_strerror(err));
    return kFailed;
  }
  int status = kNotFound;
  if (msg) {
    if (slurm_job_info_t* r = pick(*msg, arg)) {
      std::string out = ff::agent::slurm_job_json(to_job(*r)) + "\n";
      status =
          std::fwrite(out.data(), 1, out.size(), stdout) == out.size() && std::fflush(stdout) == 0
              ? kFound
              : kFailed;
    }
    slurm_free_job_info_msg(msg);
  }
  return status;
}

// The cluster this host's slurm.conf names: a job id is unique only within
// one cluster of a slurmdbd.
std::string cluster_name() {
  slurm_conf_t* conf = nullptr;
  if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS || !conf) return "";
  std::string name = text(conf->cluster_name);
  slurm_free_ctl_conf(conf);
  return name;
}

// A job condition for the records of one job id (every attempt), of this
// cluster; freed with free_condition. Everything in it is allocated here
// with malloc and freed here: libslurm's own destructors expect its xmalloc
// (a size header) and abort on anything else.
slurmdb_job_cond_t* job_condition(const JobIdArg& arg, const std::string& cluster) {
  auto* cond = static_cast<slurmdb_job_cond_t*>(std::calloc(1, sizeof(slurmdb_job_cond_t)));
  if (!cond) return nullptr;
  // Every record of the id, untruncated times, no steps, no default window.
  cond->flags = JOBCOND_FLAG_DUP | JOBCOND_FLAG_NO_STEP | JOBCOND_FLAG_NO_TRUNC |
                JOBCOND_FLAG_NO_DEFAULT_USAGE;
  // 0 would ask for records with no flags at all (sacct's default is this).
  cond->db_flags = SLURMDB_JOB_FLAG_NOTSET;
  cond->step_list = slurm_list_create(std::free);
  auto* sel = static_cast<slurm_selected_step_t*>(std::calloc(1, sizeof(slurm_selected_step_t)));
  sel->step_id.job_id = arg.job_id;
  sel->step_id.step_id = NO_VAL;
  sel->step_id.step_het_comp = NO_VAL;
  sel->array_task_id = arg.array_task ? *arg.array_task : NO_VAL;
  sel->het_job_offset = arg.het_offset ? *arg.het_offset : NO_VAL;
  slurm_list_append(cond->step_list, sel);
  if (!cluster.empty()) {
    cond->cluster_list = slurm_list_create(std::free);
    slurm_list_append(cond->cluster_list, strdup(cluster.c_str()));
  }
  return cond;
}

void free_condition(slurmdb_job_cond_t* cond) {
  if (!cond) return;
  for (List* l : {&cond->step_list, &cond->cluster_list, &cond->state_list})
    if (*l) slurm_list_destroy(*l);
  std::free(cond);
}

// A plain id names one job's own records; "12_3" and "12+1" are selected
// by slurmdbd itself.
uint32_t own_id(const JobIdArg& arg) {
  return arg.array_task || arg.het_offset ? 0 : arg.job_id;
}

struct DbRecord {
  uint64_t db_index = 0;
  uint32_t array_job_id = 0, array_task_id = NO_VAL;  // an array task's
  uint32_t het_job_id = 0, het_job_offset = NO_VAL;   // a het job component's
  uint32_t state = 0;
  time_t submit = 0, start = 0, end = 0;
  ff::agent::AccountingAttempt view;
};

// sacct's State: the base state's name (a requeued record shows REQUEUED).
std::string db_state_name(uint32_t state) {
  return text(slurm_job_state_string(state));
}

// The records `cond` selects, oldest submit first (ties: the older record).
// `own_id`: only the records whose own job id is that one. slurmdbd answers
// a plain id with every task of the array it heads too ("8" selects 8_1,
// whose own id is 9, and 8_2, whose own id is 8).
std::optional<std::vector<DbRecord>> records(void* db, slurmdb_job_cond_t* cond,
                                             uint32_t own_id = 0) {
  List list = slurmdb_jobs_get(db, cond);
  if (!list) return std::nullopt;
  std::vector<DbRecord> out;
  ListIterator it = slurm_list_iterator_create(list);
  while (auto* r = static_cast<slurmdb_job_rec_t*>(slurm_list_next(it))) {
    if (own_id != 0 && r->jobid != own_id) continue;
    DbRecord d;
    d.db_index = r->db_index;
    d.array_job_id = r->array_job_id;
    d.array_task_id = r->array_task_id;
    d.het_job_id = r->het_job_id;
    d.het_job_offset = r->het_job_offset;
    d.state = r->state;
    d.submit = r->submit;
    d.start = r->start;
    d.end = r->end;
    d.view.state = db_state_name(r->state);
    d.view.exit_code = exit_code(r->exitcode);
    d.view.submit_time = ff::agent::slurm_epoch_to_utc(r->submit);
    d.view.start_time = ff::agent::slurm_epoch_to_utc(r->start);
    d.view.end_time = ff::agent::slurm_epoch_to_utc(r->end);
    d.view.nodes =
        expand(r->nodes && std::string(r->nodes) != "None assigned" ? r->nodes : nullptr);
    out.push_back(std::move(d));
  }
  slurm_list_iterator_destroy(it);
  slurm_list_destroy(list);
  std::stable_sort(out.begin(), out.end(), [](const DbRecord& a, const DbRecord& b) {
    return std::tie(a.submit, a.db_index) < std::tie(b.submit, b.db_index);
  });
  for (std::size_t i = 0; i < out.size(); ++i) out[i].view.attempt = static_cast<int>(i);
  return out;
}

int accounting(const JobIdArg& arg, const char* text_id) {
  void* db = slurmdb_connection_get(nullptr);
  if (!db) {
    std::fprintf(stderr, "slurmdbd: no connection\n");
    return kFailed;
  }
  slurmdb_job_cond_t* cond = job_condition(arg, cluster_name());
  auto found = records(db, cond, own_id(arg));
  free_condition(cond);
  slurmdb_connection_close(&db);
  if (!found) {
    std::fprintf(stderr, "slurmdb_jobs_get %s: %s\n", text_id, slurm_strerror(slurm_get_errno()));
    return kFailed;
  }
  if (found->empty()) return kNotFound;
  ff::agent::AccountingRecord record;
  record.job_id = text_id;
  for (auto& r : *found) record.attempts.push_back(std::move(r.view));
  std::string out = ff::agent::accounting_json(record) + "\n";
  return std::fwrite(out.data(), 1, out.size(), stdout) == out.size() && std::fflush(stdout) == 0
             ? kFound
             : kFailed;
}

int set_comment(const JobIdArg& arg, const char* text_id, int attempt, const char* comment,
                bool admin_comment) {
  void* db = slurmdb_connection_get(nullptr);
  if (!db) {
    std::fprintf(stderr, "slurmdbd: no connection\n");
    return kFailed;
  }
  std::string cluster = cluster_name();
  slurmdb_job_cond_t* cond = job_condition(arg, cluster);
  auto all = records(db, cond, own_id(arg));
  free_condition(cond);
  int status = kFailed;
  if (!all) {
    std::fprintf(stderr, "slurmdb_jobs_get %s: %s\n", text_id, slurm_strerror(slurm_get_errno()));
  } else if (attempt < 0 || static_cast<std::size_t>(attempt) >= all->size()) {
    std::fprintf(stderr, "job %s has no accounting record of attempt %d\n", text_id, attempt);
    status = kNotFound;
  } else if ((*all)[attempt].end == 0) {
    std::fprintf(stderr, "job %s attempt %d has not ended in accounting yet\n", text_id, attempt);
  } else {
    const DbRecord& target = (*all)[attempt];
    // Named as narrowly as Slurm can: an array task by its task id and a
    // het component by its offset, since a plain id also selects the array
    // or het job it heads. Then slurmdbd selects by state and end time: the
    // record ending in that second with that state. Checked to be exactly
    // the target before anything is written.
    JobIdArg precise = arg;
    if (target.array_task_id != NO_VAL && target.array_job_id != 0) {
      precise = JobIdArg{};
      precise.job_id = target.array_job_id;
      precise.array_task = target.array_task_id;
    } else if (target.het_job_offset != NO_VAL && target.het_job_id != 0) {
      precise = JobIdArg{};
      precise.job_id = target.het_job_id;
      precise.het_offset = target.het_job_offset;
    }
    cond = job_condition(precise, cluster);
    cond->state_list = slurm_list_create(std::free);
    slurm_list_append(cond->state_list, strdup(std::to_string(target.state).c_str()));
    cond->usage_start = target.end;
    cond->usage_end = target.end;
    auto picked = records(db, cond);
    if (!picked || picked->size() != 1 || (*picked)[0].db_index != target.db_index) {
      std::fprintf(stderr,
                   "job %s attempt %d: its accounting record cannot be told from the "
                   "others (%zu match): not written\n",
                   text_id, attempt, picked ? picked->size() : 0);
    } else {
      slurmdb_job_rec_t* change = slurmdb_create_job_rec();
      std::string text = comment;
      (admin_comment ? change->admin_comment : change->derived_es) = text.data();
      List changed = slurmdb_job_modify(db, cond, change);
      int count = changed ? slurm_list_count(changed) : 0;
      if (changed) slurm_list_destroy(changed);
      change->derived_es = nullptr;  // ours, not xmalloc'd
      change->admin_comment = nullptr;
      slurmdb_destroy_job_rec(change);
      if (count == 1 && slurmdb_connection_commit(db, true) == SLURM_SUCCESS) {
        std::printf("{\"written\": 1}\n");
        status = kFound;
      } else {
        slurmdb_connection_commit(db, false);
        std::fprintf(stderr, "slurmdb_job_modify %s: %d records changed: %s\n", text_id, count,
                     slurm_strerror(slurm_get_errno()));
      }
    }
    free_condition(cond);
  }
  slurmdb_connection_close(&db);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc >= 2 && argv[1][0] == '-' ? argv[1] : "";
  int first = mode.empty() ? 1 : 2;
  bool usage = mode.empty()                                               ? argc != 2
               : mode == "--accounting"                                   ? argc != 3
               : mode == "--set-comment" || mode == "--set-admin-comment" ? argc != 5
                                                                          : true;
  if (usage) {
    std::fprintf(stderr,
                 "usage: firstfault-slurm-job JOB_ID | --accounting JOB_ID |"
                 " --set-comment|--set-admin-comment JOB_ID ATTEMPT TEXT\n");
    return kUsage;
  }
  auto arg = parse_job_id(argv[first]);
  if (!arg) {
    std::fprintf(stderr, "firstfault-slurm-job: not a job id: %.40s\n", argv[first]);
    return kUsage;
  }
  int attempt = 0;
  bool setting = mode == "--set-comment" || mode == "--set-admin-comment";
  if (setting) {
    // slurmdbd puts the text between single quotes in its SQL as it is: the
    // agent's text is already safe (slurm_text.h); this refuses any other.
    for (const char* c = argv[4]; *c; ++c)
      if (*c < 0x20 || *c > 0x7e || *c == '\'' || *c == '\\' || *c == '"') {
        std::fprintf(stderr, "firstfault-slurm-job: the Comment holds a character it may not\n");
        return kUsage;
      }
    if (std::strlen(argv[4]) > 1024) {
      std::fprintf(stderr, "firstfault-slurm-job: the Comment is longer than 1024 bytes\n");
      return kUsage;
    }
    std::string a = argv[3];
    if (a.empty() || a.size() > 6 || a.find_first_not_of("0123456789") != std::string::npos) {
      std::fprintf(stderr, "firstfault-slurm-job: not an attempt: %.40s\n", argv[3]);
      return kUsage;
    }
    attempt = std::stoi(a);
  }
  slurm_init(nullptr);
  int status = mode.empty()             ? show_job(*arg, argv[first])
               : mode == "--accounting" ? accounting(*arg, argv[first])
                                        : set_comment(*arg, argv[first], attempt, argv[4],
                                                      mode == "--set-admin-comment");
  slurm_fini();
  return status;
}
