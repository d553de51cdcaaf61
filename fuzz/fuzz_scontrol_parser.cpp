// Fuzzes the parsers of `scontrol show job -o` / `show config` output and
// the Slurm local-time conversion, which read text from another program.
#include <cstddef>
#include <cstdint>
#include <string>

#include "slurm/slurm_job.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto job = ff::agent::parse_show_job(text);
  (void)job;
  (void)ff::agent::parse_scontrol_fields(text);
  (void)ff::agent::parse_show_config(text);
  (void)ff::agent::slurm_time_to_utc(text);
  return 0;
}
