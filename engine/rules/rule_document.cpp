#include "engine/rules/rule_document.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

namespace ff {

std::string RuleError::to_string() const {
  std::string s = where.file;
  if (where.line > 0) {
    s += ':';
    s += std::to_string(where.line);
  }
  if (!rule.empty()) {
    s += ": rule '";
    s += rule;
    s += '\'';
  }
  s += ": ";
  s += message;
  return s;
}

namespace {

const std::set<std::string> kMetricConditionKeys = {
    "name",         "condition", "queries", "metrics",         "kind",   "above", "below",
    "min_increase", "for_s",     "fields",  "code_from_value", "enabled"};

struct Reader {
  std::string file;
  std::vector<RuleError>& errors;

  RuleLocation at(const YAML::Node& n) const { return {file, n.Mark().line + 1}; }

  void error(const YAML::Node& n, const std::string& rule, const std::string& msg) {
    errors.push_back({at(n), rule, msg});
  }

  // Complains about keys that are not in `known` (a typo must not silently
  // disable part of a rule).
  void check_keys(const YAML::Node& n, const std::set<std::string>& known,
                  const std::string& rule) {
    for (const auto& kv : n) {
      std::string key = kv.first.as<std::string>("");
      if (!known.count(key)) error(kv.first, rule, "unknown key '" + key + "'");
    }
  }

  std::string str(const YAML::Node& n, const char* key, const std::string& rule, bool required) {
    YAML::Node v = n[key];
    if (!v) {
      if (required) error(n, rule, std::string("missing '") + key + "'");
      return "";
    }
    if (!v.IsScalar()) {
      error(v, rule, std::string("'") + key + "' must be a string");
      return "";
    }
    return v.as<std::string>();
  }

  std::vector<std::string> list(const YAML::Node& n, const char* key, const std::string& rule) {
    std::vector<std::string> out;
    YAML::Node v = n[key];
    if (!v) return out;
    if (v.IsScalar()) return {v.as<std::string>()};
    if (!v.IsSequence()) {
      error(v, rule, std::string("'") + key + "' must be a list of strings");
      return out;
    }
    for (const auto& e : v) {
      if (e.IsScalar())
        out.push_back(e.as<std::string>());
      else
        error(e, rule, std::string("'") + key + "' entries must be strings");
    }
    return out;
  }

  int integer(const YAML::Node& n, const char* key, const std::string& rule) {
    YAML::Node v = n[key];
    if (!v) {
      error(n, rule, std::string("missing '") + key + "'");
      return 0;
    }
    try {
      return v.as<int>();
    } catch (const YAML::Exception&) {
      error(v, rule, std::string("'") + key + "' must be an integer");
      return 0;
    }
  }

  std::optional<double> number(const YAML::Node& n, const char* key, const std::string& rule) {
    YAML::Node v = n[key];
    if (!v) return std::nullopt;
    try {
      if (v.IsScalar()) return v.as<double>();
    } catch (const YAML::Exception&) {
    }
    error(v, rule, std::string("'") + key + "' must be a number");
    return std::nullopt;
  }

  bool boolean(const YAML::Node& n, const char* key, const std::string& rule, bool fallback) {
    YAML::Node v = n[key];
    if (!v) return fallback;
    try {
      if (v.IsScalar()) return v.as<bool>();
    } catch (const YAML::Exception&) {
    }
    error(v, rule, std::string("'") + key + "' must be true or false");
    return fallback;
  }

  MetricConditionRule metric_condition(const YAML::Node& m) {
    MetricConditionRule mc;
    mc.name = str(m, "name", "", true);
    check_keys(m, kMetricConditionKeys, mc.name);
    mc.condition = str(m, "condition", mc.name, true);
    mc.queries = list(m, "queries", mc.name);
    mc.metrics = list(m, "metrics", mc.name);
    mc.kind = str(m, "kind", mc.name, true);
    mc.above = number(m, "above", mc.name);
    mc.below = number(m, "below", mc.name);
    mc.min_increase = number(m, "min_increase", mc.name);
    mc.for_s = number(m, "for_s", mc.name);
    if (auto f = m["fields"]) {
      if (!f.IsMap()) {
        error(f, mc.name, "'fields' maps event fields to series labels ({hca: device})");
      } else {
        for (const auto& kv : f) {
          if (!kv.second.IsScalar())
            error(kv.second, mc.name, "'fields' values must be label names");
          else
            mc.fields[kv.first.as<std::string>("")] = kv.second.as<std::string>();
        }
      }
    }
    mc.code_from_value = boolean(m, "code_from_value", mc.name, false);
    mc.enabled = boolean(m, "enabled", mc.name, true);
    mc.where = at(m);
    return mc;
  }

  XidRule xid_meaning(const YAML::Node& n, const std::string& rule) {
    XidRule x;
    x.name = str(n, "name", rule, false);
    x.cause = str(n, "cause", rule, true);
    x.strength = str(n, "strength", rule, true);
    x.domain = str(n, "domain", rule, true);
    x.sub_domain = str(n, "sub_domain", rule, true);
    x.action = str(n, "action", rule, true);
    x.immediate_action = str(n, "immediate_action", rule, false);
    x.investigatory_action = str(n, "investigatory_action", rule, false);
    x.where = at(n);
    return x;
  }
};

const std::set<std::string> kPatternKeys = {"name",  "kind",    "sources",  "literals", "regex",
                                            "group", "enabled", "examples", "source"};
const std::set<std::string> kChainKeys = {"name",      "upper", "lower", "same",
                                          "max_gap_s", "root",  "why",   "source"};
const std::set<std::string> kKindKeys = {
    "kind",        "role",         "strength",        "scope",        "domain",
    "sub_domain",  "action",       "label",           "corroborates", "detection_lag_s",
    "kernel_only", "shared_cause", "kernel_confirms", "blames"};
const std::set<std::string> kXidKeys = {"code",
                                        "name",
                                        "cause",
                                        "strength",
                                        "domain",
                                        "sub_domain",
                                        "action",
                                        "immediate_action",
                                        "investigatory_action"};
const std::set<std::string> kFamilyKeys = {"from",   "to",         "cause",  "strength",
                                           "domain", "sub_domain", "action", "name"};
const std::set<std::string> kTopKeys = {"patterns",
                                        "kinds",
                                        "xids",
                                        "families",
                                        "sxids",
                                        "sxid_default",
                                        "settings",
                                        "metric_conditions",
                                        "metric_node_labels",
                                        "chains"};

}  // namespace

RuleDocument read_rule_text(const std::string& display_name, const std::string& text,
                            std::vector<RuleError>& errors) {
  RuleDocument doc;
  doc.file = display_name;
  Reader r{display_name, errors};
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    errors.push_back(
        make_rule_error(display_name, e.mark.line + 1, "", "YAML syntax error: " + e.msg));
    return doc;
  }
  if (!root || root.IsNull()) return doc;
  if (!root.IsMap()) {
    r.error(root, "",
            "a rule file is a mapping with keys patterns, kinds, xids, families, sxids, settings");
    return doc;
  }
  try {
    r.check_keys(root, kTopKeys, "");
    if (auto ps = root["patterns"]) {
      for (const auto& p : ps) {
        std::string name = r.str(p, "name", "", true);
        r.check_keys(p, kPatternKeys, name);
        PatternRule pr;
        pr.name = name;
        pr.kind = r.str(p, "kind", name, true);
        pr.sources = r.list(p, "sources", name);
        pr.literals = r.list(p, "literals", name);
        pr.regex = r.str(p, "regex", name, true);
        pr.group = r.str(p, "group", name, false);
        if (auto e = p["enabled"]) pr.enabled = e.as<bool>(true);
        pr.examples = r.list(p, "examples", name);
        pr.source = r.str(p, "source", name, false);
        pr.where = r.at(p);
        doc.patterns.push_back(std::move(pr));
      }
    }
    if (auto ks = root["kinds"]) {
      for (const auto& k : ks) {
        std::string kind = r.str(k, "kind", "", true);
        r.check_keys(k, kKindKeys, kind);
        KindRule kr;
        kr.kind = kind;
        kr.role = r.str(k, "role", kind, true);
        kr.strength = r.str(k, "strength", kind, false);
        if (auto s = r.str(k, "scope", kind, false); !s.empty()) kr.scope = s;
        kr.domain = r.str(k, "domain", kind, false);
        kr.sub_domain = r.str(k, "sub_domain", kind, false);
        kr.action = r.str(k, "action", kind, false);
        kr.label = r.str(k, "label", kind, false);
        kr.corroborates = r.str(k, "corroborates", kind, false);
        kr.kernel_only = r.boolean(k, "kernel_only", kind, false);
        kr.shared_cause = r.boolean(k, "shared_cause", kind, false);
        kr.kernel_confirms = r.boolean(k, "kernel_confirms", kind, false);
        if (auto b = r.str(k, "blames", kind, false); !b.empty()) kr.blames = b;
        if (auto lag = k["detection_lag_s"]) {
          try {
            kr.detection_lag_s = lag.as<double>();
          } catch (const YAML::Exception&) {
            r.error(lag, kind, "detection_lag_s must be a number of seconds");
          }
        }
        kr.where = r.at(k);
        doc.kinds.push_back(std::move(kr));
      }
    }
    auto read_codes = [&](const char* key, std::vector<XidRule>& out) {
      if (auto xs = root[key]) {
        for (const auto& x : xs) {
          std::string rule = std::string(key) + " entry";
          r.check_keys(x, kXidKeys, rule);
          int code = r.integer(x, "code", rule);
          rule = std::string(key == std::string("xids") ? "Xid " : "SXid ") + std::to_string(code);
          XidRule xr = r.xid_meaning(x, rule);
          xr.code = code;
          out.push_back(std::move(xr));
        }
      }
    };
    read_codes("xids", doc.xids);
    read_codes("sxids", doc.sxids);
    if (auto fs = root["families"]) {
      for (const auto& f : fs) {
        r.check_keys(f, kFamilyKeys, "family");
        XidFamilyRule fr;
        fr.from = r.integer(f, "from", "family");
        fr.to = r.integer(f, "to", "family");
        fr.meaning = r.xid_meaning(f, "family");
        doc.families.push_back(std::move(fr));
      }
    }
    if (auto ms = root["metric_conditions"]) {
      if (!ms.IsSequence())
        r.error(ms, "", "'metric_conditions' must be a list");
      else
        for (const auto& m : ms) doc.metric_conditions.push_back(r.metric_condition(m));
    }
    if (auto cs = root["chains"]) {
      if (!cs.IsSequence()) r.error(cs, "", "'chains' must be a list");
      for (const auto& c : cs) {
        if (!cs.IsSequence()) break;
        ChainRule cr;
        cr.name = r.str(c, "name", "", true);
        r.check_keys(c, kChainKeys, cr.name);
        cr.upper = r.list(c, "upper", cr.name);
        cr.lower = r.list(c, "lower", cr.name);
        if (auto same = r.str(c, "same", cr.name, false); !same.empty()) cr.same = same;
        if (auto gap = r.number(c, "max_gap_s", cr.name))
          cr.max_gap_s = *gap;
        else
          r.error(c, cr.name, "missing 'max_gap_s'");
        if (auto side = r.str(c, "root", cr.name, false); !side.empty()) cr.root = side;
        cr.why = r.str(c, "why", cr.name, false);
        cr.source = r.str(c, "source", cr.name, false);
        cr.where = r.at(c);
        doc.chains.push_back(std::move(cr));
      }
    }
    if (auto nl = root["metric_node_labels"])
      doc.metric_node_labels = r.list(root, "metric_node_labels", "metric_node_labels");
    if (auto d = root["sxid_default"]) {
      r.check_keys(d, kFamilyKeys, "sxid_default");
      doc.sxid_default = r.xid_meaning(d, "sxid_default");
    }
    if (auto s = root["settings"]) {
      for (const auto& kv : s) {
        std::string key = kv.first.as<std::string>("");
        try {
          doc.settings[key] = {kv.second.as<double>(), r.at(kv.first)};
        } catch (const YAML::Exception&) {
          r.error(kv.second, "settings." + key, "must be a number");
        }
      }
    }
  } catch (const YAML::Exception& e) {
    errors.push_back(make_rule_error(display_name, e.mark.line + 1, "",
                                     std::string("unexpected structure: ") + e.msg));
  }
  return doc;
}

RuleDocument read_rule_file(const std::string& path, std::vector<RuleError>& errors) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    errors.push_back(make_rule_error(path, 0, "", "cannot read rule file"));
    RuleDocument doc;
    doc.file = path;
    return doc;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return read_rule_text(path, ss.str(), errors);
}

}  // namespace ff
