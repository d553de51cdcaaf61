// The diagnosis as a report a tired on-call engineer reads in ten seconds:
// verdict and root cause first, then the evidence as one timeline across
// nodes, demoted symptoms summarised, then coverage gaps and errors.
#pragma once

#include <string>

#include "incident/diagnosis.h"

namespace ff {

std::string diagnosis_to_text(const Diagnosis& d, bool colour);

}  // namespace ff
