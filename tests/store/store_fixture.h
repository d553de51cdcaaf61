// Shared by the store tests: a scratch directory, real diagnoses of the
// bundled example incidents (run through the engine in-process), synthetic
// diagnoses for counting tests, and raw SQL on the database file.
#pragma once

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/store/diagnosis_store.h"
#include "engine/pipeline/analyze.h"
#include "engine/rules/compiled_rules.h"
#include "incident/diagnosis_json.h"
#include "tests/support/scratch_directory.h"

namespace fftest {

namespace fs = std::filesystem;

// A scratch directory for one test and the database file's place in it.
class TempDir : public ff::test_support::ScratchDirectory {
 public:
  TempDir() : ScratchDirectory("store") {}
  std::string db() const { return (path() / "firstfault.db").string(); }
};

// The engine's JSON for examples/incidents/<name>, exactly as
// `firstfault analyze <dir> --format json` prints it (without the newline).
inline std::string example_diagnosis(const std::string& name) {
  static std::map<std::string, std::string> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  std::vector<ff::RuleError> errors;
  static auto rules = ff::load_rules(true, {}, errors);
  auto result =
      ff::analyze_incident(fs::path(FF_SOURCE_DIR) / "examples" / "incidents" / name, *rules);
  if (!result.usable) throw std::runtime_error(name + ": " + result.problem);
  return cache[name] = ff::diagnosis_to_json(result.diagnosis);
}

inline std::vector<std::string> example_names() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(FF_SOURCE_DIR) / "examples" / "incidents"))
    if (fs::exists(e.path() / "job.json")) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

struct Cause {
  std::string node;
  std::string device;
  std::string domain;
  std::string sub_domain;
};

// A minimal diagnosis with the fields the store indexes.
inline nlohmann::json synthetic_diagnosis(const std::string& job_id, const std::string& verdict,
                                          const std::string& domain,
                                          const std::vector<Cause>& causes,
                                          const std::vector<std::string>& affected) {
  nlohmann::json d;
  d["schema"] = "firstfault.diagnosis/v1";
  d["job_id"] = job_id;
  d["verdict"] = verdict;
  d["domain"] = domain.empty() ? nlohmann::json(nullptr) : nlohmann::json(domain);
  d["sub_domain"] = nullptr;
  d["root_causes"] = nlohmann::json::array();
  for (const auto& c : causes) {
    nlohmann::json r;
    r["node"] = c.node.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.node);
    r["device"] = c.device.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.device);
    r["event"] = "xid";
    r["code"] = "79";
    r["time"] = "2026-11-02T10:41:07Z";
    r["summary"] = "synthetic";
    r["domain"] = c.domain;
    r["sub_domain"] = c.sub_domain;
    r["origin"] = "kernel";  // the kernel's ring buffer: a source no user writes
    r["trusted"] = true;
    d["root_causes"].push_back(r);
    if (d["sub_domain"].is_null()) d["sub_domain"] = c.sub_domain;
  }
  d["affected_nodes"] = affected;
  d["symptoms"] = nlohmann::json::array();
  d["evidence"] = nlohmann::json::array();
  d["coverage"] = nlohmann::json::array();
  d["errors"] = nlohmann::json::array();
  d["recommended_action"] = "investigate";
  d["summary"] = verdict + " " + job_id;
  return d;
}

// The synthetic history the view, list and history tests count on:
//   job 1 (t=100)  attributed gpu      root n1 GPU-A fallen_off_bus, affected n1 n2
//   job 2 (t=200)  attributed gpu      root n1 GPU-A uncorrectable_ecc
//   job 3 (t=300)  attributed network  root n2 mlx5_0:1
//   job 4 (t=400)  ambiguous gpu       roots n1 GPU-B, n3 GPU-C, affected n1 n3
//   job 5 (t=500)  unattributed        no root
//   job 6 (t=600)  no_failure
//   job 7 (t=700)  attributed scheduler, job-wide root (no node)
//   job 8 (t=800)  fast pass: ambiguous root n3; (t=810) final: attributed gpu n2 GPU-D
//   job 1 attempt 1 (t=900) attributed host root n1 (no device)
inline void add_synthetic_history(ff::agent::DiagnosisStore& store) {
  store.add_pass("1", 0, "final",
                 synthetic_diagnosis("1", "attributed", "gpu",
                                     {{"n1", "GPU-A", "gpu", "gpu.fallen_off_bus"}}, {"n1", "n2"}),
                 100);
  store.add_pass("2", 0, "final",
                 synthetic_diagnosis("2", "attributed", "gpu",
                                     {{"n1", "GPU-A", "gpu", "gpu.uncorrectable_ecc"}}, {"n1"}),
                 200);
  store.add_pass(
      "3", 0, "final",
      synthetic_diagnosis("3", "attributed", "network",
                          {{"n2", "mlx5_0:1", "network", "network.ib_link_down"}}, {"n2"}),
      300);
  store.add_pass("4", 0, "final",
                 synthetic_diagnosis("4", "ambiguous", "gpu",
                                     {{"n1", "GPU-B", "gpu", "gpu.fallen_off_bus"},
                                      {"n3", "GPU-C", "gpu", "gpu.uncorrectable_ecc"}},
                                     {"n1", "n3"}),
                 400);
  store.add_pass("5", 0, "final", synthetic_diagnosis("5", "unattributed", "", {}, {"n4"}), 500);
  store.add_pass("6", 0, "final", synthetic_diagnosis("6", "no_failure", "", {}, {}), 600);
  store.add_pass("7", 0, "deadline",
                 synthetic_diagnosis("7", "attributed", "scheduler",
                                     {{"", "", "scheduler", "scheduler.time_limit"}}, {"n4"}),
                 700);
  store.add_pass("8", 0, "fastpass",
                 synthetic_diagnosis("8", "ambiguous", "gpu",
                                     {{"n3", "GPU-E", "gpu", "gpu.fallen_off_bus"}}, {"n3"}),
                 800);
  store.add_pass("8", 0, "final",
                 synthetic_diagnosis("8", "attributed", "gpu",
                                     {{"n2", "GPU-D", "gpu", "gpu.fallen_off_bus"}}, {"n2", "n4"}),
                 810);
  store.add_pass(
      "1", 1, "final",
      synthetic_diagnosis("1", "attributed", "host", {{"n1", "", "host", "host.mce"}}, {"n1"}),
      900);
}

// Raw SQL on the file, through a connection of its own (not the store's).
class RawDb {
 public:
  explicit RawDb(const std::string& path, int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) {
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK)
      throw std::runtime_error("cannot open " + path);
    sqlite3_busy_timeout(db_, 5000);
  }
  ~RawDb() { sqlite3_close_v2(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  void exec(const std::string& sql) {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      std::string message = error ? error : "?";
      sqlite3_free(error);
      throw std::runtime_error(message + " in " + sql);
    }
  }
  // Every row of a query, columns as text ("NULL" for NULL).
  std::vector<std::vector<std::string>> rows(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string(sqlite3_errmsg(db_)) + " in " + sql);
    std::vector<std::vector<std::string>> out;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const auto* t = sqlite3_column_text(st, c);
        row.push_back(t ? reinterpret_cast<const char*>(t) : "NULL");
      }
      out.push_back(std::move(row));
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
      throw std::runtime_error(std::string(sqlite3_errmsg(db_)) + " in " + sql);
    return out;
  }
  std::string value(const std::string& sql) {
    auto r = rows(sql);
    return r.empty() || r.front().empty() ? std::string() : r.front().front();
  }
  long long count(const std::string& sql) { return std::stoll(value(sql)); }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace fftest
