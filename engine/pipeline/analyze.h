// The whole engine for one incident directory: read → extract → filter →
// refine → verdict. Deterministic: the same directory and rules give the
// same Diagnosis, byte for byte once serialised.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "model/diagnosis.h"
#include "rules/compiled_rules.h"

namespace ff {

struct AnalyzeResult {
  bool usable = true;   // false: the input could not be analysed at all (exit 2)
  std::string problem;  // why, when !usable
  Diagnosis diagnosis;
};

AnalyzeResult analyze_incident(const std::filesystem::path& dir, const CompiledRules& rules);

extern const char* const kEngineVersion;

}  // namespace ff
