#include "incident/diagnosis_json.h"

#include <nlohmann/json.hpp>

namespace ff {
namespace {

using J = nlohmann::ordered_json;
using nlohmann::json;

J time_or_null(const MaybeTime& t) {
  return t ? J(format_time(*t)) : J(nullptr);
}
J str_or_null(const std::string& s) {
  return s.empty() ? J(nullptr) : J(s);
}

// Reading: a missing key or one of another type gives the default.
std::string text(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
template <typename Int>
Int number(const json& j, const char* key, Int fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<Int>() : fallback;
}
MaybeTime time(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? parse_iso8601_utc(it->get<std::string>())
                                          : std::nullopt;
}
template <typename T>
std::vector<T> list(const json& j, const char* key) {
  std::vector<T> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if constexpr (std::is_same_v<T, std::string>) {
      if (v.is_string()) out.push_back(v.get<std::string>());
    } else {
      if (v.is_number_integer()) out.push_back(v.get<T>());
    }
  }
  return out;
}
// The array `key` of objects, each converted by `one`.
template <typename T, typename Convert>
std::vector<T> objects(const json& j, const char* key, Convert one) {
  std::vector<T> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& v : *it)
    if (v.is_object()) out.push_back(one(v));
  return out;
}

J int_or_null(std::int64_t v) {
  return v < 0 ? J(nullptr) : J(v);
}
J int_or_null(const std::optional<std::int64_t>& v) {
  return v ? J(*v) : J(nullptr);
}

J hang_to_json(const Hang& h) {
  J hj;
  hj["status"] = h.status;
  hj["summary"] = h.summary;
  hj["process_groups"] = J::array();
  for (const auto& g : h.groups) {
    J gj;
    gj["pg"] = g.pg;
    gj["name"] = str_or_null(g.name);
    gj["seq"] = int_or_null(g.seq);
    gj["op"] = str_or_null(g.op);
    gj["status"] = g.status;
    gj["size"] = int_or_null(g.size);
    gj["ranks"] = J::array();
    for (const auto& r : g.ranks) {
      J rj;
      rj["rank"] = int_or_null(r.rank);
      rj["group_rank"] = int_or_null(r.group_rank);
      rj["node"] = str_or_null(r.node);
      rj["gpu"] = str_or_null(r.gpu);
      rj["state"] = r.state;
      rj["last_enqueued"] = int_or_null(r.last_enqueued);
      rj["last_completed"] = int_or_null(r.last_completed);
      rj["timed_out_at"] = int_or_null(r.timed_out_at);
      rj["op"] = str_or_null(r.op);
      rj["sources"] = r.sources;
      rj["evidence"] = r.evidence;
      gj["ranks"].push_back(rj);
    }
    if (g.ranks_not_listed) gj["ranks_not_listed"] = g.ranks_not_listed;
    hj["process_groups"].push_back(gj);
  }
  J vj;
  vj["pg"] = h.view.pg;
  vj["seqs"] = h.view.seqs;
  vj["rows"] = J::array();
  for (const auto& row : h.view.rows) {
    J rj;
    rj["rank"] = int_or_null(row.rank);
    rj["node"] = str_or_null(row.node);
    rj["cells"] = J::array();
    for (const auto& c : row.cells) rj["cells"].push_back(str_or_null(c));
    vj["rows"].push_back(rj);
  }
  hj["view"] = vj;
  return hj;
}

std::optional<std::int64_t> maybe_int64(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}
int int_or(const json& j, const char* key) {
  auto v = maybe_int64(j, key);
  return v && *v >= 0 && *v <= 1 << 30 ? static_cast<int>(*v) : -1;
}

Hang hang_from_json(const json& j) {
  Hang h;
  if (!j.is_object()) return h;
  h.status = text(j, "status");
  h.summary = text(j, "summary");
  h.groups = objects<HangGroup>(j, "process_groups", [](const json& v) {
    HangGroup g;
    g.pg = text(v, "pg");
    g.name = text(v, "name");
    g.seq = maybe_int64(v, "seq");
    g.op = text(v, "op");
    g.status = text(v, "status");
    g.size = int_or(v, "size");
    g.ranks_not_listed = std::max(0, int_or(v, "ranks_not_listed"));
    g.ranks = objects<HangRank>(v, "ranks", [](const json& w) {
      HangRank r;
      r.rank = int_or(w, "rank");
      r.group_rank = int_or(w, "group_rank");
      r.node = text(w, "node");
      r.gpu = text(w, "gpu");
      r.state = text(w, "state");
      r.last_enqueued = maybe_int64(w, "last_enqueued");
      r.last_completed = maybe_int64(w, "last_completed");
      r.timed_out_at = maybe_int64(w, "timed_out_at");
      r.op = text(w, "op");
      r.sources = list<std::string>(w, "sources");
      r.evidence = list<int>(w, "evidence");
      return r;
    });
    return g;
  });
  if (auto v = j.find("view"); v != j.end() && v->is_object()) {
    h.view.pg = text(*v, "pg");
    h.view.seqs = list<std::int64_t>(*v, "seqs");
    h.view.rows = objects<HangViewRow>(*v, "rows", [](const json& w) {
      HangViewRow row;
      row.rank = int_or(w, "rank");
      row.node = text(w, "node");
      if (auto c = w.find("cells"); c != w.end() && c->is_array())
        for (const auto& cell : *c)
          row.cells.push_back(cell.is_string() ? cell.get<std::string>() : "");
      return row;
    });
  }
  return h;
}

}  // namespace

std::string diagnosis_to_json(const Diagnosis& d, int indent) {
  J j;
  j["schema"] = d.schema;
  j["cluster"] = d.cluster;
  j["job_id"] = d.job_id;
  j["attempt"] = d.attempt;
  j["terminal_state"] = str_or_null(d.terminal_state);
  j["verdict"] = d.verdict;
  j["domain"] = str_or_null(d.domain);
  j["sub_domain"] = str_or_null(d.sub_domain);
  j["root_causes"] = J::array();
  for (const auto& r : d.root_causes) {
    J rc;
    rc["node"] = str_or_null(r.node);
    rc["device"] = str_or_null(r.device);
    rc["device_uuid"] = str_or_null(r.device_uuid);
    rc["event"] = r.event;
    rc["code"] = str_or_null(r.code);
    rc["time"] = time_or_null(r.time);
    rc["earliest"] = time_or_null(r.earliest);
    rc["latest"] = time_or_null(r.latest);
    rc["summary"] = r.summary;
    rc["evidence"] = r.evidence;
    rc["domain"] = r.domain;
    rc["sub_domain"] = r.sub_domain;
    rc["rank"] = r.rank >= 0 ? J(r.rank) : J(nullptr);
    if (!r.related_devices.empty()) rc["related_devices"] = r.related_devices;
    rc["origin"] = str_or_null(r.origin);
    rc["trusted"] = r.trusted;
    if (!r.provenance.empty()) rc["provenance"] = r.provenance;
    j["root_causes"].push_back(rc);
  }
  j["affected_nodes"] = d.affected_nodes;
  j["symptoms"] = J::array();
  for (const auto& s : d.symptoms) {
    J sj;
    sj["node"] = str_or_null(s.node);
    sj["kind"] = s.kind;
    sj["status"] = s.status;
    sj["count"] = s.count;
    sj["first_time"] = time_or_null(s.first_time);
    sj["evidence"] = s.evidence;
    if (!s.explained_by.empty()) sj["explained_by"] = s.explained_by;
    j["symptoms"].push_back(sj);
  }
  j["evidence"] = J::array();
  for (const auto& e : d.evidence) {
    J ej;
    ej["id"] = e.id;
    ej["time"] = time_or_null(e.time);
    if (e.time_inferred) ej["time_inferred"] = true;
    if (e.earliest || e.latest) {
      ej["earliest"] = time_or_null(e.earliest);
      ej["latest"] = time_or_null(e.latest);
    }
    ej["trusted"] = e.trusted;
    ej["node"] = str_or_null(e.node);
    ej["source"] = e.source;
    ej["line"] = e.line;
    ej["text"] = e.text;
    ej["event"] = e.event;
    if (!e.also_in.empty()) ej["also_in"] = e.also_in;
    j["evidence"].push_back(ej);
  }
  j["coverage"] = J::array();
  for (const auto& c : d.coverage) {
    J cj;
    cj["source"] = c.source;
    cj["node"] = str_or_null(c.node);
    cj["status"] = c.status;
    cj["lines"] = c.lines;
    cj["detail"] = c.detail;
    j["coverage"].push_back(cj);
  }
  j["errors"] = J::array();
  for (const auto& e : d.errors) {
    J ej;
    ej["source"] = e.source;
    if (e.line) ej["line"] = e.line;
    ej["message"] = e.message;
    j["errors"].push_back(ej);
  }
  j["recommended_action"] = d.recommended_action;
  j["summary"] = d.summary;
  // Additions to the spec's fixed fields.
  j["failure_onset"] = time_or_null(d.failure_onset);
  j["failure_onset_earliest"] = time_or_null(d.failure_onset_earliest);
  j["failure_onset_latest"] = time_or_null(d.failure_onset_latest);
  j["candidates"] = J::array();
  for (const auto& c : d.candidates) {
    J cj;
    cj["id"] = c.id;
    cj["node"] = str_or_null(c.node);
    cj["device"] = str_or_null(c.device);
    cj["event"] = c.event;
    cj["code"] = str_or_null(c.code);
    cj["time"] = time_or_null(c.time);
    cj["sub_domain"] = c.sub_domain;
    cj["strength"] = c.strength;
    cj["status"] = c.status;
    if (!c.note.empty()) cj["note"] = c.note;
    cj["evidence"] = c.evidence;
    j["candidates"].push_back(cj);
  }
  j["ignored"] = J::array();
  for (const auto& i : d.ignored) {
    J ij;
    ij["node"] = str_or_null(i.node);
    ij["kind"] = i.kind;
    ij["reason"] = i.reason;
    ij["count"] = i.count;
    ij["example"] = i.example;
    j["ignored"].push_back(ij);
  }
  if (!d.hang.status.empty()) j["hang"] = hang_to_json(d.hang);
  j["reasoning"] = d.reasoning;
  j["engine_version"] = d.engine_version;
  return j.dump(indent, ' ', false, J::error_handler_t::replace);
}

Diagnosis diagnosis_from_json(const json& j) {
  Diagnosis d;
  if (!j.is_object()) return d;
  d.schema = text(j, "schema");
  d.cluster = text(j, "cluster");
  d.job_id = text(j, "job_id");
  d.attempt = number(j, "attempt", 0);
  d.terminal_state = text(j, "terminal_state");
  d.verdict = text(j, "verdict");
  d.domain = text(j, "domain");
  d.sub_domain = text(j, "sub_domain");
  d.root_causes = objects<RootCause>(j, "root_causes", [](const json& v) {
    RootCause r;
    r.node = text(v, "node");
    r.device = text(v, "device");
    r.device_uuid = text(v, "device_uuid");
    r.event = text(v, "event");
    r.code = text(v, "code");
    r.time = time(v, "time");
    r.earliest = time(v, "earliest");
    r.latest = time(v, "latest");
    r.summary = text(v, "summary");
    r.evidence = list<int>(v, "evidence");
    r.domain = text(v, "domain");
    r.sub_domain = text(v, "sub_domain");
    r.rank = number(v, "rank", -1);
    r.related_devices = list<std::string>(v, "related_devices");
    r.origin = text(v, "origin");
    r.trusted = v.contains("trusted") && v["trusted"].is_boolean() && v["trusted"].get<bool>();
    r.provenance = text(v, "provenance");
    return r;
  });
  d.affected_nodes = list<std::string>(j, "affected_nodes");
  d.symptoms = objects<Symptom>(j, "symptoms", [](const json& v) {
    Symptom s;
    s.node = text(v, "node");
    s.kind = text(v, "kind");
    s.status = text(v, "status");
    s.count = number<std::uint64_t>(v, "count", 0);
    s.first_time = time(v, "first_time");
    s.evidence = list<int>(v, "evidence");
    s.explained_by = text(v, "explained_by");
    return s;
  });
  d.evidence = objects<EvidenceItem>(j, "evidence", [](const json& v) {
    EvidenceItem e;
    e.id = number(v, "id", 0);
    e.time = time(v, "time");
    e.time_inferred = v.value("time_inferred", false);
    e.earliest = time(v, "earliest");
    e.latest = time(v, "latest");
    e.trusted = v.contains("trusted") && v["trusted"].is_boolean() && v["trusted"].get<bool>();
    e.node = text(v, "node");
    e.source = text(v, "source");
    e.line = number<std::uint64_t>(v, "line", 0);
    e.text = text(v, "text");
    e.event = text(v, "event");
    e.also_in = list<std::string>(v, "also_in");
    return e;
  });
  d.coverage = objects<CoverageItem>(j, "coverage", [](const json& v) {
    CoverageItem c;
    c.source = text(v, "source");
    c.node = text(v, "node");
    c.status = text(v, "status");
    c.lines = number<std::uint64_t>(v, "lines", 0);
    c.detail = text(v, "detail");
    return c;
  });
  d.errors = objects<ErrorItem>(j, "errors", [](const json& v) {
    ErrorItem e;
    e.source = text(v, "source");
    e.line = number<std::uint64_t>(v, "line", 0);
    e.message = text(v, "message");
    return e;
  });
  d.recommended_action = text(j, "recommended_action");
  d.summary = text(j, "summary");
  d.failure_onset = time(j, "failure_onset");
  d.failure_onset_earliest = time(j, "failure_onset_earliest");
  d.failure_onset_latest = time(j, "failure_onset_latest");
  d.candidates = objects<CandidateItem>(j, "candidates", [](const json& v) {
    CandidateItem c;
    c.id = number(v, "id", 0);
    c.node = text(v, "node");
    c.device = text(v, "device");
    c.event = text(v, "event");
    c.code = text(v, "code");
    c.time = time(v, "time");
    c.sub_domain = text(v, "sub_domain");
    c.strength = text(v, "strength");
    c.status = text(v, "status");
    c.note = text(v, "note");
    c.evidence = list<int>(v, "evidence");
    return c;
  });
  d.ignored = objects<IgnoredItem>(j, "ignored", [](const json& v) {
    IgnoredItem i;
    i.node = text(v, "node");
    i.kind = text(v, "kind");
    i.reason = text(v, "reason");
    i.count = number<std::uint64_t>(v, "count", 0);
    i.example = text(v, "example");
    return i;
  });
  if (auto h = j.find("hang"); h != j.end()) d.hang = hang_from_json(*h);
  d.reasoning = list<std::string>(j, "reasoning");
  d.engine_version = text(j, "engine_version");
  return d;
}

}  // namespace ff
