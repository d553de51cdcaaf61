// Unit tests for rule loading: read (rule_document) → collect (rule_set) →
// compile (compiled_rules), with errors that name file, line and rule.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/extract/event_extractor.h"
#include "engine/rules/builtin_rules.h"
#include "engine/rules/compiled_rules.h"
#include "engine/rules/rule_document.h"
#include "engine/rules/rule_set.h"
#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace ff {
namespace {

namespace fs = std::filesystem;

std::string all_errors(const std::vector<RuleError>& errors) {
  std::string s;
  for (const auto& e : errors) s += e.to_string() + "\n";
  return s;
}

// A collector holding the built-in files, as collect_rules() would.
RuleCollector builtin_collector(std::vector<RuleError>& errors) {
  RuleCollector c;
  for (const auto& f : builtin_rule_files())
    c.add(read_rule_text(std::string("builtin:") + f.name, f.text, errors));
  return c;
}

// Built-ins plus one extra document; returns the compiled rules.
std::shared_ptr<const CompiledRules> compile_with(const std::string& name, const std::string& yaml,
                                                  std::vector<RuleError>& errors) {
  RuleCollector c = builtin_collector(errors);
  c.add(read_rule_text(name, yaml, errors));
  return compile_rules(c.collected(), errors);
}

const RuleError* find_error(const std::vector<RuleError>& errors, const std::string& needle) {
  for (const auto& e : errors)
    if (e.message.find(needle) != std::string::npos) return &e;
  return nullptr;
}

const CompiledPattern* find_pattern(const CompiledRules& r, const std::string& name) {
  for (const auto& p : r.patterns)
    if (p.rule.name == name) return &p;
  return nullptr;
}

// --- built-in rules ---------------------------------------------------------

TEST(Rules, BuiltinRulesCompileWithoutErrors) {
  std::vector<RuleError> errors;
  auto rules = load_rules(true, {}, errors);
  ASSERT_NE(rules, nullptr);
  EXPECT_TRUE(errors.empty()) << all_errors(errors);
  EXPECT_GE(rules->patterns.size(), 50u);
  EXPECT_NE(find_pattern(*rules, "nvrm.xid"), nullptr);
  ASSERT_NE(rules->kind("xid"), nullptr);
  EXPECT_EQ(rules->kind("xid")->role, Role::kFault);
  ASSERT_NE(rules->kind("nccl.timeout"), nullptr);
  EXPECT_EQ(rules->kind("nccl.timeout")->role, Role::kSymptom);
  EXPECT_EQ(rules->kind("no.such.kind"), nullptr);
}

TEST(Rules, BuiltinKindsCarryTheirMeaning) {
  std::vector<RuleError> errors;
  auto rules = load_rules(true, {}, errors);
  const KindInfo* k = rules->kind("slurm.time_limit");
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->job_scope);
  EXPECT_EQ(k->meaning.domain, "scheduler");
  EXPECT_EQ(k->meaning.action, "increase_time_limit");
  EXPECT_EQ(k->meaning.strength, Strength::kStrong);
  const KindInfo* nr = rules->kind("slurm.node_not_responding");
  ASSERT_NE(nr, nullptr);
  EXPECT_DOUBLE_EQ(nr->detection_lag_s, 600);
  EXPECT_FALSE(nr->job_scope);
}

TEST(Rules, BuiltinSettingsAreTheDocumentedDefaults) {
  std::vector<RuleError> errors;
  auto rules = load_rules(true, {}, errors);
  EXPECT_DOUBLE_EQ(rules->settings.window_before_start_s, 300);
  EXPECT_DOUBLE_EQ(rules->settings.burst_gap_s, 60);
  EXPECT_DOUBLE_EQ(rules->settings.survived_fault_s, 1800);
}

TEST(Rules, BuiltinPrefilterExistsPerSourceKind) {
  std::vector<RuleError> errors;
  auto rules = load_rules(true, {}, errors);
  for (unsigned bit : {kSrcKernel, kSrcSyslog, kSrcApp, kSrcSlurmctld})
    EXPECT_NE(rules->prefilter(bit), nullptr) << bit;
  auto kernel_literals = rules->literals(kSrcKernel);
  EXPECT_NE(std::find(kernel_literals.begin(), kernel_literals.end(), "NVRM: Xid"),
            kernel_literals.end());
  auto ctld_literals = rules->literals(kSrcSlurmctld);
  EXPECT_EQ(std::find(ctld_literals.begin(), ctld_literals.end(), "NVRM: Xid"),
            ctld_literals.end());
}

TEST(Rules, SourceKindBits) {
  EXPECT_EQ(source_kind_bit("kernel"), kSrcKernel);
  EXPECT_EQ(source_kind_bit("slurmctld"), kSrcSlurmctld);
  EXPECT_EQ(source_kind_bit("any"), kSrcAny);
  EXPECT_EQ(source_kind_bit("bogus"), 0u);
}

// --- reading ----------------------------------------------------------------

TEST(Rules, BadYamlReportsFileAndLine) {
  std::vector<RuleError> errors;
  RuleDocument doc = read_rule_text("bad.yaml",
                                    "patterns:\n"
                                    "  - name: a\n"
                                    "    kind: xid: oops\n"
                                    "    regex: 'x'\n",
                                    errors);
  ASSERT_EQ(errors.size(), 1u) << all_errors(errors);
  EXPECT_EQ(errors[0].where.file, "bad.yaml");
  EXPECT_EQ(errors[0].where.line, 3);
  EXPECT_EQ(errors[0].rule, "");
  EXPECT_NE(errors[0].message.find("YAML syntax error"), std::string::npos) << errors[0].message;
  EXPECT_TRUE(doc.patterns.empty());
}

TEST(Rules, TabIndentationReportsItsLine) {
  std::vector<RuleError> errors;
  read_rule_text("tab.yaml", "patterns:\n  - name: a\n\tkind: xid\n", errors);
  ASSERT_EQ(errors.size(), 1u) << all_errors(errors);
  EXPECT_EQ(errors[0].where.file, "tab.yaml");
  EXPECT_EQ(errors[0].where.line, 3);
}

TEST(Rules, UnterminatedQuoteIsAYamlError) {
  std::vector<RuleError> errors;
  read_rule_text("quote.yaml", "patterns:\n  - name: a\n    regex: 'x\n", errors);
  ASSERT_EQ(errors.size(), 1u) << all_errors(errors);
  EXPECT_EQ(errors[0].where.file, "quote.yaml");
  // yaml-cpp marks the enclosing block, not the quote itself: only check
  // that a real line of the file is named.
  EXPECT_GE(errors[0].where.line, 1);
  EXPECT_LE(errors[0].where.line, 4);
}

TEST(Rules, UnknownPatternKeyNamesFileLineAndRule) {
  std::vector<RuleError> errors;
  RuleDocument doc = read_rule_text("typo.yaml",
                                    "patterns:\n"
                                    "  - name: my.rule\n"
                                    "    kind: xid\n"
                                    "    literals: [\"x\"]\n"
                                    "    regexp: 'x'\n",
                                    errors);
  const RuleError* e = find_error(errors, "unknown key 'regexp'");
  ASSERT_NE(e, nullptr) << all_errors(errors);
  EXPECT_EQ(e->where.file, "typo.yaml");
  EXPECT_EQ(e->where.line, 5);
  EXPECT_EQ(e->rule, "my.rule");
  EXPECT_EQ(e->to_string(), "typo.yaml:5: rule 'my.rule': unknown key 'regexp'");
  // and the missing regex is reported too
  const RuleError* missing = find_error(errors, "missing 'regex'");
  ASSERT_NE(missing, nullptr) << all_errors(errors);
  EXPECT_EQ(missing->rule, "my.rule");
}

TEST(Rules, UnknownTopLevelKeyIsAnError) {
  std::vector<RuleError> errors;
  read_rule_text("top.yaml", "pattern:\n  - name: x\n", errors);
  const RuleError* e = find_error(errors, "unknown key 'pattern'");
  ASSERT_NE(e, nullptr) << all_errors(errors);
  EXPECT_EQ(e->where.line, 1);
}

TEST(Rules, UnknownKindKeyIsAnError) {
  std::vector<RuleError> errors;
  read_rule_text("k.yaml", "kinds:\n  - {kind: a.b, role: info, labels: \"x\"}\n", errors);
  const RuleError* e = find_error(errors, "unknown key 'labels'");
  ASSERT_NE(e, nullptr) << all_errors(errors);
  EXPECT_EQ(e->rule, "a.b");
  EXPECT_EQ(e->where.line, 2);
}

TEST(Rules, PatternFieldsAreRead) {
  std::vector<RuleError> errors;
  RuleDocument doc = read_rule_text("p.yaml",
                                    "# comment\n"
                                    "patterns:\n"
                                    "  - name: my.rule\n"
                                    "    kind: xid\n"
                                    "    sources: kernel\n"
                                    "    literals: [\"a\", \"b\"]\n"
                                    "    regex: 'a(?P<x>b)'\n"
                                    "    group: g\n"
                                    "    enabled: false\n",
                                    errors);
  EXPECT_TRUE(errors.empty()) << all_errors(errors);
  ASSERT_EQ(doc.patterns.size(), 1u);
  const PatternRule& p = doc.patterns[0];
  EXPECT_EQ(p.name, "my.rule");
  EXPECT_EQ(p.sources, std::vector<std::string>{"kernel"});
  EXPECT_EQ(p.literals, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p.regex, "a(?P<x>b)");
  EXPECT_EQ(p.group, "g");
  EXPECT_FALSE(p.enabled);
  EXPECT_EQ(p.where.file, "p.yaml");
  EXPECT_EQ(p.where.line, 3);
}

TEST(Rules, MissingRuleFileIsAnError) {
  std::vector<RuleError> errors;
  read_rule_file("/nonexistent/dir/rules.yaml", errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where.file, "/nonexistent/dir/rules.yaml");
}

// --- compiling --------------------------------------------------------------

TEST(Rules, RegexThatDoesNotCompileNamesRuleAndLine) {
  std::vector<RuleError> errors;
  auto rules = compile_with("extra.yaml",
                            "patterns:\n"
                            "  - name: broken.regex\n"
                            "    kind: xid\n"
                            "    literals: [\"Xid\"]\n"
                            "    regex: 'Xid (unclosed'\n",
                            errors);
  ASSERT_EQ(errors.size(), 1u) << all_errors(errors);
  EXPECT_EQ(errors[0].rule, "broken.regex");
  EXPECT_EQ(errors[0].where.file, "extra.yaml");
  EXPECT_EQ(errors[0].where.line, 2);
  EXPECT_NE(errors[0].message.find("regex does not compile"), std::string::npos);
  EXPECT_EQ(find_pattern(*rules, "broken.regex"), nullptr);
  EXPECT_NE(find_pattern(*rules, "nvrm.xid"), nullptr);  // the rest still compiles
}

TEST(Rules, UndeclaredKindNamesRuleAndLine) {
  std::vector<RuleError> errors;
  auto rules = compile_with("extra.yaml",
                            "patterns:\n"
                            "  - name: first.ok\n"
                            "    kind: xid\n"
                            "    literals: [\"a\"]\n"
                            "    regex: 'a'\n"
                            "  - name: bad.kind\n"
                            "    kind: gpu.melted\n"
                            "    literals: [\"melted\"]\n"
                            "    regex: 'melted'\n",
                            errors);
  ASSERT_EQ(errors.size(), 1u) << all_errors(errors);
  EXPECT_EQ(errors[0].rule, "bad.kind");
  EXPECT_EQ(errors[0].where.line, 6);
  EXPECT_NE(errors[0].message.find("gpu.melted"), std::string::npos);
  EXPECT_NE(find_pattern(*rules, "first.ok"), nullptr);
  EXPECT_EQ(find_pattern(*rules, "bad.kind"), nullptr);
}

TEST(Rules, PatternWithoutLiteralsNamesRuleAndLine) {
  std::vector<RuleError> errors;
  auto rules = compile_with("extra.yaml",
                            "patterns:\n"
                            "  - name: no.literals\n"
                            "    kind: xid\n"
                            "    regex: 'anything'\n",
                            errors);
  ASSERT_EQ(errors.size(), 1u) << all_errors(errors);
  EXPECT_EQ(errors[0].rule, "no.literals");
  EXPECT_EQ(errors[0].where.line, 2);
  EXPECT_NE(errors[0].message.find("literal"), std::string::npos);
  EXPECT_EQ(find_pattern(*rules, "no.literals"), nullptr);
}

TEST(Rules, EmptyLiteralIsAnError) {
  std::vector<RuleError> errors;
  compile_with("extra.yaml",
               "patterns:\n"
               "  - {name: empty.lit, kind: xid, literals: [\"\"], regex: 'x'}\n",
               errors);
  ASSERT_EQ(errors.size(), 1u) << all_errors(errors);
  EXPECT_EQ(errors[0].rule, "empty.lit");
  EXPECT_NE(errors[0].message.find("empty literal"), std::string::npos);
}

TEST(Rules, UnknownSourceIsAnError) {
  std::vector<RuleError> errors;
  compile_with("extra.yaml",
               "patterns:\n"
               "  - {name: bad.src, kind: xid, sources: [kernal], literals: [\"x\"], regex: 'x'}\n",
               errors);
  const RuleError* e = find_error(errors, "unknown source 'kernal'");
  ASSERT_NE(e, nullptr) << all_errors(errors);
  EXPECT_EQ(e->rule, "bad.src");
  EXPECT_EQ(e->where.line, 2);
}

TEST(Rules, BadKindVocabularyIsAnError) {
  std::vector<RuleError> errors;
  compile_with("kinds.yaml",
               "kinds:\n"
               "  - {kind: a.fault, role: fault, strength: huge, domain: gpu, sub_domain: "
               "gpu.x, action: drain_node}\n"
               "  - {kind: b.fault, role: fault, strength: strong, domain: gpu, sub_domain: "
               "host.x, action: drain_node}\n"
               "  - {kind: c.thing, role: culprit}\n",
               errors);
  const RuleError* s = find_error(errors, "strength must be");
  ASSERT_NE(s, nullptr) << all_errors(errors);
  EXPECT_EQ(s->rule, "a.fault");
  EXPECT_EQ(s->where.line, 2);
  const RuleError* sd = find_error(errors, "sub_domain 'host.x'");
  ASSERT_NE(sd, nullptr) << all_errors(errors);
  EXPECT_EQ(sd->rule, "b.fault");
  const RuleError* r = find_error(errors, "role must be");
  ASSERT_NE(r, nullptr) << all_errors(errors);
  EXPECT_EQ(r->rule, "c.thing");
  EXPECT_EQ(r->where.line, 4);
}

TEST(Rules, DisabledPatternIsNotCompiled) {
  std::vector<RuleError> errors;
  auto rules = compile_with("off.yaml",
                            "patterns:\n"
                            "  - {name: nvrm.xid, kind: xid, literals: [\"NVRM: Xid\"], regex: "
                            "'NVRM: Xid', enabled: false}\n",
                            errors);
  EXPECT_TRUE(errors.empty()) << all_errors(errors);
  EXPECT_EQ(find_pattern(*rules, "nvrm.xid"), nullptr);
}

// --- collecting: replace and extend ----------------------------------------

TEST(Rules, SameNameReplacesEarlierPatternInPlace) {
  std::vector<RuleError> base_errors;
  auto base = load_rules(true, {}, base_errors);
  std::size_t index = 0;
  while (base->patterns[index].rule.name != "nvrm.xid") ++index;

  std::vector<RuleError> errors;
  auto rules = compile_with("override.yaml",
                            "patterns:\n"
                            "  - name: nvrm.xid\n"
                            "    kind: gpu.fallen_off_bus\n"
                            "    sources: [kernel]\n"
                            "    literals: [\"NVRM: Xid\"]\n"
                            "    regex: 'NVRM: Xid \\((?P<pci>[^)]*)\\): (?P<code>\\d+)'\n",
                            errors);
  EXPECT_TRUE(errors.empty()) << all_errors(errors);
  ASSERT_EQ(rules->patterns.size(), base->patterns.size());
  EXPECT_EQ(rules->patterns[index].rule.name, "nvrm.xid");
  EXPECT_EQ(rules->patterns[index].rule.kind, "gpu.fallen_off_bus");
  EXPECT_EQ(rules->patterns[index].rule.where.file, "override.yaml");

  EventExtractor x(*rules);
  auto events = x.extract_line("NVRM: Xid (PCI:0000:5d:00): 79, x", {"k", "k", "n", "kernel"}, {});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "gpu.fallen_off_bus");
  EXPECT_EQ(events[0].field("pci"), "PCI:0000:5d:00");
  EXPECT_EQ(events[0].field("detail"), "");  // the old regex's capture is gone
}

TEST(Rules, NewNameExtendsThePatterns) {
  std::vector<RuleError> base_errors;
  auto base = load_rules(true, {}, base_errors);
  std::vector<RuleError> errors;
  auto rules = compile_with("extend.yaml",
                            "kinds:\n"
                            "  - {kind: site.fan_failure, role: fault, strength: medium, domain: "
                            "host, sub_domain: host.fan, action: drain_node, label: \"fan\"}\n"
                            "patterns:\n"
                            "  - name: site.fan\n"
                            "    kind: site.fan_failure\n"
                            "    sources: [syslog]\n"
                            "    literals: [\"fan failure\"]\n"
                            "    regex: 'fan failure on (?P<fan>\\w+)'\n",
                            errors);
  EXPECT_TRUE(errors.empty()) << all_errors(errors);
  ASSERT_EQ(rules->patterns.size(), base->patterns.size() + 1);
  EXPECT_EQ(rules->patterns.back().rule.name, "site.fan");
  ASSERT_NE(rules->kind("site.fan_failure"), nullptr);
  EXPECT_EQ(rules->kind("site.fan_failure")->meaning.cause, "hardware");

  EventExtractor x(*rules);
  auto events = x.extract_line("Nov  2 10:41:07 n1 ipmi: fan failure on FAN3",
                               {"s", "s", "n1", "syslog"}, {});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "site.fan_failure");
  EXPECT_EQ(events[0].field("fan"), "FAN3");
}

TEST(Rules, RulesDirectoryIsReadInNameOrder) {
  ff::test_support::ScratchDirectory dir{"rules"};
  ff::test_support::write_file(dir / "10-a.yaml", "settings: {burst_gap_s: 5}\n");
  ff::test_support::write_file(dir / "20-b.yml", "settings: {burst_gap_s: 7, max_evidence: 50}\n");
  ff::test_support::write_file(dir / "README.txt",
                               "settings: {burst_gap_s: 999}\n");  // not a rule file
  std::vector<RuleError> errors;
  auto rules = load_rules(true, {dir.path().string()}, errors);
  EXPECT_TRUE(errors.empty()) << all_errors(errors);
  EXPECT_DOUBLE_EQ(rules->settings.burst_gap_s, 7);
  EXPECT_DOUBLE_EQ(rules->settings.max_evidence, 50);
  EXPECT_DOUBLE_EQ(rules->settings.window_before_start_s, 300);
}

TEST(Rules, MissingRulesDirectoryIsAnError) {
  std::vector<RuleError> errors;
  load_rules(true, {"/nonexistent/ff-rules-dir"}, errors);
  ASSERT_EQ(errors.size(), 1u) << all_errors(errors);
  EXPECT_EQ(errors[0].where.file, "/nonexistent/ff-rules-dir");
}

// --- Xid catalog ------------------------------------------------------------

TEST(Rules, KnownXidHasCatalogMeaning) {
  std::vector<RuleError> errors;
  auto rules = load_rules(true, {}, errors);
  bool known = false;
  Meaning m = rules->xid(79, &known);
  EXPECT_TRUE(known);
  EXPECT_EQ(m.cause, "hardware");
  EXPECT_EQ(m.strength, Strength::kStrong);
  EXPECT_EQ(m.sub_domain, "gpu.fallen_off_bus");
  EXPECT_EQ(m.action, "drain_node");
  Meaning m147 = rules->xid(147, &known);
  EXPECT_TRUE(known);
  EXPECT_EQ(m147.domain, "gpu_fabric");
}

TEST(Rules, UnknownXidTakesItsFamily) {
  std::vector<RuleError> errors;
  RuleCollector c = builtin_collector(errors);
  // A site file with a family for codes past the end of NVIDIA's catalog (1-172).
  c.add(read_rule_text("site.yaml",
                       "families:\n"
                       "  - {from: 173, to: 179, cause: hardware, strength: medium, domain: "
                       "gpu_fabric, sub_domain: gpu_fabric.nvlink_error, action: check_fabric}\n",
                       errors));
  auto rules = compile_rules(c.collected(), errors);
  EXPECT_TRUE(errors.empty()) << all_errors(errors);
  bool known = true;
  Meaning m = rules->xid(175, &known);
  EXPECT_FALSE(known);
  EXPECT_EQ(m.domain, "gpu_fabric");
  EXPECT_EQ(m.sub_domain, "gpu_fabric.nvlink_error");
  EXPECT_EQ(m.cause, "hardware");
  EXPECT_EQ(m.strength, Strength::kMedium);
  EXPECT_EQ(m.name, "Xid 175 (not in the catalog)");
}

TEST(Rules, UnknownXidFamilyWithoutCatalogEntry) {
  std::vector<RuleError> errors;
  RuleCollector c;
  c.add(read_rule_text("only-families.yaml",
                       "families:\n"
                       "  - {from: 144, to: 150, cause: hardware, strength: medium, domain: "
                       "gpu_fabric, sub_domain: gpu_fabric.nvlink_error, action: check_fabric}\n",
                       errors));
  auto rules = compile_rules(c.collected(), errors);
  EXPECT_TRUE(errors.empty()) << all_errors(errors);
  bool known = true;
  Meaning m = rules->xid(147, &known);
  EXPECT_FALSE(known);
  EXPECT_EQ(m.domain, "gpu_fabric");
  EXPECT_EQ(m.action, "check_fabric");
  // outside every family: unknown, weak
  Meaning u = rules->xid(151, &known);
  EXPECT_FALSE(known);
  EXPECT_EQ(u.cause, "unknown");
  EXPECT_EQ(u.strength, Strength::kWeak);
}

TEST(Rules, BuiltinUnknownXidIsUnknownAndWeak) {
  std::vector<RuleError> errors;
  auto rules = load_rules(true, {}, errors);
  bool known = true;
  Meaning m = rules->xid(500, &known);  // in the catch-all family 1-999
  EXPECT_FALSE(known);
  EXPECT_EQ(m.cause, "unknown");
  EXPECT_EQ(m.strength, Strength::kWeak);
  EXPECT_EQ(m.sub_domain, "gpu.unknown_xid");
  Meaning outside = rules->xid(4000, &known);  // outside every family
  EXPECT_FALSE(known);
  EXPECT_EQ(outside.cause, "unknown");
  EXPECT_EQ(outside.strength, Strength::kWeak);
  EXPECT_EQ(outside.name, "Xid 4000 (not in the catalog)");
}

TEST(Rules, LaterDocumentFamiliesTakePrecedence) {
  std::vector<RuleError> errors;
  auto rules = compile_with("site.yaml",
                            "families:\n"
                            "  - {from: 500, to: 510, cause: driver, strength: medium, domain: "
                            "gpu, sub_domain: gpu.site_driver, action: reset_gpu}\n",
                            errors);
  EXPECT_TRUE(errors.empty()) << all_errors(errors);
  EXPECT_EQ(rules->xid(505).cause, "driver");
  EXPECT_EQ(rules->xid(600).cause, "unknown");
}

TEST(Rules, LaterXidEntryReplacesCatalogEntry) {
  std::vector<RuleError> errors;
  auto rules = compile_with("site.yaml",
                            "xids:\n"
                            "  - {code: 79, name: \"site says\", cause: driver, strength: weak, "
                            "domain: gpu, sub_domain: gpu.site, action: investigate}\n",
                            errors);
  EXPECT_TRUE(errors.empty()) << all_errors(errors);
  Meaning m = rules->xid(79);
  EXPECT_EQ(m.name, "site says");
  EXPECT_EQ(m.cause, "driver");
  EXPECT_EQ(m.strength, Strength::kWeak);
}

TEST(Rules, XidWithUnknownCauseIsAnError) {
  std::vector<RuleError> errors;
  compile_with("site.yaml",
               "xids:\n"
               "  - {code: 999, name: x, cause: cosmic_rays, strength: weak, domain: gpu, "
               "sub_domain: gpu.x, action: investigate}\n",
               errors);
  const RuleError* e = find_error(errors, "unknown cause 'cosmic_rays'");
  ASSERT_NE(e, nullptr) << all_errors(errors);
  EXPECT_EQ(e->rule, "Xid 999");
  EXPECT_EQ(e->where.file, "site.yaml");
  EXPECT_EQ(e->where.line, 2);
}

TEST(Rules, SxidMeaningAndDefault) {
  std::vector<RuleError> errors;
  auto rules = load_rules(true, {}, errors);
  EXPECT_EQ(rules->sxid(20034).sub_domain, "gpu_fabric.nvlink_down");
  EXPECT_EQ(rules->sxid(20034).strength, Strength::kStrong);
  Meaning d = rules->sxid(31337);
  EXPECT_EQ(d.name, "SXid 31337");
  EXPECT_EQ(d.sub_domain, "gpu_fabric.nvswitch_error");
  EXPECT_EQ(d.strength, Strength::kMedium);
}

// --- settings ---------------------------------------------------------------

TEST(Rules, SettingOverride) {
  std::vector<RuleError> errors;
  auto rules = compile_with("s.yaml", "settings: {burst_gap_s: 5}\n", errors);
  EXPECT_TRUE(errors.empty()) << all_errors(errors);
  EXPECT_DOUBLE_EQ(rules->settings.burst_gap_s, 5);
  EXPECT_DOUBLE_EQ(rules->settings.same_fault_window_s, 120);  // untouched
}

TEST(Rules, UnknownSettingIsAnError) {
  std::vector<RuleError> errors;
  auto rules = compile_with("s.yaml",
                            "settings:\n"
                            "  burst_gap_s: 5\n"
                            "  burst_gap: 9\n",
                            errors);
  ASSERT_EQ(errors.size(), 1u) << all_errors(errors);
  EXPECT_EQ(errors[0].rule, "settings.burst_gap");
  EXPECT_EQ(errors[0].where.file, "s.yaml");
  EXPECT_EQ(errors[0].where.line, 3);
  EXPECT_NE(errors[0].message.find("unknown setting"), std::string::npos);
  EXPECT_DOUBLE_EQ(rules->settings.burst_gap_s, 5);
}

TEST(Rules, NegativeSettingIsAnError) {
  std::vector<RuleError> errors;
  auto rules = compile_with("s.yaml", "settings: {onset_tolerance_s: -1}\n", errors);
  ASSERT_EQ(errors.size(), 1u) << all_errors(errors);
  EXPECT_EQ(errors[0].rule, "settings.onset_tolerance_s");
  EXPECT_DOUBLE_EQ(rules->settings.onset_tolerance_s, 60);
}

TEST(Rules, NonNumericSettingIsAnError) {
  std::vector<RuleError> errors;
  read_rule_text("s.yaml", "settings:\n  burst_gap_s: soon\n", errors);
  ASSERT_EQ(errors.size(), 1u) << all_errors(errors);
  EXPECT_EQ(errors[0].rule, "settings.burst_gap_s");
  EXPECT_EQ(errors[0].where.line, 2);
}

}  // namespace
}  // namespace ff
