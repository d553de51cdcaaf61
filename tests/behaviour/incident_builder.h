// Small synthetic incidents for behaviour tests.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/behaviour/run_firstfault.h"

namespace fftest {

// job.json for a 2-node job n1/n2 with 2 ranks each, 10:00–11:00 UTC on 2026-11-02.
inline std::string job_json(const std::string& state = "FAILED", const std::string& extra = "") {
  return R"({"schema":"firstfault.incident/v1","cluster":"t","job_id":"77","attempt":0,"state":")" +
         state +
         R"(","exit_code":"1:0","start_time":"2026-11-02T10:00:00Z","end_time":"2026-11-02T11:00:00Z",
  "timezone":"UTC","nodes":["n1","n2"],
  "ranks":[{"rank":0,"node":"n1","local_rank":0,"gpus":["00000000:18:00.0"]},
           {"rank":1,"node":"n1","local_rank":1,"gpus":["00000000:2A:00.0"]},
           {"rank":2,"node":"n2","local_rank":0,"gpus":["00000000:18:00.0"]},
           {"rank":3,"node":"n2","local_rank":1,"gpus":["00000000:2A:00.0"]}],
  "node_info":{"n1":{"boot_time":"2026-10-30T00:00:00Z"},"n2":{"boot_time":"2026-10-30T00:00:00Z"}})" +
         extra + "}";
}

inline std::string xid_line(const std::string& time, const std::string& node,
                            const std::string& bus, int code, const std::string& text) {
  return "Nov  2 " + time + " " + node + " kernel: [1000.000000] NVRM: Xid (PCI:0000:" + bus +
         ":00): " + std::to_string(code) + ", pid='<unknown>', name=<unknown>, " + text + "\n";
}

inline std::string watchdog_line(int rank, const std::string& time) {
  return "[rank" + std::to_string(rank) + "]:[E1102 " + time +
         ".000000 42 ProcessGroupNCCL.cpp:616] [Rank " + std::to_string(rank) +
         "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, "
         "NumelIn=1, "
         "NumelOut=1, Timeout(ms)=600000) ran for 600100 milliseconds before timing out.\n";
}

inline std::string noise(int n) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += "Nov  2 10:1" + std::to_string(i % 10) + ":00 n1 CRON[1]: (root) CMD (true)\n";
  return s;
}

// The diagnosis JSON of an incident (`extra`: more command-line options).
inline nlohmann::json analyze(const TempIncident& inc, const std::string& extra = "",
                              int expect_exit = 0) {
  auto r = run_firstfault("analyze " + inc.arg() + " --format json " + extra);
  EXPECT_EQ(r.exit_code, expect_exit);
  return nlohmann::json::parse(r.out);
}

inline std::set<std::string> root_nodes(const nlohmann::json& d) {
  std::set<std::string> s;
  for (const auto& rc : d["root_causes"])
    if (rc["node"].is_string()) s.insert(rc["node"]);
  return s;
}

}  // namespace fftest
