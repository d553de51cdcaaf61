// Fuzzes read_job_json: the input is the job.json of an incident directory.
// The reader never throws; what it cannot read goes to `errors`.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/read/job_reader.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto path = fuzz::write_input("incident/job.json", data, size);
  std::vector<ff::ErrorItem> errors;
  ff::JobInfo job = ff::read_job_json(path, errors);
  (void)job;
  return 0;
}
