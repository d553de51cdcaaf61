// What `scontrol show job -o <id>` says about one job, reduced to the fields
// the agent uses, and the parser of that output (kept apart from running
// scontrol so captured text can be tested).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ff::agent {

struct SlurmJob {
  std::string job_id;
  std::string state;       // JobState: RUNNING, COMPLETING, FAILED, ...
  std::string exit_code;   // ExitCode, "exit:signal"
  std::string start_time;  // RFC 3339 UTC; "" when Slurm says Unknown/None
  std::string end_time;
  std::vector<std::string> nodes;  // NodeList expanded
  std::string batch_host;
  std::string std_out;  // StdOut path as Slurm prints it
  std::string std_err;
  std::string user;       // UserId "root(0)" → "root"
  int uid = -1;           //                    → 0
  int restart_count = 0;  // Restarts (RestartCnt) = the attempt
  std::string comment;
  std::map<std::string, std::string> fields;  // every key=value of the line

  // The job has not reached a terminal state that scontrol shows: its final
  // state and end time are not known yet (COMPLETING included).
  bool running() const;
  // slurmctld still accepts a Comment update. It refuses one as soon as the
  // job's base state is past SUSPENDED (IS_JOB_FINISHED), which includes
  // COMPLETING and STAGE_OUT: the Epilog is already too late.
  bool accepts_comment() const;
};

// Splits one `-o` line into key=value pairs. Values may hold spaces
// (Comment, JobName, WorkDir): a space-separated word that does not start a
// new `Key=` continues the previous value.
std::map<std::string, std::string> parse_scontrol_fields(const std::string& line);

// Parses the whole output; the first record is used (an array task is asked
// for by its own id). nullopt when there is no record.
std::optional<SlurmJob> parse_show_job(const std::string& output);

// `scontrol show config` lines "Key = value" → map.
std::map<std::string, std::string> parse_show_config(const std::string& output);

// Slurm prints local times without a zone ("2026-11-30T05:01:02"); the
// incident wants RFC 3339 UTC. "" for Unknown, None or unparseable text.
std::string slurm_time_to_utc(const std::string& local);

}  // namespace ff::agent
