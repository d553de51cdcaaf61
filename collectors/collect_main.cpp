// firstfault-collect: the node collector (docs/slurm-path.md §2).
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

#include "collectors/commands/commands.h"
#include "collectors/logging/collect_log.h"
#include "collectors/sources/app_output.h"

namespace {

using namespace ff::collect;

std::string default_node_name() {
  if (const char* n = std::getenv("SLURMD_NODENAME"); n && *n) return n;
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  std::string name = host;
  return name.substr(0, name.find('.'));
}

struct Options {
  std::string config = kDefaultNodeConfigPath;
  std::string job;
  std::string node;
  std::string nodelist;
  std::string exit_code;
  std::string derived_ec;
  std::string attempt;
  std::string stdout_path;
  std::string stderr_path;
  std::string uid;
  int exit_status = 0;
  double timeout_s = 10;
  bool once = false;
};

void add_job_options(CLI::App* cmd, Options& o) {
  cmd->add_option("--job", o.job, "Slurm job id")->required();
  cmd->add_option("--node", o.node, "Slurm node name (SLURMD_NODENAME)")->required();
  cmd->add_option("--config", o.config, "node config")->capture_default_str();
}

CollectRequest request_from(const std::string& pass, const Options& o) {
  CollectRequest r;
  r.pass = pass;
  r.job_id = o.job;
  r.node = o.node;
  r.nodelist = o.nodelist;
  if (!o.exit_code.empty()) r.exit_code = o.exit_code;
  // Values from Slurm's environment: a malformed one is ignored, not fatal.
  try {
    if (!o.derived_ec.empty()) r.derived_ec = std::stoi(o.derived_ec);
  } catch (const std::exception&) {
  }
  try {
    if (!o.attempt.empty()) r.attempt = std::stoi(o.attempt);
  } catch (const std::exception&) {
  }
  r.outputs = {o.stdout_path, o.stderr_path};
  r.owner_uid = parse_uid(o.uid);
  return r;
}

// Bundles hold windows of root-only logs (kern.log, syslog) and the jobs'
// output: nothing the collector writes is for other users of the node, and
// a spool made open before (by hand, or by an older version) is closed.
void close_spool(const std::filesystem::path& spool) {
  ::umask(077);
  struct stat st {};
  if (::lstat(spool.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
      (st.st_mode & 077) != 0)
    ::chmod(spool.c_str(), st.st_mode & 07700);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"firstfault node collector: gathers a job's evidence on this node for the agent"};
  app.require_subcommand(1);
  Options o;

  auto* step = app.add_subcommand("step", "a step failed: collect and upload (pass=step)");
  add_job_options(step, o);

  auto* epilog = app.add_subcommand("epilog", "the job ended: collect and upload (pass=epilog)");
  add_job_options(epilog, o);
  epilog->add_option("--nodelist", o.nodelist, "SLURM_NODELIST");
  epilog->add_option("--exit-code", o.exit_code, "SLURM_JOB_EXIT_CODE2 (exit:signal)");
  epilog->add_option("--derived-ec", o.derived_ec, "SLURM_JOB_DERIVED_EC (raw wait status)");
  epilog->add_option("--attempt", o.attempt, "SLURM_JOB_RESTART_COUNT");
  epilog->add_option("--stdout", o.stdout_path, "SLURM_JOB_STDOUT");
  epilog->add_option("--stderr", o.stderr_path, "SLURM_JOB_STDERR");
  epilog->add_option("--uid", o.uid,
                     "SLURM_JOB_UID: the job's output is copied only when this user owns it");

  auto* fastpass = app.add_subcommand(
      "fastpass", "upload this node's step bundle, then ask the agent for the fast pass");
  add_job_options(fastpass, o);
  fastpass->add_option("--exit-status", o.exit_status, "raw wait status of the batch script")
      ->required();
  fastpass->add_option("--timeout", o.timeout_s, "seconds for everything")
      ->required()
      ->check(CLI::PositiveNumber);

  auto* flush = app.add_subcommand("flush", "retry every bundle in the outbox");
  flush->add_option("--config", o.config, "node config")->capture_default_str();
  flush->add_option("--node", o.node, "node name for %n (default: SLURMD_NODENAME or host name)");
  flush->add_flag("--once", o.once, "one attempt per bundle, no waiting");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  if (o.node.empty()) o.node = default_node_name();

  NodeConfig config;
  try {
    config = load_node_config(o.config, o.node);
  } catch (const std::exception& e) {
    std::cerr << "firstfault-collect: " << e.what() << '\n';
    setup_logging(default_node_config(o.node).spool / "log");
    spdlog::error("{}", e.what());
    return kExitInternal;
  }
  close_spool(config.spool);
  setup_logging(config.spool / "log");
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int rc = kExitInternal;
  try {
    if (*step) {
      rc = run_collect(config, request_from("step", o));
    } else if (*epilog) {
      rc = run_collect(config, request_from("epilog", o));
    } else if (*fastpass) {
      rc = run_fastpass(config, o.config, request_from("step", o), o.exit_status, o.timeout_s);
    } else if (*flush) {
      rc = run_flush(config, o.once);
    }
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    try {
      finish_invocation(config);
    } catch (const std::exception&) {
    }
    rc = kExitInternal;
  }
  spdlog::shutdown();
  curl_global_cleanup();
  return rc;
}
