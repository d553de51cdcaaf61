#include "spank/step_name.h"

namespace firstfault::spank {

std::string StepName(uint32_t step_id) {
  switch (step_id) {
    case kInteractiveStep:
      return "interactive";
    case kBatchStep:
      return "batch";
    case kExternStep:
      return "extern";
    case kPendingStep:
      return "pending";
    default:
      return std::to_string(step_id);
  }
}

}  // namespace firstfault::spank
