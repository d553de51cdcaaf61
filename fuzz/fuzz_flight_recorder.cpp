// Fuzzes read_pickle and read_flight_recorder: the input is a flight-recorder
// dump (a pickle) as PyTorch writes it to nodes/<node>/flight_recorder/<rank>.
// Neither throws; every reference in the value graph must point into it, and
// nothing but plain data may come out.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "engine/read/flight_recorder.h"
#include "engine/read/pickle_value.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ff::PickleDocument doc = ff::read_pickle(bytes);
  if (doc.ok && doc.root_value() == nullptr) std::abort();
  for (const ff::PickleValue& v : doc.values) {
    for (ff::PickleRef r : v.items) {
      if (r >= doc.values.size()) std::abort();
    }
    if (v.kind == ff::PickleKind::kDict && v.items.size() % 2 != 0) std::abort();
  }
  ff::FlightRecorderDump dump = ff::read_flight_recorder(bytes, 0);
  if (dump.entries.size() > ff::kMaxFlightRecorderEntries) std::abort();
  return 0;
}
