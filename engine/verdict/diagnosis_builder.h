// Step 5 of the pipeline: where symptoms and candidates become a verdict.
// Maps the refined Attribution to the Diagnosis of docs/spec/diagnosis.md:
// verdict, domain, root causes, affected nodes, the evidence chain (time
// ordered; ids cited by the other fields), recommended action and summary.
#pragma once

#include "engine/filter/filter_context.h"
#include "engine/refine/attribution.h"
#include "incident/diagnosis.h"

namespace ff {

void build_diagnosis(const Attribution& a, const FilterContext& ctx, Diagnosis& d);

}  // namespace ff
