// The engine's diagnosis JSON (verdict/diagnosis_json.cpp) read back into
// ff::Diagnosis, so a stored pass can be printed with the engine's own text
// report. The inverse of diagnosis_to_json: for every diagnosis the engine
// writes, diagnosis_to_json(diagnosis_from_json(parse(text))) == text.
// Fields that are missing or of the wrong type are left at their defaults:
// a stored diagnosis from another engine version still prints.
#pragma once

#include <nlohmann/json.hpp>

#include "incident/diagnosis.h"

namespace ff::agent {

Diagnosis diagnosis_from_json(const nlohmann::json& j);

}  // namespace ff::agent
