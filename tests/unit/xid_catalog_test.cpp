// The built-in Xid table (rules/xid_catalog.yaml) against NVIDIA's published
// Xid Catalog, of which docs/reference/nvidia-xid-catalog.csv is a copy (see
// docs/reference/README.md): every code NVIDIA lists has an entry with
// NVIDIA's resolution buckets verbatim, every entry is a code NVIDIA lists,
// and the names are NVIDIA's.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/rules/compiled_rules.h"
#include "engine/rules/rule_document.h"
#include "engine/rules/rule_set.h"

namespace ff {
namespace {

const std::string kCatalogCsv =
    std::string(FF_SOURCE_DIR) + "/docs/reference/nvidia-xid-catalog.csv";
const std::string kXidYaml = std::string(FF_SOURCE_DIR) + "/rules/xid_catalog.yaml";

// Codes xid_catalog.yaml may hold although the catalog does not list them,
// each with the NVIDIA source it comes from. Empty: every entry today is a
// catalog code.
const std::set<int> kCodesFromOtherNvidiaSources = {};

struct CatalogRow {
  int code = 0;
  std::string mnemonic, description, immediate_action, investigatory_action;
};

std::string all_errors(const std::vector<RuleError>& errors) {
  std::string s;
  for (const auto& e : errors) s += e.to_string() + "\n";
  return s;
}

// RFC 4180 records (quoted fields may hold commas, "" and line breaks);
// lines starting with '#' outside a record are comments.
std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, at_record_start = true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (at_record_start && c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    at_record_start = false;
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(field);
      field.clear();
    } else if (c == '\n') {
      if (!field.empty() && field.back() == '\r') field.pop_back();
      record.push_back(field);
      field.clear();
      records.push_back(record);
      record.clear();
      at_record_start = true;
    } else {
      field += c;
    }
  }
  if (!field.empty() || !record.empty()) {
    record.push_back(field);
    records.push_back(record);
  }
  return records;
}

std::map<int, CatalogRow> read_catalog() {
  std::map<int, CatalogRow> rows;
  auto records = read_csv(kCatalogCsv);
  if (records.empty()) {
    ADD_FAILURE() << "cannot read " << kCatalogCsv;
    return rows;
  }
  const auto& header = records[0];
  auto column = [&](const std::string& name) -> std::size_t {
    auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) ADD_FAILURE() << kCatalogCsv << " has no column '" << name << "'";
    return static_cast<std::size_t>(it - header.begin());
  };
  std::size_t code = column("code"), mnemonic = column("mnemonic"),
              description = column("description"), immediate = column("immediate_action"),
              investigatory = column("investigatory_action");
  for (std::size_t i = 1; i < records.size(); ++i) {
    const auto& r = records[i];
    if (r.size() != header.size()) {
      ADD_FAILURE() << kCatalogCsv << " record " << i << " has " << r.size() << " fields, not "
                    << header.size();
      continue;
    }
    CatalogRow row;
    row.code = std::stoi(r[code]);
    row.mnemonic = r[mnemonic];
    row.description = r[description];
    row.immediate_action = r[immediate];
    row.investigatory_action = r[investigatory];
    EXPECT_FALSE(rows.count(row.code)) << "Xid " << row.code << " twice in " << kCatalogCsv;
    rows[row.code] = row;
  }
  return rows;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// A name is NVIDIA's when it is the catalog's Description, perhaps with a
// qualifier in parentheses after it or cut at a clause boundary ("," or
// " --"), or when it names the catalog's Mnemonic (for "Unused" and other
// descriptions that are not a title).
bool name_matches(const std::string& name, const CatalogRow& row) {
  const std::string& d = row.description;
  if (name == d || starts_with(name, d + " (")) return true;
  if (!name.empty() && starts_with(d, name) &&
      (starts_with(d.substr(name.size()), ",") || starts_with(d.substr(name.size()), " --")))
    return true;
  for (std::size_t a = 0, b; a <= row.mnemonic.size(); a = b + 3) {  // "A / B": either
    b = row.mnemonic.find(" / ", a);
    if (b == std::string::npos) b = row.mnemonic.size();
    if (b > a && name.find(row.mnemonic.substr(a, b - a)) != std::string::npos) return true;
  }
  return false;
}

TEST(XidCatalog, CatalogCopyIsReadable) {
  auto catalog = read_catalog();
  ASSERT_FALSE(catalog.empty());
  // NVIDIA numbers the catalog's codes from 1 without gaps.
  EXPECT_EQ(catalog.begin()->first, 1);
  EXPECT_EQ(catalog.rbegin()->first, static_cast<int>(catalog.size()));
  for (const auto& [code, row] : catalog) {
    EXPECT_FALSE(row.mnemonic.empty()) << "Xid " << code;
    EXPECT_FALSE(row.description.empty()) << "Xid " << code;
  }
}

TEST(XidCatalog, EveryCatalogXidHasABuiltinEntryWithNvidiasActions) {
  auto catalog = read_catalog();
  std::vector<RuleError> errors;
  RuleSet builtin = collect_rules(true, {}, errors);
  auto compiled = compile_rules(builtin, errors);
  // Errors of the other built-in files are Rules.BuiltinRulesCompileWithoutErrors's.
  std::vector<RuleError> xid_errors;
  for (const auto& e : errors)
    if (e.where.file.find("xid_catalog.yaml") != std::string::npos) xid_errors.push_back(e);
  ASSERT_TRUE(xid_errors.empty()) << all_errors(xid_errors);
  for (const auto& [code, row] : catalog) {
    auto it = builtin.xids.find(code);
    if (it == builtin.xids.end()) {
      ADD_FAILURE() << "Xid " << code << " (" << row.mnemonic
                    << ") has no entry in the built-in rules";
      continue;
    }
    const XidRule& x = it->second;
    EXPECT_EQ(x.immediate_action, row.immediate_action) << "Xid " << code;
    EXPECT_EQ(x.investigatory_action, row.investigatory_action) << "Xid " << code;
    bool known = false;
    compiled->xid(code, &known);
    EXPECT_TRUE(known) << "Xid " << code << " did not compile";
  }
}

TEST(XidCatalog, EveryXidCatalogYamlEntryIsACatalogXidWithItsName) {
  auto catalog = read_catalog();
  std::vector<RuleError> errors;
  RuleDocument doc = read_rule_file(kXidYaml, errors);
  ASSERT_TRUE(errors.empty()) << all_errors(errors);
  ASSERT_FALSE(doc.xids.empty());
  std::set<int> seen;
  for (const auto& x : doc.xids) {
    EXPECT_TRUE(seen.insert(x.code).second) << "Xid " << x.code << " twice in " << kXidYaml;
    auto it = catalog.find(x.code);
    if (it == catalog.end()) {
      EXPECT_TRUE(kCodesFromOtherNvidiaSources.count(x.code))
          << "Xid " << x.code << " is neither in the catalog nor in kCodesFromOtherNvidiaSources";
      continue;
    }
    EXPECT_TRUE(name_matches(x.name, it->second))
        << "Xid " << x.code << " is named '" << x.name << "'; the catalog says '"
        << it->second.description << "' (" << it->second.mnemonic << ")";
  }
}

}  // namespace
}  // namespace ff
