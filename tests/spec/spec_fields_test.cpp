// The specifications and the code agree, both ways. Each spec has a field
// table (a Markdown table whose first column is headed `field`, one
// backquoted key path a row: `root_causes[].node`, `node_info.<node>.gpus`).
// Every key path the code writes must be a row, and every row must be
// written by the code or by a bundled example, or be allow-listed below with
// the reason no example writes it.
//
// Diagnoses: what the firstfault binary prints for every bundled example.
// job.json: what the node collector's fragment writer and the agent's merge
// write with every optional field set, and the bundled examples' job.json
// (they stand for `firstfault k8s`, whose writer needs a Kubernetes API).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "agent/server/incident_merger.h"
#include "collectors/bundle/job_fragment.h"
#include "tests/behaviour/run_firstfault.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kSourceDir = FF_SOURCE_DIR;

// Documented keys that no bundled example writes, each with the reason. An
// entry that an example does write, or that the spec no longer lists, fails
// the test, so the list cannot go stale.
const std::map<std::string, std::string> kDiagnosisNotInExamples = {
    // A log the engine could not read whole (a line past 1 MiB, a time it
    // cannot read) is reported with its line; no bundled example has a
    // broken file (tests/behaviour/bad_input_test.cpp writes them).
    {"errors[].line", "no example has a broken log"},
    // Only a hang of more ranks than the list's bound leaves ranks out; the
    // behaviour test of a 4,096-rank hang writes it (collective_hang_test.cpp).
    {"hang.process_groups[].ranks_not_listed", "no example has thousands of ranks"},
};
// Every job.json key is written by a writer or an example.
const std::map<std::string, std::string> kJobJsonNotInExamples = {};

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> cells_of(const std::string& row) {
  std::vector<std::string> cells;
  std::stringstream in(row.substr(1));  // past the leading '|'
  std::string cell;
  while (std::getline(in, cell, '|')) cells.push_back(trim(cell));
  return cells;
}

// The field table of a spec: key path → its type cell.
struct FieldTable {
  std::map<std::string, std::string> type_of;
  std::vector<std::string> problems;  // rows that name no single field, repeats

  bool has(const std::string& path) const { return type_of.count(path) > 0; }
  // A free-form object is documented as a whole; its keys are not contract.
  bool free_form(const std::string& path) const {
    auto it = type_of.find(path);
    return it != type_of.end() && it->second.rfind("free-form", 0) == 0;
  }
  // "<node>" when the table names the keys of the object at `path` by a
  // placeholder (`node_info.<node>`), else "".
  std::string placeholder_under(const std::string& path) const {
    std::string prefix = path + ".<";
    for (const auto& [p, _] : type_of) {
      auto end = p.find('>', prefix.size());
      if (p.rfind(prefix, 0) == 0 && end != p.npos)
        return p.substr(path.size() + 1, end - path.size());
    }
    return "";
  }
};

FieldTable read_field_table(const fs::path& spec) {
  FieldTable table;
  std::ifstream in(spec);
  if (!in) {
    table.problems.push_back("cannot read " + spec.string());
    return table;
  }
  static const std::regex kField("^`([^`]+)`$");
  static const std::regex kSeparator("^[-: |]+$");
  bool in_table = false;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '|') {
      in_table = false;
      continue;
    }
    auto cells = cells_of(line);
    if (!in_table) {
      in_table = !cells.empty() && cells[0] == "field";
      continue;
    }
    if (std::regex_match(line, kSeparator)) continue;
    std::smatch m;
    if (cells.size() < 2 || !std::regex_match(cells[0], m, kField)) {
      table.problems.push_back("row names no single field: " + line);
      continue;
    }
    if (!table.type_of.emplace(m[1].str(), cells[1]).second)
      table.problems.push_back("field listed twice: " + m[1].str());
  }
  if (table.type_of.empty()) table.problems.push_back(spec.string() + " has no field table");
  return table;
}

// Key path → where it was first seen.
using Written = std::map<std::string, std::string>;

// The key paths of `v`, which sits at `path`. Keys that are names (a node's)
// count as the table's placeholder; below a free-form object nothing counts.
void collect(const json& v, const std::string& path, const FieldTable& table,
             const std::string& where, Written& out) {
  if (v.is_array()) {
    for (const auto& x : v) collect(x, path + "[]", table, where, out);
    return;
  }
  if (!v.is_object() || (!path.empty() && table.free_form(path))) return;
  std::string placeholder = path.empty() ? "" : table.placeholder_under(path);
  for (const auto& [key, x] : v.items()) {
    std::string name = placeholder.empty() ? key : placeholder;
    std::string p = path.empty() ? name : path + "." + name;
    out.emplace(p, where);
    collect(x, p, table, where, out);
  }
}

void expect_agree(const std::string& spec_name, const FieldTable& table, const Written& written,
                  const std::map<std::string, std::string>& not_in_examples) {
  for (const auto& problem : table.problems) ADD_FAILURE() << spec_name << ": " << problem;
  for (const auto& [path, where] : written)
    EXPECT_TRUE(table.has(path)) << "`" << path << "` is written (" << where << ") but "
                                 << spec_name << " does not document it: add it to the field table";
  for (const auto& [path, _] : table.type_of)
    EXPECT_TRUE(written.count(path) || not_in_examples.count(path))
        << spec_name << " documents `" << path
        << "` but nothing writes it: an example should, or allow-list it with the reason";
  for (const auto& [path, why] : not_in_examples) {
    EXPECT_TRUE(table.has(path)) << "allow-listed `" << path << "` is not in " << spec_name;
    EXPECT_FALSE(written.count(path))
        << "allow-listed `" << path << "` (" << why << ") is written by " << written.at(path)
        << ": take it off the list";
  }
}

std::vector<fs::path> example_dirs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kSourceDir / "examples" / "incidents"))
    if (fs::exists(e.path() / "job.json")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

json read_json(const fs::path& file) {
  std::ifstream in(file);
  return json::parse(in);
}

// The node collector's job.json fragment, every optional field set.
json collector_fragment() {
  ff::collect::JobFragment job;
  job.job_id = "4242";
  job.attempt = 1;
  job.nodes = {"gpu-a01", "gpu-a02"};
  job.start_time = ff::parse_iso8601_utc("2026-11-02T10:00:00Z");
  job.end_time = ff::parse_iso8601_utc("2026-11-02T10:42:13Z");
  job.exit_code = "1:0";
  job.timezone = "Europe/Berlin";
  ff::collect::RankRecord rank;
  rank.node = "gpu-a01";
  rank.rank = 0;
  rank.local_rank = 0;
  rank.gpu_pci = {"00000000:3B:00.0"};
  rank.exit_code = "1:0";
  rank.pid = 48812;
  job.ranks = {rank};
  job.node = "gpu-a01";
  job.boot_time = ff::parse_iso8601_utc("2026-11-01T08:00:00Z");
  job.gpus = {{0, "00000000:3B:00.0", "GPU-1f0c"}};
  ff::Coverage kernel;
  kernel.collector = "kernel";
  kernel.node = "gpu-a01";
  kernel.status = ff::CoverageStatus::kOk;
  kernel.lines = 12;
  kernel.detail = "/dev/kmsg";
  kernel.covers_from = ff::parse_iso8601_utc("2026-11-02T09:00:00Z");
  kernel.covers_until = ff::parse_iso8601_utc("2026-11-02T10:42:13Z");
  job.coverage = {kernel};
  return ff::collect::to_json(job);
}

// The agent's merged job.json over that fragment, as a fast pass writes it
// (the state and exit code it knows).
json agent_merge(const json& fragment) {
  std::vector<ff::agent::BundleRecord> bundles(1);
  bundles[0].bundle_id = "gpu-a01-4242-epilog-1";
  bundles[0].job_id = "4242";
  bundles[0].attempt = 1;
  bundles[0].node = "gpu-a01";
  bundles[0].pass = "epilog";
  ff::agent::JobJsonMerge merge(bundles);
  merge.add(0, fragment);
  ff::agent::MergeFacts facts;
  facts.state_override = "FAILED";
  facts.exit_code_override = "1:0";
  return merge.finish({"4242", 1}, facts);
}

}  // namespace

TEST(SpecFields, DiagnosisSpecListsExactlyWhatTheEngineWrites) {
  FieldTable table = read_field_table(kSourceDir / "docs/spec/diagnosis.md");
  Written written;
  auto dirs = example_dirs();
  ASSERT_FALSE(dirs.empty());
  for (const auto& dir : dirs) {
    auto r =
        fftest::run_firstfault("analyze " + fftest::shell_quote(dir.string()) + " --format json");
    ASSERT_EQ(r.exit_code, 0) << dir;
    collect(json::parse(r.out), "", table, "the diagnosis of " + dir.filename().string(), written);
  }
  expect_agree("docs/spec/diagnosis.md", table, written, kDiagnosisNotInExamples);
}

TEST(SpecFields, IncidentSpecListsExactlyWhatJobJsonWritersWrite) {
  FieldTable table = read_field_table(kSourceDir / "docs/spec/incident.md");
  Written written;
  json fragment = collector_fragment();
  collect(fragment, "", table, "the node collector's fragment", written);
  collect(agent_merge(fragment), "", table, "the agent's merged job.json", written);
  for (const auto& dir : example_dirs())
    collect(read_json(dir / "job.json"), "", table,
            "examples/incidents/" + dir.filename().string() + "/job.json", written);
  expect_agree("docs/spec/incident.md", table, written, kJobJsonNotInExamples);
}

// The table reader itself: a check that reads nothing checks nothing.
TEST(SpecFields, FieldTableReader) {
  fftest::TempIncident dir;
  dir.write("spec.md",
            "# T\n\n| kind | x |\n|---|---|\n| `not_a_field` | y |\n\n"
            "| field | type | meaning |\n|---|---|---|\n"
            "| `a` | object | |\n| `a.<node>.b` | string | |\n"
            "| `k` | free-form object | |\n| c and d | string | |\n| `a` | object | |\n");
  FieldTable table = read_field_table(dir.dir() / "spec.md");
  EXPECT_TRUE(table.has("a"));
  EXPECT_TRUE(table.has("a.<node>.b"));
  EXPECT_FALSE(table.has("not_a_field"));
  EXPECT_EQ(table.problems.size(), 2u);  // the row without a field, `a` twice
  EXPECT_EQ(table.placeholder_under("a"), "<node>");
  EXPECT_TRUE(table.free_form("k"));

  Written written;
  collect(json::parse(R"({"a": {"n1": {"b": 1}, "n2": {}}, "k": {"x": {"y": 1}}})"), "", table,
          "here", written);
  EXPECT_EQ(written.size(), 4u);  // a, a.<node>, a.<node>.b, k: nothing below k
  EXPECT_TRUE(written.count("a.<node>.b"));
  EXPECT_FALSE(written.count("k.x"));
}
