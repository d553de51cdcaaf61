#include "agent/store/diagnosis_from_json.h"

namespace ff::agent {
namespace {

using nlohmann::json;

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

}  // namespace

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
  d.reasoning = list<std::string>(j, "reasoning");
  d.engine_version = text(j, "engine_version");
  return d;
}

}  // namespace ff::agent
