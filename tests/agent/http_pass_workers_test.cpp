// Final passes run on a pool of final_pass_workers threads, each pass's
// engine on `jobs` threads: the diagnoses of several jobs whose bundles
// arrive interleaved are byte for byte the same with one worker of one
// thread and with four workers of eight.
#include <gtest/gtest.h>

#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

std::map<std::string, std::string> diagnoses_with(int workers, int engine_jobs) {
  const std::vector<std::string> examples = {"01-xid79-fallen-off-bus", "03-xid48-dbe",
                                             "04-cuda-oom", "06-ib-port-down",
                                             "10-two-independent-faults"};
  std::vector<std::vector<Bundle>> jobs;
  for (std::size_t i = 0; i < examples.size(); ++i)
    jobs.push_back(example_bundles(examples[i], "epilog", 1000 + 100 * static_cast<long long>(i)));
  AgentProcess agent("final_pass_workers: " + std::to_string(workers) +
                     "\njobs: " + std::to_string(engine_jobs) + "\n");
  auto client = agent.client();
  // Node by node across the jobs, so their passes come due together.
  for (std::size_t n = 0;; ++n) {
    bool any = false;
    for (const auto& job : jobs)
      if (n < job.size()) {
        any = true;
        EXPECT_EQ(upload(client, job[n])->status, 201) << job[n].bundle_id;
      }
    if (!any) break;
  }
  std::map<std::string, std::string> out;
  for (const auto& job : jobs) {
    const std::string& id = job[0].job_id;
    auto d = wait_for_diagnosis(client, id, 60);
    EXPECT_TRUE(d) << id << agent.log();
    if (d) out[id] = d->dump(2);
  }
  // One pass each: the final one.
  for (const auto& job : jobs) {
    const std::string& id = job[0].job_id;
    EXPECT_EQ(count_rows(agent.state() / "firstfault.db",
                         "SELECT count(*) FROM diagnoses WHERE job_id = '" + id +
                             "' AND trigger = 'final'"),
              1)
        << id;
  }
  return out;
}

TEST(PassWorkers, SameDiagnosesWithOneWorkerAndWithFourOfEightThreads) {
  auto one = diagnoses_with(1, 1);
  auto four = diagnoses_with(4, 8);
  ASSERT_EQ(one.size(), 5u);
  EXPECT_EQ(one, four);
}

}  // namespace
