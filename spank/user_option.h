// The user's opt-out: `sbatch/srun/salloc --firstfault=off` (or the environment
// variable SLURM_SPANK__SLURM_SPANK_OPTION_firstfault_firstfault=off). This header
// holds the parts that need no Slurm; spank_option.h registers the option.
#ifndef FIRSTFAULT_SPANK_USER_OPTION_H_
#define FIRSTFAULT_SPANK_USER_OPTION_H_

#include <string_view>

namespace firstfault::spank {

enum class UserChoice { kOn, kOff, kInvalid };

// "off", "no", "false", "0", "disable(d)" -> kOff; "on", "yes", "true", "1",
// "enable(d)" and "" -> kOn; case-insensitive.
UserChoice ParseUserChoice(std::string_view value);

// Slurm passes the option of sbatch to the batch step through this variable and then
// removes it from the job's environment; the plugin puts it back so that srun inside
// the batch script sees the opt-out too (Slurm's _opt_env_name with the
// SLURM_SPANK_ prefix that srun reads).
inline constexpr char kOptOutEnvironmentVariable[] =
    "SLURM_SPANK__SLURM_SPANK_OPTION_firstfault_firstfault";

}  // namespace firstfault::spank

#endif  // FIRSTFAULT_SPANK_USER_OPTION_H_
