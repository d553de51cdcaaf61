// What filter and correlation rules may read and write besides the events.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/diagnosis.h"
#include "model/job_info.h"
#include "rules/compiled_rules.h"

namespace ff {

struct SourceSpan {
  std::uint64_t lines = 0;
  MaybeTime first, last;  // first and last timestamped lines
};

struct FilterContext {
  const JobInfo& job;
  const CompiledRules& rules;
  std::vector<ErrorItem>& errors;
  std::map<std::string, std::string> ip_to_node;  // from NCCL bootstrap lines
  // Per node, what its kernel log (the trusted kernel source) covers: a
  // kernel-only message missing from it while inside this span was not
  // written by the kernel.
  std::map<std::string, SourceSpan> kernel_spans;
};

}  // namespace ff
