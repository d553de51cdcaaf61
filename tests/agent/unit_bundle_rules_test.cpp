// agent/server/bundle_rules: names from the network that become paths.
#include <gtest/gtest.h>

#include "agent/server/bundle_limits.h"
#include "agent/server/bundle_rules.h"

namespace {

using namespace ff::agent;

TEST(BundleRules, JobIds) {
  EXPECT_TRUE(valid_job_id("12"));
  EXPECT_TRUE(valid_job_id("12_3"));
  EXPECT_FALSE(valid_job_id(""));
  EXPECT_FALSE(valid_job_id("12_"));
  EXPECT_FALSE(valid_job_id("12+1"));
  EXPECT_FALSE(valid_job_id("../12"));
  EXPECT_FALSE(valid_job_id("1 2"));
}

TEST(BundleRules, NodeNames) {
  EXPECT_TRUE(valid_node_name("gpu-a01"));
  EXPECT_TRUE(valid_node_name("n1.cluster_x"));
  EXPECT_FALSE(valid_node_name(".."));
  EXPECT_FALSE(valid_node_name("-n1"));
  EXPECT_FALSE(valid_node_name("n/1"));
  EXPECT_FALSE(valid_node_name(std::string(65, 'a')));
}

TEST(BundleRules, AllowedPaths) {
  for (const char* p :
       {"job.json", "nodes/n1/kernel", "nodes/n1/kernel.log", "nodes/n1/syslog.1.gz",
        "nodes/n1/syslog-20261101", "nodes/n1/fabricmanager.log", "nodes/n1/slurmd.log",
        "nodes/n1/app.log", "app/slurm-12.out", "app/train run 12.out"})
    EXPECT_EQ(bundle_path_problem(p, "n1"), "") << p;
}

TEST(BundleRules, RefusedPaths) {
  for (const char* p :
       {"../x", "/etc/passwd", "nodes/other/kernel", "nodes/n1/../../x", "nodes/n1/sub/kernel",
        "nodes/n1/passwd", "nodes/n1/apport.log", "nodes/n1/", "app/../x", "app/.hidden", "app/a/b",
        "cluster/slurmctld.log", "metrics/x.json", "job.json/x", "", "nodes//kernel", "./job.json",
        "nodes/n1/kernel..x"})
    EXPECT_NE(bundle_path_problem(p, "n1"), "") << p;
}

// app/ names are a closed ASCII set (incident/bundle_paths.h): what the
// collector derives from any output name, and nothing a quote, an escape or
// a byte that is not UTF-8 could turn into something else on the way.
TEST(BundleRules, AppNames) {
  EXPECT_EQ(bundle_path_problem("app/" + std::string(255, 'a'), "n1"), "");
  EXPECT_EQ(bundle_path_problem("app/slurm-12_0+1=a@b%c,d~e.out", "n1"), "");
  for (const std::string& p :
       {"app/" + std::string(256, 'a'), std::string("app/r\xc3\xa9sum\xc3\xa9.out"),
        std::string("app/a\xff"), std::string("app/say \"hi\""), std::string("app/a\\b"),
        std::string("app/ leading-space"), std::string("app/a\tb"), std::string("app/a\nb"),
        std::string("app/"), std::string("app/."), std::string("app/..")})
    EXPECT_NE(bundle_path_problem(p, "n1"), "") << p;
}

// nodes/<node>/flight_recorder/<global-rank>: a decimal rank, nothing else
// there, no other directory under a node.
TEST(BundleRules, FlightRecorderPaths) {
  for (const char* p : {"nodes/n1/flight_recorder/0", "nodes/n1/flight_recorder/3",
                        "nodes/n1/flight_recorder/17", "nodes/n1/flight_recorder/9999999"})
    EXPECT_EQ(bundle_path_problem(p, "n1"), "") << p;
  std::vector<std::string> refused = {"nodes/n1/flight_recorder",
                                      "nodes/n1/flight_recorder/",
                                      "nodes/n1/flight_recorder/../x",
                                      "nodes/n1/flight_recorder/../../x",
                                      "nodes/n1/flight_recorder/x",
                                      "nodes/n1/flight_recorder/rank_3",
                                      "nodes/n1/flight_recorder/03",
                                      "nodes/n1/flight_recorder/-1",
                                      "nodes/n1/flight_recorder/3/4",
                                      "nodes/n1/flight_recorder/10000000",
                                      "nodes/other/flight_recorder/3",
                                      "nodes/n1/dumps/3",
                                      "flight_recorder/3",
                                      "app/flight_recorder/3"};
  for (const auto& p : refused) EXPECT_NE(bundle_path_problem(p, "n1"), "") << p;
}

// A dump is a pickle, not lines: no line limit or count, its own size limit.
TEST(BundleLimits, FlightRecorderDumpsAreNotLines) {
  std::string pickle(3u << 20, 'p');  // no newline in 3 MiB
  BundleLimits limits;
  BundleWeight weight;
  EXPECT_EQ(bundle_over_limits({{"nodes/n1/flight_recorder/3", pickle}}, limits, weight), "");
  EXPECT_EQ(weight.lines, 0u);
  EXPECT_EQ(weight.bytes, pickle.size());
  EXPECT_NE(bundle_over_limits({{"nodes/n1/syslog", pickle}}, limits, weight), "");
  limits.max_flight_recorder_file_bytes = 1u << 20;
  EXPECT_NE(bundle_over_limits({{"nodes/n1/flight_recorder/3", pickle}}, limits, weight)
                .find("more than a flight-recorder dump may hold"),
            std::string::npos);
}

}  // namespace
