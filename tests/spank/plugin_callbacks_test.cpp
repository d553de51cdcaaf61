// spank_firstfault.so as slurmstepd, srun and sbatch call it, with a fake Slurm host
// (fake_slurm_host.cpp) and a fake collector script that records its command line.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/spank/fake_slurm_host.h"
#include "tests/support/fake_command.h"
#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace {

using ff::test_support::FakeCommand;
using ff::test_support::read_file;
using ff::test_support::ScratchDirectory;
using ff::test_support::write_file;

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using Callback = int (*)(spank_t, int, char**);

constexpr uint32_t kBatchStep = 0xfffffffb;
constexpr uint32_t kExternStep = 0xfffffffc;

// The plugin, loaded afresh for each test like slurmstepd loads it for each step.
class LoadedPlugin {
 public:
  LoadedPlugin() {
    // RTLD_NOW: every symbol the plugin needs must be one the host provides.
    handle_ = dlopen(FF_SPANK_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) ADD_FAILURE() << dlerror();
  }
  ~LoadedPlugin() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  Callback callback(const char* name) {
    return handle_ == nullptr ? nullptr : reinterpret_cast<Callback>(dlsym(handle_, name));
  }
  void* symbol(const char* name) { return handle_ == nullptr ? nullptr : dlsym(handle_, name); }

 private:
  void* handle_ = nullptr;
};

class PluginCallbacksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ResetFakeHost();
    setenv("SLURMD_NODENAME", "n2", 1);
    args_ = {"spool=" + dir_.path().string() + "/spool/%n", "collect=" + collector_.command(),
             "config=/etc/firstfault/node.yaml", "agent=http://127.0.0.1:7421"};
    host().env["SLURM_JOB_NODELIST"] = "n[1-3]";
    host().env["CUDA_VISIBLE_DEVICES"] = "0,1";
    host().env["SLURM_JOB_GPUS"] = "2,3";
  }

  // slurmstepd calls slurm_spank_exit (spank_fini) for every step that went
  // through slurm_spank_init; a test that stops earlier ends its step here, so
  // the plugin frees its step state as in slurmstepd before it is unloaded.
  void TearDown() override {
    if (step_open_) Call("slurm_spank_exit");
  }

  FakeSlurmHost& host() { return fake_host(); }

  // The plugin's errors: slurm_error() and slurm_info("firstfault: error: ...").
  std::vector<std::string> Errors() {
    std::vector<std::string> errors = host().errors;
    for (const std::string& info : host().infos) {
      if (info.rfind("firstfault: error: ", 0) == 0) errors.push_back(info);
    }
    return errors;
  }

  // The fake collector's fast pass takes this long (after its call is recorded).
  void SlowFastPass(int seconds) {
    collector_.answer_when({"fastpass"}, {.seconds_after = seconds});
  }

  int Call(const char* name) {
    Callback callback = plugin_.callback(name);
    EXPECT_NE(callback, nullptr) << name;
    if (callback == nullptr) return -1;
    std::vector<char*> argv;
    for (std::string& arg : args_) argv.push_back(arg.data());
    Clock::time_point start = Clock::now();
    int result = callback(nullptr, static_cast<int>(argv.size()), argv.data());
    if (std::string(name) == "slurm_spank_init") step_open_ = true;
    if (std::string(name) == "slurm_spank_exit") step_open_ = false;
    costs_[name].push_back(
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start));
    return result;
  }

  // init, options, init_post_opt: what slurmstepd does before forking tasks.
  void StartStep(uint32_t step_id, const char* user_option = nullptr) {
    host().step_id = step_id;
    EXPECT_EQ(Call("slurm_spank_init"), 0);
    if (user_option != nullptr) {
      ASSERT_EQ(host().options.size(), 1u);
      EXPECT_EQ(host().options[0].cb(host().options[0].val, user_option, 1), 0);
    }
    EXPECT_EQ(Call("slurm_spank_init_post_opt"), 0);
  }

  void ForkTask(int local_id, uint32_t global_id, pid_t pid) {
    host().task_id = local_id;
    host().task_global_id = global_id;
    host().task_pid = pid;
    EXPECT_EQ(Call("slurm_spank_task_post_fork"), 0);
    host().task_id = -1;
  }

  void EndTask(int local_id, uint32_t global_id, pid_t pid, int status) {
    host().task_id = local_id;
    host().task_global_id = global_id;
    host().task_pid = pid;
    host().task_exit_status = status;
    host().in_task_exit = true;
    EXPECT_EQ(Call("slurm_spank_task_exit"), 0);
    host().in_task_exit = false;
    host().task_id = -1;
  }

  std::string SpoolFile(const std::string& relative) {
    return dir_.path().string() + "/spool/n2/" + relative;
  }
  nlohmann::json ReadJson(const std::string& relative) {
    return nlohmann::json::parse(read_file(SpoolFile(relative)));
  }

  // The collector calls recorded so far, each its arguments joined by
  // spaces, after waiting up to `wait` for `expected`.
  std::vector<std::string> CollectorCalls(size_t expected, milliseconds wait) {
    Clock::time_point deadline = Clock::now() + wait;
    std::vector<std::string> lines;
    do {
      lines.clear();
      for (const auto& args : collector_.call_args()) {
        std::string line;
        for (const std::string& arg : args) line += (line.empty() ? "" : " ") + arg;
        lines.push_back(line);
      }
      if (lines.size() >= expected) break;
      std::this_thread::sleep_for(milliseconds(10));
    } while (Clock::now() < deadline);
    return lines;
  }

  ScratchDirectory dir_{"spank"};
  LoadedPlugin plugin_;
  FakeCommand collector_{dir_.path(), "firstfault-collect"};
  std::vector<std::string> args_;
  std::map<std::string, std::vector<std::chrono::microseconds>> costs_;
  bool step_open_ = false;  // slurm_spank_init called, slurm_spank_exit not yet
};

TEST_F(PluginCallbacksTest, ExportsTheLoaderSymbols) {
  ASSERT_NE(plugin_.symbol("plugin_name"), nullptr);
  EXPECT_STREQ(static_cast<const char*>(plugin_.symbol("plugin_name")), "firstfault");
  EXPECT_STREQ(static_cast<const char*>(plugin_.symbol("plugin_type")), "spank");
  EXPECT_EQ(*static_cast<const unsigned*>(plugin_.symbol("plugin_version")) & 0xffff00,
            SLURM_VERSION_NUMBER & 0xffff00);
  EXPECT_EQ(plugin_.symbol("init"), nullptr);
  EXPECT_EQ(plugin_.symbol("fini"), nullptr);
}

TEST_F(PluginCallbacksTest, SuccessfulStepIsRecordedCheaplyAndCollectsNothing) {
  StartStep(0);
  ForkTask(0, 2, 4242);
  ForkTask(1, 3, 4243);
  nlohmann::json rank = ReadJson("jobs/12/rank-0-3.json");
  EXPECT_EQ(rank["pid"], 4243);
  EXPECT_FALSE(rank.contains("exit_status"));
  EndTask(0, 2, 4242, 0);
  EndTask(1, 3, 4243, 0);
  EXPECT_EQ(Call("slurm_spank_exit"), 0);

  nlohmann::json alloc = ReadJson("jobs/12/alloc-0.json");
  EXPECT_EQ(alloc["job_id"], "12");
  EXPECT_EQ(alloc["step"], "0");
  EXPECT_EQ(alloc["node"], "n2");
  EXPECT_EQ(alloc["node_index"], 1);
  EXPECT_EQ(alloc["node_count"], 3);
  EXPECT_EQ(alloc["local_task_count"], 2);
  EXPECT_EQ(alloc["total_task_count"], 6);
  EXPECT_EQ(alloc["restart_count"], 0);
  EXPECT_EQ(alloc["uid"], 1000);
  EXPECT_EQ(alloc["cuda_visible_devices"], "0,1");
  EXPECT_EQ(alloc["slurm_job_gpus"], "2,3");
  EXPECT_EQ(alloc["nodelist"], "n[1-3]");
  EXPECT_EQ(alloc["start_time"].get<std::string>().size(), 20u);

  rank = ReadJson("jobs/12/rank-0-2.json");
  EXPECT_EQ(rank["job_id"], "12");
  EXPECT_EQ(rank["step"], "0");
  EXPECT_EQ(rank["node"], "n2");
  EXPECT_EQ(rank["rank"], 2);
  EXPECT_EQ(rank["local_rank"], 0);
  EXPECT_EQ(rank["pid"], 4242);
  EXPECT_EQ(rank["gpus"], nlohmann::json::array({"2", "3"}));  // SLURM_JOB_GPUS first
  EXPECT_EQ(rank["exit_status"], 0);
  EXPECT_EQ(rank["exit_code"], "0:0");

  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_TRUE(CollectorCalls(0, milliseconds(0)).empty());
  EXPECT_TRUE(Errors().empty()) << Errors()[0];
}

// The success path costs well under 5 ms per callback: no process, no network, a few
// small files. The median of many steps, because a loaded test machine has spikes.
TEST_F(PluginCallbacksTest, CallbackCostOnTheSuccessPath) {
  for (int step = 0; step < 30; ++step) {
    StartStep(step);
    for (int task = 0; task < 4; ++task) ForkTask(task, task, 1000 + task);
    for (int task = 0; task < 4; ++task) EndTask(task, task, 1000 + task, 0);
    EXPECT_EQ(Call("slurm_spank_exit"), 0);
  }
  for (auto& [callback, costs] : costs_) {
    std::sort(costs.begin(), costs.end());
    auto median = costs[costs.size() / 2];
    std::cout << "  " << callback << ": median " << median.count() << " us, max "
              << costs.back().count() << " us over " << costs.size() << " calls\n";
    EXPECT_LT(median.count(), 5000) << callback;
  }
}

TEST_F(PluginCallbacksTest, FailedTaskStartsStepCollectionDetached) {
  StartStep(3);
  ForkTask(0, 2, 4242);
  ForkTask(1, 3, 4243);
  EndTask(0, 2, 4242, 0);
  EndTask(1, 3, 4243, 9);  // SIGKILL
  nlohmann::json rank = ReadJson("jobs/12/rank-3-3.json");
  EXPECT_EQ(rank["exit_status"], 9);
  EXPECT_EQ(rank["exit_code"], "0:9");
  Clock::time_point start = Clock::now();
  EXPECT_EQ(Call("slurm_spank_exit"), 0);
  EXPECT_LT(std::chrono::duration_cast<milliseconds>(Clock::now() - start).count(), 100);
  std::vector<std::string> calls = CollectorCalls(1, milliseconds(5000));
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0], "step --job 12 --node n2 --config /etc/firstfault/node.yaml");
}

TEST_F(PluginCallbacksTest, FailedBatchScriptRunsTheFastPass) {
  args_.push_back("fastpass_timeout=5");
  host().node_count = 0;  // as slurmstepd reports for the batch step
  host().local_task_count = 1;
  host().total_task_count = 0;
  host().env["SLURM_JOB_NUM_NODES"] = "3";
  StartStep(kBatchStep);
  ForkTask(0, 0, 5000);
  EndTask(0, 0, 5000, 1280);  // exit 5
  EXPECT_EQ(Call("slurm_spank_exit"), 0);
  // Waited for: the call is there as soon as exit returns.
  std::vector<std::string> calls = CollectorCalls(1, milliseconds(0));
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0],
            "fastpass --job 12 --node n2 --exit-status 1280 --timeout 5 "
            "--config /etc/firstfault/node.yaml");
  nlohmann::json alloc = ReadJson("jobs/12/alloc-batch.json");
  EXPECT_EQ(alloc["step"], "batch");
  EXPECT_EQ(alloc["node_count"], 3);  // from SLURM_JOB_NUM_NODES: the item says 0 here
  EXPECT_EQ(alloc["total_task_count"], 1);
  EXPECT_EQ(ReadJson("jobs/12/rank-batch-0.json")["exit_code"], "5:0");
}

TEST_F(PluginCallbacksTest, SlowFastPassIsKilledAtTheTimeout) {
  SlowFastPass(60);
  args_.push_back("fastpass_timeout=1");
  StartStep(kBatchStep);
  ForkTask(0, 0, 5000);
  EndTask(0, 0, 5000, 256);
  Clock::time_point start = Clock::now();
  EXPECT_EQ(Call("slurm_spank_exit"), 0);
  milliseconds took = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  EXPECT_GE(took.count(), 1000);
  EXPECT_LT(took.count(), 3500);
  ASSERT_FALSE(Errors().empty());
  EXPECT_NE(Errors().back().find("timed out"), std::string::npos) << Errors().back();
}

TEST_F(PluginCallbacksTest, SuccessfulBatchScriptDoesNothing) {
  StartStep(kBatchStep);
  ForkTask(0, 0, 5000);
  EndTask(0, 0, 5000, 0);
  Clock::time_point start = Clock::now();
  EXPECT_EQ(Call("slurm_spank_exit"), 0);
  EXPECT_LT(std::chrono::duration_cast<milliseconds>(Clock::now() - start).count(), 5);
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_TRUE(CollectorCalls(0, milliseconds(0)).empty());
}

TEST_F(PluginCallbacksTest, FastPassDisabledStillSendsTheStepBundle) {
  args_.push_back("fastpass_timeout=0");
  StartStep(kBatchStep);
  ForkTask(0, 0, 5000);
  EndTask(0, 0, 5000, 256);
  EXPECT_EQ(Call("slurm_spank_exit"), 0);
  std::vector<std::string> calls = CollectorCalls(1, milliseconds(5000));
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].substr(0, 5), "step ");
}

// Time limit, scancel, preemption: Slurm killed the script, the job already
// ended and takes no Comment, so nothing waits; the bundle still goes early.
TEST_F(PluginCallbacksTest, BatchScriptKilledBySlurmSkipsTheFastPass) {
  SlowFastPass(60);
  args_.push_back("fastpass_timeout=5");
  StartStep(kBatchStep);
  ForkTask(0, 0, 5000);
  EndTask(0, 0, 5000, SIGTERM);  // wait status of a SIGTERM death
  Clock::time_point start = Clock::now();
  EXPECT_EQ(Call("slurm_spank_exit"), 0);
  EXPECT_LT(std::chrono::duration_cast<milliseconds>(Clock::now() - start).count(), 100);
  std::vector<std::string> calls = CollectorCalls(1, milliseconds(5000));
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].substr(0, 5), "step ");
}

TEST_F(PluginCallbacksTest, OptOutRecordsAndCollectsNothing) {
  StartStep(kBatchStep, "off");
  ForkTask(0, 0, 5000);
  EndTask(0, 0, 5000, 256);
  EXPECT_EQ(Call("slurm_spank_exit"), 0);
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_FALSE(std::filesystem::exists(dir_.path().string() + "/spool"));
  EXPECT_TRUE(CollectorCalls(0, milliseconds(0)).empty());
  // The batch script's sruns inherit the opt-out.
  EXPECT_EQ(host().env["SLURM_SPANK__SLURM_SPANK_OPTION_firstfault_firstfault"], "off");
}

TEST_F(PluginCallbacksTest, ExplicitOnIsRecorded) {
  StartStep(0, "on");
  EXPECT_TRUE(std::filesystem::exists(SpoolFile("jobs/12/alloc-0.json")));
}

TEST_F(PluginCallbacksTest, ExternStepWritesOnlyItsAllocation) {
  StartStep(kExternStep);
  ForkTask(-1, 0, 0);  // slurmstepd calls task_post_fork with task id -1 here
  EXPECT_EQ(Call("slurm_spank_exit"), 0);
  EXPECT_TRUE(std::filesystem::exists(SpoolFile("jobs/12/alloc-extern.json")));
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(SpoolFile("jobs/12"))) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST_F(PluginCallbacksTest, MalformedArgumentsAreLoggedAndIgnored) {
  args_.push_back("fastpass_timeout=soon");
  args_.push_back("colour=blue");
  StartStep(0);
  EXPECT_EQ(Errors().size(), 2u);
  for (const std::string& error : Errors()) EXPECT_EQ(error.rfind("firstfault: ", 0), 0u);
  EXPECT_TRUE(std::filesystem::exists(SpoolFile("jobs/12/alloc-0.json")));
}

TEST_F(PluginCallbacksTest, LogOffSilencesEvenErrors) {
  args_.push_back("colour=blue");
  args_.push_back("log=off");
  StartStep(0);
  EXPECT_TRUE(Errors().empty());
}

TEST_F(PluginCallbacksTest, UnwritableSpoolIsLoggedOnceAndJobsGoOn) {
  write_file(dir_.path().string() + "/file", "x");
  args_[0] = "spool=" + dir_.path().string() + "/file/%n";
  StartStep(0);
  ForkTask(0, 0, 1);
  ForkTask(1, 1, 2);
  EndTask(0, 0, 1, 0);
  EndTask(1, 1, 2, 0);
  EXPECT_EQ(Call("slurm_spank_exit"), 0);
  EXPECT_EQ(Errors().size(), 1u);
}

TEST_F(PluginCallbacksTest, MissingCollectorIsLogged) {
  args_[1] = "collect=/nonexistent/firstfault-collect";
  StartStep(0);
  ForkTask(0, 0, 1);
  EndTask(0, 0, 1, 256);
  EXPECT_EQ(Call("slurm_spank_exit"), 0);
  ASSERT_EQ(Errors().size(), 1u);
  EXPECT_NE(Errors()[0].find("/nonexistent/firstfault-collect"), std::string::npos);
  // Not through slurm_error: in slurmstepd that would also land in the job's stderr.
  EXPECT_TRUE(host().errors.empty());
}

TEST_F(PluginCallbacksTest, NodeNameComesFromSlurmstepdNotFromTheJob) {
  host().env["SLURMD_NODENAME"] = "n1";  // inherited from the batch node
  StartStep(0);
  EXPECT_EQ(ReadJson("jobs/12/alloc-0.json")["node"], "n2");
}

TEST_F(PluginCallbacksTest, SrunAndSbatchOnlyRegisterTheOption) {
  for (spank_context_t context : {S_CTX_LOCAL, S_CTX_ALLOCATOR}) {
    ResetFakeHost();
    host().context = context;
    EXPECT_EQ(Call("slurm_spank_init"), 0);
    ASSERT_EQ(host().options.size(), 1u);
    EXPECT_STREQ(host().options[0].name, "firstfault");
    EXPECT_EQ(host().options[0].has_arg, 1);
    EXPECT_EQ(host().options[0].cb(0, "off", 0), 0);
    EXPECT_EQ(host().options[0].cb(0, "of", 0), -1);  // srun reports the typo
    EXPECT_EQ(Call("slurm_spank_init_post_opt"), 0);
    EXPECT_EQ(Call("slurm_spank_exit"), 0);
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.path().string() + "/spool"));
}

TEST_F(PluginCallbacksTest, SlurmdContextDoesNothing) {
  host().context = S_CTX_SLURMD;
  EXPECT_EQ(Call("slurm_spank_init"), 0);
  EXPECT_EQ(Call("slurm_spank_exit"), 0);
  EXPECT_TRUE(host().options.empty());
}

}  // namespace
