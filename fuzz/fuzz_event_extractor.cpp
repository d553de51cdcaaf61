// Fuzzes the event extractor with the built-in compiled rules: the input is
// the text of one node log file. The first byte picks the file kind (so every
// kind's prefilter and patterns are reached); the rest is the file content.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/extract/event_extractor.h"
#include "engine/rules/compiled_rules.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::shared_ptr<const ff::CompiledRules> rules = [] {
    std::vector<ff::RuleError> errors;
    auto r = ff::load_rules(true, {}, errors);
    if (!r || !errors.empty()) std::abort();  // the built-in rules must compile
    return r;
  }();
  static const ff::TimeContext tc{ff::find_zone("Europe/Berlin"), ff::TimeUs{1'711'846'800'000'000},
                                  ff::TimeUs{1'711'800'000'000'000}};
  static const char* const kinds[] = {"kernel", "syslog", "fabricmanager", "slurmd", "app"};
  if (size == 0) return 0;
  const char* kind = kinds[data[0] % 5];
  ff::SourceFile file;
  file.node = "gpu-node-01";
  file.kind = kind;
  file.rel = std::string("nodes/gpu-node-01/") + kind;
  file.path = fuzz::write_input(file.rel, data + 1, size - 1);

  ff::EventExtractor extractor(*rules);
  std::uint64_t seq = 0;
  std::uint64_t count = 0;
  ff::ExtractStats st = extractor.scan_file(file, tc, seq, [&](ff::Event&&) { ++count; });
  if (st.events != count) __builtin_trap();
  return 0;
}
