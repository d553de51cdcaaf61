// What Slurm says about one job, reduced to the fields the agent uses, and the
// one JSON object that carries it from firstfault-slurm-job (which reads it
// with libslurm's slurm_load_job) to the agent.
//
// The job's Comment, name, working directory and output paths are the user's
// text. `scontrol show job -o` prints them among the other `Key=value` words
// with nothing to tell them apart, so a Comment "x JobState=COMPLETED
// NodeList=victim" reads as real fields. The helper takes each field from
// its own member of Slurm's job record instead, and JSON keeps a string a
// string: the user's text can only ever be the value of std_out or std_err.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ff::agent {

struct SlurmJob {
  std::string job_id;              // "12", an array task "11_2", a het component "12+1"
  std::string state;               // RUNNING, COMPLETING, FAILED, ... as scontrol names it
  std::string exit_code;           // "exit:signal"; "" when Slurm has none
  std::string start_time;          // RFC 3339 UTC; "" when Slurm has none
  std::string end_time;            // actual, or expected while the job runs
  std::vector<std::string> nodes;  // the allocation, expanded; each a valid node name
  std::string batch_host;
  std::string std_out;  // StdOut path, patterns expanded as scontrol does
  std::string std_err;
  std::string user;       // "" when the uid has no name
  int uid = -1;           // -1: unknown
  int restart_count = 0;  // Slurm's restart count = the attempt

  // The job has not reached a terminal state that Slurm shows: its final
  // state and end time are not known yet (COMPLETING included).
  bool running() const;
  // slurmctld still accepts a Comment update. It refuses one as soon as the
  // job's base state is past SUSPENDED (IS_JOB_FINISHED), which includes
  // COMPLETING and STAGE_OUT: the Epilog is already too late.
  bool accepts_comment() const;
};

// One attempt of a job as slurmdbd keeps it (firstfault-slurm-job
// --accounting). A requeued job has one record per attempt, oldest first;
// slurmctld shows only the newest, so an older attempt's terminal state
// (NODE_FAIL, PREEMPTED, REQUEUED, ...) is known from accounting alone.
struct AccountingAttempt {
  int attempt = 0;          // index among the job's records, oldest (by submit time) first
  std::string state;        // as sacct names it: NODE_FAIL, OUT_OF_MEMORY, TIMEOUT, ...
  std::string exit_code;    // "exit:signal"; "" when none
  std::string submit_time;  // RFC 3339 UTC; "" when Slurm has none
  std::string start_time;
  std::string end_time;  // "" while the attempt runs
  std::vector<std::string> nodes;
  bool ended() const { return !end_time.empty(); }
};

struct AccountingRecord {
  std::string job_id;
  std::vector<AccountingAttempt> attempts;  // oldest first
  // The record of attempt `attempt`, when slurmdbd has it.
  const AccountingAttempt* of(int attempt) const;
};

// The helper's --accounting output and its reader, with the same checks as
// for SlurmJob (states, exit codes, times, node names).
std::string accounting_json(const AccountingRecord& record);
std::optional<AccountingRecord> parse_accounting_json(const std::string& text,
                                                      std::string& problem);

// Which attempt a collector's bundle belongs to. A collector names the
// attempt from what its node knows, and that can be wrong in two ways: the
// Epilog's SLURM_JOB_RESTART_COUNT is already the next attempt's when the
// attempt ended by a requeue (Slurm counts the requeue first), and
// slurmstepd's S_SLURM_RESTART_COUNT is 0 in every attempt on Slurm 22.05.
// Slurm's own records tell the attempts apart by time: the attempt is the
// newest whose start is not after the bundle's allocation began (2 s of
// slack for whole seconds). `accounting` (every attempt) is used when
// given; else the newest attempt (`newest`, slurmctld's record) or the one
// before it. `bundle_start`: RFC 3339, the bundle's job.json start_time.
// Nothing known, or records that know fewer attempts than the claim (older
// than it): `claimed`.
int resolve_attempt(int claimed, const std::string& bundle_start, const SlurmJob* newest,
                    const AccountingRecord* accounting);

// The helper's output: one JSON object with the members above
// ({"job_id": "12", "state": "FAILED", "nodes": ["n1"], "uid": 1001, ...}).
// Bytes that are not UTF-8 (a path may hold any) become U+FFFD.
std::string slurm_job_json(const SlurmJob& job);

// Reads the helper's object. job_id and state are required, every other
// member may be missing (its default); a member of the wrong type, a state,
// exit code or time that does not look like Slurm's, or a node name that is
// not ff::valid_node_name makes the whole record untrusted: nullopt, and
// `problem` says why.
std::optional<SlurmJob> parse_slurm_job_json(const std::string& text, std::string& problem);

// libslurm's time_t (seconds since the epoch) → "2026-11-30T05:01:02Z",
// whatever TZ the process runs under. "" for 0 and below (Slurm's
// "Unknown") and for Slurm's NO_VAL / INFINITE markers.
std::string slurm_epoch_to_utc(std::int64_t seconds);

// Splits one `scontrol show ... -o` line into key=value pairs. Values may
// hold spaces: a space-separated word that does not start a new `Key=`
// continues the previous value. A key seen again keeps its first value, so
// free text late in a line (a node's Reason) cannot replace an earlier field.
// Only for records without user text (`show node`); never for a job.
std::map<std::string, std::string> parse_scontrol_fields(const std::string& line);

// `scontrol show config` lines "Key = value" → map.
std::map<std::string, std::string> parse_show_config(const std::string& output);

}  // namespace ff::agent
