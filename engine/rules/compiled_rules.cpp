#include "engine/rules/compiled_rules.h"

#include <algorithm>
#include <set>

namespace ff {

unsigned source_kind_bit(const std::string& name) {
  static const std::map<std::string, unsigned> bits = {
      {"kernel", kSrcKernel},   {"syslog", kSrcSyslog}, {"fabricmanager", kSrcFabricManager},
      {"slurmd", kSrcSlurmd},   {"app", kSrcApp},       {"slurmctld", kSrcSlurmctld},
      {"cluster", kSrcCluster}, {"other", kSrcOther},   {"any", kSrcAny}};
  auto it = bits.find(name);
  return it == bits.end() ? 0 : it->second;
}

const KindInfo* CompiledRules::kind(const std::string& k) const {
  auto it = kinds.find(k);
  return it == kinds.end() ? nullptr : &it->second;
}

Meaning CompiledRules::xid(int code, bool* known) const {
  if (auto it = xids.find(code); it != xids.end()) {
    if (known) *known = true;
    return it->second;
  }
  if (known) *known = false;
  for (const auto& [range, m] : families)
    if (code >= range.first && code <= range.second) {
      Meaning out = m;
      out.name = "Xid " + std::to_string(code) + " (not in the catalog)";
      return out;
    }
  return Meaning{"Xid " + std::to_string(code) + " (not in the catalog)",
                 "unknown",
                 Strength::kWeak,
                 "gpu",
                 "gpu.unknown_xid",
                 "investigate"};
}

Meaning CompiledRules::sxid(int code) const {
  if (auto it = sxids.find(code); it != sxids.end()) return it->second;
  Meaning m = sxid_default;
  m.name = "SXid " + std::to_string(code);
  return m;
}

const RE2* CompiledRules::prefilter(unsigned source_bit) const {
  auto it = prefilters_.find(source_bit);
  return it == prefilters_.end() ? nullptr : it->second.get();
}

std::vector<std::string> CompiledRules::literals(unsigned source_mask) const {
  std::set<std::string> out;
  for (const auto& p : patterns)
    if (p.source_mask & source_mask)
      for (const auto& l : p.rule.literals) out.insert(l);
  return {out.begin(), out.end()};
}

namespace {

const std::set<std::string> kDomains = {"gpu",     "gpu_fabric", "network",     "host",
                                        "storage", "scheduler",  "application", "unknown"};
const std::set<std::string> kActions = {
    "drain_node",  "reset_gpu",       "reboot_node",         "check_fabric", "check_network_link",
    "restart_job", "fix_application", "increase_time_limit", "investigate",  "none"};
const std::set<std::string> kCauses = {"hardware",    "application",   "driver",
                                       "consequence", "informational", "unknown"};

bool parse_strength(const std::string& s, Strength& out) {
  if (s == "strong")
    out = Strength::kStrong;
  else if (s == "medium")
    out = Strength::kMedium;
  else if (s == "weak")
    out = Strength::kWeak;
  else
    return false;
  return true;
}

// Validates the domain/sub_domain/action triple shared by kinds and Xids.
bool check_meaning(const std::string& rule, const RuleLocation& where, const std::string& strength,
                   const std::string& domain, const std::string& sub_domain,
                   const std::string& action, Meaning& out, std::vector<RuleError>& errors) {
  bool ok = true;
  if (!parse_strength(strength, out.strength)) {
    errors.push_back(
        {where, rule, "strength must be strong, medium or weak, not '" + strength + "'"});
    ok = false;
  }
  if (!kDomains.count(domain)) {
    errors.push_back({where, rule, "unknown domain '" + domain + "'"});
    ok = false;
  }
  if (sub_domain.rfind(domain + ".", 0) != 0) {
    errors.push_back(
        {where, rule, "sub_domain '" + sub_domain + "' must start with '" + domain + ".'"});
    ok = false;
  }
  if (!kActions.count(action)) {
    errors.push_back({where, rule, "unknown action '" + action + "'"});
    ok = false;
  }
  out.domain = domain;
  out.sub_domain = sub_domain;
  out.action = action;
  return ok;
}

bool compile_xid(const std::string& rule, const XidRule& x, Meaning& m,
                 std::vector<RuleError>& errors) {
  m.name = x.name;
  m.cause = x.cause;
  bool ok = check_meaning(rule, x.where, x.strength, x.domain, x.sub_domain, x.action, m, errors);
  if (!kCauses.count(x.cause)) {
    errors.push_back({x.where, rule, "unknown cause '" + x.cause + "'"});
    ok = false;
  }
  return ok;
}

std::string escape_literal(const std::string& s) {
  return RE2::QuoteMeta(s);
}

void compile_metric_conditions(const RuleSet& set, CompiledRules& out,
                               std::vector<RuleError>& errors) {
  static const std::map<std::string, MetricConditionType> types = {
      {"increase", MetricConditionType::kIncrease},
      {"threshold", MetricConditionType::kThreshold},
      {"change", MetricConditionType::kChange},
      {"absent", MetricConditionType::kAbsent}};
  out.metric_node_labels = set.metric_node_labels;
  if (out.metric_node_labels.empty()) out.metric_node_labels = {"node", "instance"};
  for (const auto& m : set.metric_conditions) {
    if (!m.enabled || m.name.empty()) continue;  // an empty name is already reported
    auto err = [&](const std::string& msg) { errors.push_back({m.where, m.name, msg}); };
    MetricCondition c;
    c.name = m.name;
    c.where = m.where;
    auto t = types.find(m.condition);
    if (t == types.end()) {
      err("condition must be increase, threshold, change or absent, not '" + m.condition + "'");
      continue;
    }
    c.type = t->second;
    if (!out.kinds.count(m.kind)) {
      err("kind '" + m.kind + "' is not declared in any kinds: list");
      continue;
    }
    if (m.queries.empty() && m.metrics.empty()) {
      err("needs 'queries' or 'metrics' (or both): which series it applies to");
      continue;
    }
    bool needs_bound = c.type == MetricConditionType::kThreshold;
    if (needs_bound && !m.above && !m.below) {
      err("a threshold needs 'above' or 'below'");
      continue;
    }
    if ((c.type == MetricConditionType::kIncrease || c.type == MetricConditionType::kAbsent) &&
        (m.above || m.below)) {
      err("'above'/'below' apply to threshold and change conditions only");
      continue;
    }
    if (m.min_increase && (c.type != MetricConditionType::kIncrease || *m.min_increase <= 0)) {
      err("'min_increase' must be positive and applies to increase conditions only");
      continue;
    }
    if (m.for_s && (c.type != MetricConditionType::kAbsent || *m.for_s <= 0)) {
      err("'for_s' must be positive and applies to absent conditions only");
      continue;
    }
    if (m.code_from_value && c.type != MetricConditionType::kChange &&
        c.type != MetricConditionType::kThreshold) {
      err("'code_from_value' applies to threshold and change conditions only");
      continue;
    }
    c.queries.insert(m.queries.begin(), m.queries.end());
    c.metrics.insert(m.metrics.begin(), m.metrics.end());
    c.kind = m.kind;
    c.above = m.above;
    c.below = m.below;
    if (m.min_increase) c.min_increase = *m.min_increase;
    c.for_s = m.for_s;
    c.fields = m.fields;
    c.code_from_value = m.code_from_value;
    out.metric_conditions.push_back(std::move(c));
  }
}

// Chains refer to declared kinds; "xid:79" to one code of a code-bearing kind.
void compile_chains(const RuleSet& set, CompiledRules& out, std::vector<RuleError>& errors) {
  for (const auto& ch : set.chains) {
    if (ch.name.empty()) continue;  // reported by the reader
    auto err = [&](const std::string& msg) { errors.push_back({ch.where, ch.name, msg}); };
    CompiledChain c;
    c.name = ch.name;
    c.why = ch.why;
    c.where = ch.where;
    c.max_gap_s = ch.max_gap_s;
    bool ok = true;
    auto side = [&](const std::vector<std::string>& in, std::vector<ChainKind>& to,
                    const char* what) {
      if (in.empty()) {
        err(std::string("needs at least one '") + what + "' kind");
        ok = false;
      }
      for (const auto& k : in) {
        ChainKind ck;
        ck.kind = k;
        if (auto colon = k.find(':'); colon != std::string::npos) {
          ck.kind = k.substr(0, colon);
          char* end = nullptr;
          long code = std::strtol(k.c_str() + colon + 1, &end, 10);
          if (!end || *end || code < 0) {
            err("'" + k + "': a code after ':' must be a number");
            ok = false;
            continue;
          }
          ck.code = static_cast<int>(code);
        }
        if (!out.kinds.count(ck.kind)) {
          err("kind '" + ck.kind + "' is not declared in any kinds: list");
          ok = false;
          continue;
        }
        to.push_back(ck);
      }
    };
    side(ch.upper, c.upper, "upper");
    side(ch.lower, c.lower, "lower");
    if (ch.same != "node" && ch.same != "device") {
      err("same must be node or device, not '" + ch.same + "'");
      ok = false;
    }
    c.same_device = ch.same == "device";
    if (ch.root != "lower" && ch.root != "upper") {
      err("root must be lower or upper, not '" + ch.root + "'");
      ok = false;
    }
    c.root_upper = ch.root == "upper";
    if (ch.max_gap_s < 0) {
      err("max_gap_s must not be negative");
      ok = false;
    }
    if (ok) out.chains.push_back(std::move(c));
  }
}

}  // namespace

std::shared_ptr<const CompiledRules> compile_rules(const RuleSet& set,
                                                   std::vector<RuleError>& errors) {
  auto out = std::make_shared<CompiledRules>();

  for (const auto& [name, k] : set.kinds) {
    KindInfo ki;
    ki.kind = k.kind;
    ki.label = k.label.empty() ? k.kind : k.label;
    ki.corroborates = k.corroborates;
    ki.detection_lag_s = k.detection_lag_s;
    ki.kernel_only = k.kernel_only;
    ki.shared_cause = k.shared_cause;
    ki.kernel_confirms = k.kernel_confirms;
    ki.blames_peer = k.blames == "peer";
    if (k.blames != "node" && k.blames != "peer")
      errors.push_back({k.where, k.kind, "blames must be node or peer, not '" + k.blames + "'"});
    ki.job_scope = k.scope == "job";
    if (k.scope != "job" && k.scope != "node")
      errors.push_back({k.where, k.kind, "scope must be node or job"});
    if (k.role == "fault")
      ki.role = Role::kFault;
    else if (k.role == "symptom")
      ki.role = Role::kSymptom;
    else if (k.role == "info")
      ki.role = Role::kInfo;
    else {
      errors.push_back(
          {k.where, k.kind, "role must be fault, symptom or info, not '" + k.role + "'"});
      continue;
    }
    // Xid and SXid faults take their meaning from the catalog.
    if (ki.role == Role::kFault && k.kind != "xid" && k.kind != "sxid") {
      if (!check_meaning(k.kind, k.where, k.strength, k.domain, k.sub_domain, k.action, ki.meaning,
                         errors))
        continue;
      ki.meaning.name = ki.label;
      ki.meaning.cause = k.domain == "application" ? "application"
                         : k.domain == "scheduler" ? "scheduler"
                                                   : "hardware";
    }
    out->kinds.emplace(name, std::move(ki));
  }

  for (const auto& [code, x] : set.xids) {
    Meaning m;
    if (compile_xid("Xid " + std::to_string(code), x, m, errors)) out->xids.emplace(code, m);
  }
  for (const auto& [code, x] : set.sxids) {
    Meaning m;
    if (compile_xid("SXid " + std::to_string(code), x, m, errors)) out->sxids.emplace(code, m);
  }
  for (const auto& f : set.families) {
    Meaning m;
    if (f.from > f.to)
      errors.push_back({f.meaning.where, "family", "'from' is after 'to'"});
    else if (compile_xid("family " + std::to_string(f.from) + "-" + std::to_string(f.to), f.meaning,
                         m, errors))
      out->families.push_back({{f.from, f.to}, m});
  }
  if (set.sxid_default)
    compile_xid("sxid_default", *set.sxid_default, out->sxid_default, errors);
  else
    out->sxid_default = Meaning{
        "SXid",        "hardware", Strength::kMedium, "gpu_fabric", "gpu_fabric.nvswitch_error",
        "check_fabric"};

  static const std::map<std::string, double Settings::*> setting_fields = {
      {"window_before_start_s", &Settings::window_before_start_s},
      {"window_after_end_s", &Settings::window_after_end_s},
      {"same_fault_window_s", &Settings::same_fault_window_s},
      {"onset_tolerance_s", &Settings::onset_tolerance_s},
      {"burst_gap_s", &Settings::burst_gap_s},
      {"survived_fault_s", &Settings::survived_fault_s},
      {"recurring_xid_min", &Settings::recurring_xid_min},
      {"max_events_per_key", &Settings::max_events_per_key},
      {"max_evidence", &Settings::max_evidence}};
  for (const auto& [key, v] : set.settings) {
    auto it = setting_fields.find(key);
    if (it == setting_fields.end())
      errors.push_back({v.second, "settings." + key, "unknown setting"});
    else if (v.first < 0)
      errors.push_back({v.second, "settings." + key, "must not be negative"});
    else
      out->settings.*(it->second) = v.first;
  }

  compile_metric_conditions(set, *out, errors);
  compile_chains(set, *out, errors);

  RE2::Options opts;
  opts.set_encoding(RE2::Options::EncodingLatin1);
  opts.set_log_errors(false);
  opts.set_max_mem(64 << 20);
  for (const auto& p : set.patterns) {
    if (!p.enabled) continue;
    const std::string& rule = p.name;
    if (rule.empty()) continue;  // already reported by the reader
    if (!out->kinds.count(p.kind)) {
      errors.push_back({p.where, rule, "kind '" + p.kind + "' is not declared in any kinds: list"});
      continue;
    }
    if (p.literals.empty()) {
      errors.push_back(
          {p.where, rule,
           "needs at least one literal (the prefilter only lets lines containing one through)"});
      continue;
    }
    if (std::any_of(p.literals.begin(), p.literals.end(),
                    [](const std::string& l) { return l.empty(); })) {
      errors.push_back({p.where, rule, "empty literal"});
      continue;
    }
    CompiledPattern cp;
    cp.rule = p;
    cp.re = std::make_unique<RE2>(p.regex, opts);
    if (!cp.re->ok()) {
      errors.push_back({p.where, rule, "regex does not compile: " + cp.re->error()});
      continue;
    }
    for (std::size_t i = 0; i < p.examples.size(); ++i) {
      const std::string& ex = p.examples[i];
      std::string which = "example " + std::to_string(i + 1) + " ('" + ex.substr(0, 60) + "')";
      if (std::none_of(p.literals.begin(), p.literals.end(),
                       [&](const std::string& l) { return ex.find(l) != std::string::npos; }))
        errors.push_back({p.where, rule, which + " contains none of the literals"});
      else if (!RE2::PartialMatch(ex, *cp.re))
        errors.push_back({p.where, rule, which + " does not match the regex"});
    }
    for (const auto& [name, idx] : cp.re->NamedCapturingGroups())
      cp.captures.push_back({name, idx});
    std::sort(cp.captures.begin(), cp.captures.end(),
              [](const auto& a, const auto& b) { return a.second < b.second; });
    if (!p.sources.empty()) {
      cp.source_mask = 0;
      for (const auto& s : p.sources) {
        unsigned bit = source_kind_bit(s);
        if (!bit) errors.push_back({p.where, rule, "unknown source '" + s + "'"});
        cp.source_mask |= bit;
      }
      if (!cp.source_mask) continue;
    }
    if (!p.group.empty()) {
      auto g = std::find(out->groups.begin(), out->groups.end(), p.group);
      cp.group_id = static_cast<int>(g - out->groups.begin());
      if (g == out->groups.end()) out->groups.push_back(p.group);
    }
    out->patterns.push_back(std::move(cp));
  }

  // One prefilter per source kind: RE2 matches the alternation of literals
  // in one pass over a whole buffer, so a non-matching line costs a few
  // DFA steps per byte and no per-line call.
  RE2::Options popts = opts;
  popts.set_never_capture(true);
  popts.set_max_mem(256 << 20);
  for (unsigned bit = 1; bit <= kSrcOther; bit <<= 1) {
    std::set<std::string> lits;
    for (const auto& p : out->patterns)
      if (p.source_mask & bit)
        for (const auto& l : p.rule.literals) lits.insert(l);
    if (lits.empty()) continue;
    std::string alt;
    for (const auto& l : lits) {
      if (!alt.empty()) alt += '|';
      alt += escape_literal(l);
    }
    auto re = std::make_unique<RE2>(alt, popts);
    if (re->ok())
      out->prefilters_.emplace(bit, std::move(re));
    else
      errors.push_back(
          make_rule_error("<prefilter>", 0, "", "prefilter does not compile: " + re->error()));
  }
  return out;
}

std::shared_ptr<const CompiledRules> load_rules(bool include_builtin,
                                                const std::vector<std::string>& dirs,
                                                std::vector<RuleError>& errors) {
  RuleSet set = collect_rules(include_builtin, dirs, errors);
  return compile_rules(set, errors);
}

}  // namespace ff
