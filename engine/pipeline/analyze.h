// The whole engine for one incident directory: read → extract → filter →
// refine → verdict. Deterministic: the same directory and rules give the
// same Diagnosis, byte for byte once serialised.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "engine/rules/compiled_rules.h"
#include "incident/diagnosis.h"

namespace ff {

struct AnalyzeResult {
  bool usable = true;   // false: the input could not be analysed at all (exit 2)
  std::string problem;  // why, when !usable
  Diagnosis diagnosis;
};

// How an analysis uses the machine; never what it concludes: every value
// gives the same Diagnosis.
struct AnalyzeOptions {
  // Threads reading and matching files. The merge into the event store is
  // in read order whatever finishes first, so 1 and 64 agree byte for byte.
  unsigned jobs = 1;
  // Plain files larger than this are read as several ranges of lines, so
  // one huge file does not leave the other threads idle. A fixed size (not
  // one derived from `jobs`): where a file is cut must not depend on the
  // thread count.
  std::uint64_t split_bytes = std::uint64_t{64} << 20;
};

// The threads this process may run on (its CPU affinity, which cgroups and
// taskset narrow), at least 1: the default for `jobs`.
unsigned available_cores();

AnalyzeResult analyze_incident(const std::filesystem::path& dir, const CompiledRules& rules,
                               const AnalyzeOptions& options = {});

extern const char* const kEngineVersion;

}  // namespace ff
