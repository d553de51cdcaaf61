// What filter and correlation rules may read and write besides the events.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/diagnosis.h"
#include "model/job_info.h"
#include "rules/compiled_rules.h"

namespace ff {

struct FilterContext {
  const JobInfo& job;
  const CompiledRules& rules;
  std::vector<ErrorItem>& errors;
  std::map<std::string, std::string> ip_to_node;  // from NCCL bootstrap lines
};

}  // namespace ff
