// agent.yaml `suspects:`: the settings of GET /api/v1/suspects, with errors
// that name file and line.
#include <gtest/gtest.h>

#include "agent/server/agent_config.h"

namespace {

using namespace ff::agent;

TEST(SuspectsConfig, DefaultsWithoutTheSection) {
  auto c = parse_agent_config("state_dir: /srv/ff\n", "agent.yaml");
  EXPECT_EQ(c.suspects.window_s, 14 * 86400);
  EXPECT_EQ(c.suspects.min_jobs, 2);
  EXPECT_EQ(c.suspects.systemic_window_s, 300);
  EXPECT_EQ(c.suspects.systemic_min_nodes, 4);
  EXPECT_EQ(c.suspects.ignored_domains, std::vector<std::string>{"application"});
}

TEST(SuspectsConfig, EveryKey) {
  auto c = parse_agent_config(
      "suspects:\n"
      "  window_days: 30\n"
      "  min_jobs: 3\n"
      "  systemic_window_s: 600\n"
      "  systemic_min_nodes: 8\n"
      "  ignored_domains: [application, storage]\n",
      "agent.yaml");
  EXPECT_EQ(c.suspects.window_s, 30 * 86400);
  EXPECT_EQ(c.suspects.min_jobs, 3);
  EXPECT_EQ(c.suspects.systemic_window_s, 600);
  EXPECT_EQ(c.suspects.systemic_min_nodes, 8);
  EXPECT_EQ(c.suspects.ignored_domains, (std::vector<std::string>{"application", "storage"}));
}

std::string error_of(const std::string& yaml) {
  try {
    parse_agent_config(yaml, "agent.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SuspectsConfig, ErrorsNameFileAndLine) {
  EXPECT_EQ(error_of("listen: 127.0.0.1:1\nsuspects:\n  min_jobs: 0\n"),
            "agent.yaml:3: 'suspects.min_jobs' must be at least 1");
  EXPECT_EQ(error_of("suspects:\n  window_days: two\n"),
            "agent.yaml:2: 'suspects.window_days' has the wrong type: 'two'");
  EXPECT_EQ(error_of("suspects:\n  systemic_min_nodes: 1\n"),
            "agent.yaml:2: 'suspects.systemic_min_nodes' must be at least 2");
  EXPECT_EQ(error_of("suspects:\n  window: 3\n"),
            "agent.yaml:2: unknown setting 'suspects.window'");
  EXPECT_EQ(error_of("suspects: 3\n"), "agent.yaml:1: 'suspects' must be a mapping");
}

}  // namespace
