// What filter and correlation rules may read and write besides the events.
#pragma once

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "engine/rules/compiled_rules.h"
#include "incident/diagnosis.h"
#include "incident/job_info.h"

namespace ff {

struct SourceSpan {
  std::uint64_t lines = 0;
  MaybeTime first, last;    // first and last timestamped lines, or the span its
                            // collector says it read (coverage covers_from/until)
  bool read_whole = false;  // the collector read a live source over [first, last]
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
  // Xids set aside as older than the job or the node's boot, per (node,
  // device, "xid:<code>"), by the second they were logged (a message in
  // both kernel.log and syslog counts once): a GPU's history, not this
  // job's evidence.
  std::map<std::tuple<std::string, std::string, std::string>, std::set<TimeUs>> prior_faults;
  // Decisions of the filter rules a reader must see in the diagnosis'
  // reasoning (evidence set aside as forged), in the order they were made.
  std::vector<std::string> reasoning;
};

}  // namespace ff
