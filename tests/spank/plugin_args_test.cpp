#include "spank/plugin_args.h"

#include <gtest/gtest.h>

namespace firstfault::spank {
namespace {

TEST(PluginArgsTest, DefaultsWithoutArguments) {
  ParsedPluginArgs parsed = ParsePluginArgs(0, nullptr);
  EXPECT_TRUE(parsed.problems.empty());
  EXPECT_EQ(parsed.args.spool, "/var/spool/firstfault");
  EXPECT_EQ(parsed.args.collect, "/usr/libexec/firstfault/firstfault-collect");
  EXPECT_EQ(parsed.args.config, "");
  EXPECT_EQ(parsed.args.fastpass_timeout_s, 15);
  EXPECT_EQ(parsed.args.log, LogLevel::kErrors);
}

TEST(PluginArgsTest, TheTestClusterLine) {
  ParsedPluginArgs parsed =
      ParsePluginArgs({"spool=/var/tmp/ffcluster/spool/%n", "agent=http://127.0.0.1:7421",
                       "collect=/var/tmp/ffcluster/install/bin/firstfault-collect",
                       "config=/var/tmp/ffcluster/node.yaml"});
  EXPECT_TRUE(parsed.problems.empty());
  EXPECT_EQ(parsed.args.spool, "/var/tmp/ffcluster/spool/%n");
  EXPECT_EQ(parsed.args.agent, "http://127.0.0.1:7421");
  EXPECT_EQ(parsed.args.collect, "/var/tmp/ffcluster/install/bin/firstfault-collect");
  EXPECT_EQ(parsed.args.config, "/var/tmp/ffcluster/node.yaml");
}

TEST(PluginArgsTest, TimeoutAndLogLevels) {
  ParsedPluginArgs parsed = ParsePluginArgs({"fastpass_timeout=0", "log=info"});
  EXPECT_TRUE(parsed.problems.empty());
  EXPECT_EQ(parsed.args.fastpass_timeout_s, 0);
  EXPECT_EQ(parsed.args.log, LogLevel::kInfo);
  EXPECT_EQ(ParsePluginArgs({"log=off"}).args.log, LogLevel::kOff);
  EXPECT_EQ(ParsePluginArgs({"log=errors"}).args.log, LogLevel::kErrors);
}

TEST(PluginArgsTest, MalformedArgumentsAreReportedAndDefaultsKept) {
  ParsedPluginArgs parsed =
      ParsePluginArgs({"fastpass_timeout=abc", "fastpass_timeout=-1", "fastpass_timeout=10s",
                       "fastpass_timeout=100000", "spool=relative/dir", "collect=", "log=verbose",
                       "noequals", "=value", "colour=blue"});
  EXPECT_EQ(parsed.problems.size(), 10u);
  EXPECT_EQ(parsed.args.fastpass_timeout_s, 15);
  EXPECT_EQ(parsed.args.spool, "/var/spool/firstfault");
  EXPECT_EQ(parsed.args.collect, "/usr/libexec/firstfault/firstfault-collect");
  EXPECT_EQ(parsed.args.log, LogLevel::kErrors);
  EXPECT_NE(parsed.problems[9].find("colour=blue"), std::string::npos);
}

TEST(PluginArgsTest, GoodArgumentsSurviveBadNeighbours) {
  ParsedPluginArgs parsed = ParsePluginArgs({"bogus", "fastpass_timeout=7", "spool=x"});
  EXPECT_EQ(parsed.problems.size(), 2u);
  EXPECT_EQ(parsed.args.fastpass_timeout_s, 7);
}

TEST(PluginArgsTest, ArgvWithNullEntries) {
  char word[] = "log=info";
  char* argv[] = {word, nullptr};
  EXPECT_EQ(ParsePluginArgs(2, argv).args.log, LogLevel::kInfo);
}

TEST(ExpandNodeNameTest, ReplacesPercentN) {
  EXPECT_EQ(ExpandNodeName("/var/tmp/ffcluster/spool/%n", "n2"), "/var/tmp/ffcluster/spool/n2");
  EXPECT_EQ(ExpandNodeName("/s/%n/x/%n", "gpu01"), "/s/gpu01/x/gpu01");
  EXPECT_EQ(ExpandNodeName("/var/spool/firstfault", "n1"), "/var/spool/firstfault");
}

TEST(ExpandNodeNameTest, OtherPercentsAreKept) {
  EXPECT_EQ(ExpandNodeName("/s/%%n", "n1"), "/s/%n");
  EXPECT_EQ(ExpandNodeName("/s/%h/%", "n1"), "/s/%h/%");
}

}  // namespace
}  // namespace firstfault::spank
