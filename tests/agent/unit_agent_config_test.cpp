// agent/server/agent_config: the contract's keys, defaults, and errors that
// name file and line.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "agent/server/agent_config.h"

namespace {

using namespace ff::agent;

TEST(AgentConfig, ContractExample) {
  auto c = parse_agent_config(
      "listen: 127.0.0.1:7421\n"
      "state_dir: /var/lib/firstfault\n"
      "database: /var/lib/firstfault/firstfault.db\n"
      "allowed_uids: [1001, 1002]\n"
      "fastpass_wait_s: 8\n"
      "final_pass_deadline_s: 300\n"
      "max_request_bytes: 268435456\n"
      "scontrol: /usr/bin/scontrol\n"
      "sacctmgr: auto\n",
      "agent.yaml");
  EXPECT_EQ(c.listen_host, "127.0.0.1");
  EXPECT_EQ(c.listen_port, 7421);
  EXPECT_EQ(c.database, "/var/lib/firstfault/firstfault.db");
  EXPECT_EQ(c.allowed_uids, (std::vector<int>{1001, 1002}));
  EXPECT_EQ(c.fastpass_wait_s, 8);
  EXPECT_EQ(c.final_pass_deadline_s, 300);
  EXPECT_EQ(c.max_request_bytes, 268435456u);
  EXPECT_EQ(c.slurm.scontrol, "/usr/bin/scontrol");
  EXPECT_EQ(c.slurm.sacctmgr, "auto");
}

// The agent.yaml the packages install, and the one docs/slurm-path.md
// shows, are configurations this agent accepts as they are.
TEST(AgentConfig, ShippedAndDocumentedFilesParse) {
  auto shipped = load_agent_config(FF_SOURCE_DIR "/packaging/common/agent.yaml");
  EXPECT_FALSE(shipped.drain.enabled);
  EXPECT_EQ(shipped.suspects.window_s, 14 * 86400);

  std::ifstream doc(FF_SOURCE_DIR "/docs/slurm-path.md");
  std::stringstream text;
  text << doc.rdbuf();
  std::string md = text.str();
  auto start = md.find("Config `/etc/firstfault/agent.yaml`:\n```yaml\n");
  ASSERT_NE(start, std::string::npos);
  start = md.find("```yaml\n", start) + 8;
  auto documented =
      parse_agent_config(md.substr(start, md.find("```", start) - start), "docs/slurm-path.md");
  EXPECT_EQ(documented.drain.ignore_sub_domains.size(), 5u);
  EXPECT_EQ(documented.suspects.systemic_min_nodes, 4);
}

TEST(AgentConfig, DatabaseDefaultsIntoStateDir) {
  auto c = parse_agent_config("state_dir: /srv/ff\n", "a.yaml");
  EXPECT_EQ(c.database, "/srv/ff/firstfault.db");
}

// The job's record comes from the helper the packages install, unless
// agent.yaml names another (an absolute path: the agent runs it by exec).
TEST(AgentConfig, SlurmJobHelper) {
  EXPECT_EQ(parse_agent_config("state_dir: /srv/ff\n", "a.yaml").slurm.slurm_job_helper,
            "/usr/libexec/firstfault/firstfault-slurm-job");
  EXPECT_EQ(parse_agent_config("slurm_job_helper: /opt/ff/bin/firstfault-slurm-job\n", "a.yaml")
                .slurm.slurm_job_helper,
            "/opt/ff/bin/firstfault-slurm-job");
  for (const char* bad : {"firstfault-slurm-job", "''", "[a]"})
    EXPECT_THROW(parse_agent_config(std::string("slurm_job_helper: ") + bad + "\n", "a.yaml"),
                 ConfigError)
        << bad;
}

TEST(AgentConfig, HttpServerLimits) {
  auto d = parse_agent_config("", "a.yaml");
  EXPECT_EQ(d.http_max_connections, 512);
  EXPECT_EQ(d.http_max_connections_per_peer, 32);
  EXPECT_EQ(d.http_header_timeout_s, 10);
  EXPECT_EQ(d.http_request_timeout_s, 120);
  EXPECT_EQ(d.http_upload_workers, 8);
  EXPECT_EQ(d.http_fastpass_workers, 8);
  EXPECT_EQ(d.http_read_workers, 4);
  auto c = parse_agent_config(
      "http_max_connections: 64\nhttp_max_connections_per_peer: 2\nhttp_header_timeout_s: 3\n"
      "http_request_timeout_s: 30\nhttp_upload_workers: 2\nhttp_fastpass_workers: 1\n"
      "http_read_workers: 1\n",
      "a.yaml");
  EXPECT_EQ(c.http_max_connections, 64);
  EXPECT_EQ(c.http_max_connections_per_peer, 2);
  EXPECT_EQ(c.http_header_timeout_s, 3);
  EXPECT_EQ(c.http_request_timeout_s, 30);
  EXPECT_EQ(c.http_upload_workers, 2);
  EXPECT_EQ(c.http_fastpass_workers, 1);
  EXPECT_EQ(c.http_read_workers, 1);
  for (std::string bad :
       {"http_max_connections: 2", "http_max_connections_per_peer: 0", "http_header_timeout_s: 0",
        "http_request_timeout_s: -1", "http_upload_workers: 0", "http_fastpass_workers: many"})
    EXPECT_THROW(parse_agent_config(bad + "\n", "a.yaml"), ConfigError) << bad;
}

TEST(AgentConfig, ErrorsNameFileAndLine) {
  try {
    parse_agent_config("listen: 127.0.0.1:7421\nfastpass_wait_s: soon\n", "/etc/ff/agent.yaml");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/etc/ff/agent.yaml:2: ", 0), 0u) << e.what();
  }
  try {
    parse_agent_config("state_dir: /x\n\nlisten_port: 1\n", "a.yaml");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "a.yaml:3: unknown setting 'listen_port'");
  }
  EXPECT_THROW(parse_agent_config("listen: nowhere\n", "a.yaml"), ConfigError);
  EXPECT_THROW(parse_agent_config("state_dir: relative\n", "a.yaml"), ConfigError);
  EXPECT_THROW(parse_agent_config("listen: [\n", "a.yaml"), ConfigError);
  EXPECT_THROW(load_agent_config("/nonexistent/agent.yaml"), ConfigError);
}

}  // namespace

namespace {

TEST(AgentConfig, DiskAndMemoryBoundsHaveDefaultsAndLimits) {
  auto d = parse_agent_config("", "a.yaml");
  EXPECT_EQ(d.retention_days, 90);
  EXPECT_EQ(d.max_job_bytes, 4294967296u);
  EXPECT_EQ(d.min_free_bytes, 1073741824u);
  EXPECT_EQ(d.min_free_percent, 5);
  EXPECT_EQ(d.max_state_bytes, 0u);
  EXPECT_EQ(d.final_pass_workers, 2);
  EXPECT_EQ(d.jobs, 2);
  EXPECT_EQ(d.max_tracked_jobs, 20000u);
  EXPECT_EQ(parse_agent_config("jobs: 16\n", "a.yaml").jobs, 16);
  auto c = parse_agent_config(
      "retention_days: 30\nmax_job_bytes: 2097152\nmin_free_bytes: 0\nmin_free_percent: 10\n"
      "max_state_bytes: 10485760\nfinal_pass_workers: 4\nmax_tracked_jobs: 500\n",
      "a.yaml");
  EXPECT_EQ(c.retention_days, 30);
  EXPECT_EQ(c.max_job_bytes, 2097152u);
  EXPECT_EQ(c.min_free_bytes, 0u);
  EXPECT_EQ(c.min_free_percent, 10);
  EXPECT_EQ(c.max_state_bytes, 10485760u);
  EXPECT_EQ(c.final_pass_workers, 4);
  EXPECT_EQ(c.max_tracked_jobs, 500u);
  for (const char* bad :
       {"retention_days: 0\n", "max_job_bytes: 1000\n", "min_free_bytes: -1\n",
        "min_free_percent: 95\n", "min_free_percent: -1\n", "max_state_bytes: 1000\n",
        "final_pass_workers: 0\n", "final_pass_workers: 64\n", "jobs: 0\n", "jobs: 1000\n",
        "max_tracked_jobs: 10\n",
        // one job attempt must fit under the state bound
        "max_job_bytes: 20971520\nmax_state_bytes: 10485760\n"})
    EXPECT_THROW(parse_agent_config(bad, "a.yaml"), ConfigError) << bad;
}

}  // namespace
