// The agent's configuration file (/etc/firstfault/agent.yaml,
// docs/slurm-path.md section 5). Every error names the file and line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/drain/drain_settings.h"
#include "agent/server/scheduler_evidence.h"
#include "agent/slurm/slurm_client.h"
#include "agent/suspects/suspect_report.h"
#include "central/gather/central_gather.h"

namespace ff::agent {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct AgentConfig {
  std::string listen_host = "127.0.0.1";
  int listen_port = 7421;  // 0: any free port (printed at start)
  std::string state_dir = "/var/lib/firstfault";
  std::string database;           // default: <state_dir>/firstfault.db
  std::vector<int> allowed_uids;  // besides root and SlurmUser
  std::string slurm_user;         // SlurmUser by name when scontrol cannot say
  int fastpass_wait_s = 8;
  int final_pass_deadline_s = 300;
  std::size_t max_request_bytes = 268435456;
  // The HTTP server (server/guarded_server.h): open connections in all and
  // from one address; complete request headers within header_timeout_s
  // (idle keep-alive time included); a body within request_timeout_s of its
  // headers; the workers of each lane.
  int http_max_connections = 512;
  int http_max_connections_per_peer = 32;
  int http_header_timeout_s = 10;
  int http_request_timeout_s = 120;
  int http_upload_workers = 8;
  int http_fastpass_workers = 8;
  int http_read_workers = 4;
  // Per bundle (bundle_limits.h): a bundle over one is refused whole (413).
  std::size_t max_files_per_bundle = 4096;
  std::size_t max_file_bytes = 134217728;
  std::size_t max_line_bytes = 1048576;
  std::uint64_t max_lines_per_job = 50000000;
  // Bytes over every bundle of one job attempt (413 past it), like
  // max_lines_per_job: one job cannot fill the state directory.
  std::uint64_t max_job_bytes = 4294967296;
  // Free space the state directory's filesystem keeps (statvfs, for
  // unprivileged users): an upload that would leave less is refused (507).
  // The head node often holds slurmctld's state on the same filesystem.
  std::uint64_t min_free_bytes = 1073741824;
  int min_free_percent = 5;
  // The retention sweep (at start, then hourly) deletes job attempts whose
  // last bundle or pass is older than retention_days, oldest first, and
  // then the oldest until jobs/ holds at most max_state_bytes (0: no such
  // bound). A job attempt whose final or deadline pass has not run yet is
  // never deleted.
  int retention_days = 90;
  std::uint64_t max_state_bytes = 0;
  // Threads running final and deadline passes (and rebuilds); a slow pass
  // of one job does not hold up the others.
  int final_pass_workers = 2;
  // Engine threads per pass (reading and matching files). A pass runs on
  // at most this many cores, so passes use at most final_pass_workers x
  // jobs of them: a head node's cores stay with slurmctld. The diagnosis is
  // the same for every value.
  int jobs = 2;
  // Job attempts the tracker holds in memory at most (job_tracker.h).
  std::size_t max_tracked_jobs = 20000;
  // GET /api/v1/jobs/<id>/diagnosis and /api/v1/diagnoses: "credential" (a
  // munge credential of root, SlurmUser, allowed_uids or read_uids) or
  // "open" (anyone who reaches the port). Diagnoses quote log lines,
  // the job's own output among them, so the default is "credential".
  std::string read_access = "credential";
  std::vector<int> read_uids;
  // A file holding a token: `Authorization: Bearer <token>` may read too
  // (the dashboard in a browser, which cannot make munge credentials).
  // Absolute path; the agent refuses to start when others may read it.
  std::string read_token_file;
  SlurmPaths slurm;  // scontrol, sacctmgr
  // `slurmctld_log:` ("auto": SlurmctldLogFile from scontrol show config;
  // off; a path), `scheduler_node_states:` (bool): the scheduler's account
  // of each attempt in the incident's cluster/ (scheduler_evidence.h).
  SchedulerEvidenceConfig scheduler;
  // Central sources asked once per job attempt before its final pass:
  // `loki:` (central/loki/loki_config.h) with gather_margin_before_s/_after_s,
  // `prometheus:` (central/prometheus/prometheus_config.h).
  ff::sources::CentralConfig central;
  std::vector<std::string> rules;  // extra rule directories (as `analyze --rules`)
  DrainSettings drain;             // `drain:` (off by default)
  // `suspects:` window_days, min_jobs, systemic_window_s, systemic_min_nodes,
  // ignored_domains: GET /api/v1/suspects (suspects/suspect_report.h).
  SuspectSettings suspects;
};

// Throws ConfigError "<file>:<line>: <what>".
AgentConfig load_agent_config(const std::string& path);
// The same from text; `name` is used in messages.
AgentConfig parse_agent_config(const std::string& text, const std::string& name);

}  // namespace ff::agent
