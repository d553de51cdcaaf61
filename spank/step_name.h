// Step ids as Slurm prints them: batch, extern, interactive or the decimal number.
#ifndef FIRSTFAULT_SPANK_STEP_NAME_H_
#define FIRSTFAULT_SPANK_STEP_NAME_H_

#include <cstdint>
#include <string>

namespace firstfault::spank {

// Values of slurm/slurm.h, repeated so that this file needs no Slurm header.
inline constexpr uint32_t kInteractiveStep = 0xfffffffa;
inline constexpr uint32_t kBatchStep = 0xfffffffb;
inline constexpr uint32_t kExternStep = 0xfffffffc;
inline constexpr uint32_t kPendingStep = 0xfffffffd;

std::string StepName(uint32_t step_id);

}  // namespace firstfault::spank

#endif  // FIRSTFAULT_SPANK_STEP_NAME_H_
