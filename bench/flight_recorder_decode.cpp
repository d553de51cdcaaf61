// Times read_flight_recorder on one dump file (bench/flight_recorder.sh makes
// a 20,000-entry dump and times Python's pickle.loads on the same bytes).
//   ff_bench_flight_recorder DUMP [RUNS=9]
// Prints the median and fastest wall time of the decode (the file is read
// into memory once, before timing), the entries read and any errors.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/read/flight_recorder.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DUMP [RUNS]\n", argv[0]);
    return 2;
  }
  int runs = argc > 2 ? std::atoi(argv[2]) : 9;
  std::ifstream in(argv[1], std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  std::vector<double> ms;
  ff::FlightRecorderDump dump;
  for (int i = 0; i < std::max(runs, 1); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    dump = ff::read_flight_recorder(bytes, 0);
    auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf(
      "firstfault read_flight_recorder: %zu bytes, %zu entries, median %.2f ms, fastest %.2f ms "
      "(%d runs)\n",
      bytes.size(), dump.entries.size(), ms[ms.size() / 2], ms.front(), runs);
  for (const auto& e : dump.errors) std::printf("  error: %s\n", e.c_str());
  return dump.errors.empty() ? 0 : 1;
}
