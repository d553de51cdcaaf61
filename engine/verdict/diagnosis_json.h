// The diagnosis as JSON (docs/spec/diagnosis.md). Keys in the spec's
// order; invalid UTF-8 from log lines is replaced, never an exception.
#pragma once

#include <string>

#include "incident/diagnosis.h"

namespace ff {

std::string diagnosis_to_json(const Diagnosis& d, int indent = 2);

}  // namespace ff
