#include "engine/verdict/diagnosis_json.h"

#include <nlohmann/json.hpp>

namespace ff {
namespace {

using J = nlohmann::ordered_json;

J time_or_null(const MaybeTime& t) {
  return t ? J(format_time(*t)) : J(nullptr);
}
J str_or_null(const std::string& s) {
  return s.empty() ? J(nullptr) : J(s);
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
  j["reasoning"] = d.reasoning;
  j["engine_version"] = d.engine_version;
  return j.dump(indent, ' ', false, J::error_handler_t::replace);
}

}  // namespace ff
