// job.json both ways (docs/spec/incident.md): the one reader every component
// that reads a job.json uses, and the one writer every component that writes
// one uses, so the field names, their forms and what is left out when unknown
// have one home.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "incident/diagnosis.h"
#include "incident/job_info.h"

namespace ff {

constexpr const char* kIncidentSchema = "firstfault.incident/v1";

// Largest job.json read; a larger one is an error, not a silent cut. A job of
// 4,096 nodes with 8 ranks each, their GPUs and five coverage entries per node
// is 10 MiB (14 MiB indented).
constexpr std::uint64_t kMaxJobJsonBytes = 64u << 20;

// Reads the text of a job.json. Never throws: what cannot be read is reported
// in `errors` (source "job.json") and the rest is kept. What cannot all be
// right (an empty 'nodes', a rank listed twice, a rank on a node outside
// 'nodes', start_time after end_time) is reported too, and resolved as
// incident.md says, so the evidence is still judged. PCI ids are made
// canonical; a GPU named otherwise is dropped.
JobInfo parse_job_json(const std::string& text, std::vector<ErrorItem>& errors);

// The job.json of `job`: job_id, attempt, nodes and coverage always; every
// other field only when the model knows it (a string that is not empty, a
// time, a node_info entry), and `ranks` and a rank's `gpus` as
// JobInfo::ranks_known and RankInfo::gpus_known say, so a partial job.json
// (a node's fragment, a Kubernetes pod without an index) is written as
// partial. Values are written as they are: PCI ids are not made canonical.
nlohmann::json to_json(const JobInfo& job);

// What to do with text that is not UTF-8 (a detail quoting what an API
// server sent): fail the file (nlohmann's type_error), or write U+FFFD.
enum class InvalidUtf8 { kThrow, kReplace };

// The file's text: indented by two, one trailing newline.
std::string job_json_text(const nlohmann::json& job, InvalidUtf8 invalid = InvalidUtf8::kThrow);

}  // namespace ff
