// Fuzzes what the agent reads from other programs about Slurm: the JSON
// records of firstfault-slurm-job (the job, and every attempt's accounting
// record), `scontrol show node -o` fields and `show config` output, and the
// attempt a bundle is filed under.
#include <cstddef>
#include <cstdint>
#include <string>

#include "agent/slurm/slurm_job.h"
#include "common/node_name.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::string problem;
  auto job = ff::agent::parse_slurm_job_json(text, problem);
  if (job) {
    // A record the agent uses names only nodes that are safe as a path.
    for (const auto& n : job->nodes)
      if (!ff::valid_node_name(n)) __builtin_trap();
    // And it says the same after the helper's own serialisation.
    std::string again;
    auto back = ff::agent::parse_slurm_job_json(ff::agent::slurm_job_json(*job), again);
    if (!back || back->nodes != job->nodes || back->state != job->state) __builtin_trap();
  }
  auto acct = ff::agent::parse_accounting_json(text, problem);
  if (acct) {
    for (const auto& a : acct->attempts)
      for (const auto& n : a.nodes)
        if (!ff::valid_node_name(n)) __builtin_trap();
    std::string again;
    auto back = ff::agent::parse_accounting_json(ff::agent::accounting_json(*acct), again);
    if (!back || back->attempts.size() != acct->attempts.size()) __builtin_trap();
    // Whatever the records say, an attempt is one of theirs or the claim.
    int a = ff::agent::resolve_attempt(7, text.substr(0, 20), job ? &*job : nullptr, &*acct);
    if (a != 7 && !acct->of(a) &&
        !(job && (a == job->restart_count || a + 1 == job->restart_count)))
      __builtin_trap();
  }
  (void)ff::agent::parse_scontrol_fields(text);
  (void)ff::agent::parse_show_config(text);
  return 0;
}
