// Everything the agent writes — directories, bundle files, the merged
// incident, pass files, the database — is closed to other users and not
// writable by its group (umask 027, files 0640), whatever the umask of
// whoever started it; a state directory made open by hand is closed on start.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

TEST(FileModes, NothingForOthers) {
  ScratchDirectory scratch{"agent"};
  fs::path state = scratch.path() / "state";
  fs::create_directories(state);
  fs::permissions(state, fs::perms::all);  // 0777, as a careless mkdir might leave it
  mode_t old = ::umask(0);                 // the agent inherits a permissive umask
  AgentProcess agent("", ended_job(), state);
  ::umask(old);
  auto client = agent.client();
  for (const auto& b : example_bundles("01-xid79-fallen-off-bus", "epilog", 1796000000000000000LL))
    ASSERT_EQ(upload(client, b)->status, 201);
  ASSERT_TRUE(wait_for_diagnosis(client, "48213")) << agent.log();

  int checked = 0;
  auto check = [&](const fs::path& p) {
    struct stat st {};
    ASSERT_EQ(::lstat(p.c_str(), &st), 0) << p;
    EXPECT_FALSE(S_ISLNK(st.st_mode)) << p << " is a symlink";
    EXPECT_EQ(st.st_mode & (S_IRWXO | S_IWGRP), 0u)
        << p << " has mode " << std::oct << (st.st_mode & 07777);
    ++checked;
  };
  check(state);
  for (const auto& e : fs::recursive_directory_iterator(state)) check(e.path());
  EXPECT_GT(checked, 20);
  EXPECT_TRUE(fs::exists(state / "firstfault.db"));
}

}  // namespace
