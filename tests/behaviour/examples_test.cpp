// The bundled example incidents are diagnosed as their expected.json says,
// and each diagnosis is byte-identical when run twice, and on any number of
// threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/behaviour/run_firstfault.h"

namespace fs = std::filesystem;
using fftest::run_firstfault;
using fftest::shell_quote;
using nlohmann::json;

namespace {

// RFC 3339 times of the diagnosis, made comparable as strings.
std::string sortable(std::string t) {
  if (!t.empty() && t.back() == 'Z') t.pop_back();
  auto dot = t.find('.');
  std::string frac = dot == std::string::npos ? "" : t.substr(dot + 1);
  if (dot != std::string::npos) t.resize(dot);
  return t + "." + frac + std::string(6 - std::min<std::size_t>(6, frac.size()), '0');
}

std::vector<std::string> example_dirs() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(FF_SOURCE_DIR) / "examples" / "incidents"))
    if (fs::exists(e.path() / "expected.json")) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

class ExampleIncident : public ::testing::TestWithParam<std::string> {};

TEST_P(ExampleIncident, DiagnosedAsExpected) {
  json expected = json::parse(std::ifstream(fs::path(GetParam()) / "expected.json"));
  auto r = run_firstfault("analyze " + shell_quote(GetParam()) + " --format json");
  ASSERT_EQ(r.exit_code, 0);
  json d = json::parse(r.out);
  EXPECT_EQ(d["schema"], "firstfault.diagnosis/v1");
  EXPECT_EQ(d["verdict"], expected["verdict"]);
  if (expected["domain"].is_string()) {
    EXPECT_EQ(d["domain"], expected["domain"]);
  }
  if (expected["domain"].is_array()) {
    EXPECT_NE(std::find(expected["domain"].begin(), expected["domain"].end(), d["domain"]),
              expected["domain"].end());
  }
  if (expected.contains("sub_domain_prefix")) {
    EXPECT_EQ(d["sub_domain"].get<std::string>().rfind(
                  expected["sub_domain_prefix"].get<std::string>(), 0),
              0u)
        << d["sub_domain"];
  }
  std::set<std::string> want, got;
  for (const auto& n : expected["root_nodes"]) want.insert(n);
  for (const auto& rc : d["root_causes"])
    if (rc["node"].is_string()) got.insert(rc["node"]);
  if (expected["verdict"] == "ambiguous")
    EXPECT_TRUE(std::includes(got.begin(), got.end(), want.begin(), want.end()));
  else
    EXPECT_EQ(got, want);
  // Every id cited by root causes and symptoms exists in the evidence chain,
  // which is in time order.
  std::set<int> ids;
  std::string last;
  for (const auto& e : d["evidence"]) {
    ids.insert(e["id"].get<int>());
    if (e["time"].is_string()) {
      EXPECT_LE(last, sortable(e["time"].get<std::string>()));
      last = sortable(e["time"].get<std::string>());
    }
  }
  for (const auto& rc : d["root_causes"])
    for (const auto& id : rc["evidence"]) EXPECT_TRUE(ids.count(id.get<int>()));
  for (const auto& s : d["symptoms"])
    for (const auto& id : s["evidence"]) EXPECT_TRUE(ids.count(id.get<int>()));
  EXPECT_LE(d["summary"].get<std::string>().size(), 1000u);
}

TEST_P(ExampleIncident, SameInputSameBytes) {
  auto a = run_firstfault("analyze " + shell_quote(GetParam()) + " --format json");
  auto b = run_firstfault("analyze " + shell_quote(GetParam()) + " --format json");
  ASSERT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.out, b.out);
  // Whatever the thread count, and wherever files are cut into ranges (the
  // examples are small: cut them every few hundred bytes), the same bytes.
  for (const char* how : {"--jobs 1", "--jobs 16", "--jobs 16 --split-bytes 300",
                          "--jobs 3 --split-bytes 64", "--jobs 1 --split-bytes 64"}) {
    auto c = run_firstfault("analyze " + shell_quote(GetParam()) + " --format json " + how);
    EXPECT_EQ(c.out, a.out) << how;
  }
  auto t1 = run_firstfault("analyze " + shell_quote(GetParam()) + " --format text");
  auto t2 = run_firstfault("analyze " + shell_quote(GetParam()) + " --format text");
  EXPECT_EQ(t1.out, t2.out);
}

std::string name_of(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = fs::path(info.param).filename().string();
  std::replace_if(
      n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return n;
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleIncident, ::testing::ValuesIn(example_dirs()), name_of);

}  // namespace
