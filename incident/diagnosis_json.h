// The diagnosis as JSON (docs/spec/diagnosis.md), both ways. The engine
// writes it, the agent stores the text as written, and `firstfault show`
// reads a stored one back to print it with the engine's own text report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "incident/diagnosis.h"

namespace ff {

// Keys in the spec's order; invalid UTF-8 from log lines is replaced, never
// an exception.
std::string diagnosis_to_json(const Diagnosis& d, int indent = 2);

// The inverse: for every diagnosis the engine writes,
// diagnosis_to_json(diagnosis_from_json(parse(text))) == text. A field that
// is missing or of the wrong type is left at its default, so a stored
// diagnosis from another engine version still prints.
Diagnosis diagnosis_from_json(const nlohmann::json& j);

}  // namespace ff
