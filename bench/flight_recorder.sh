#!/usr/bin/env bash
# Decode speed of a PyTorch flight-recorder dump: firstfault's reader against
# Python's own pickle.loads on the same bytes (the baseline: C code that builds
# Python objects). Not a timed test; figures depend on the machine and its load.
#   bench/flight_recorder.sh [BUILD_DIR=build] [ENTRIES=20000]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
ENTRIES=${2:-20000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dump="$tmp/dump-$ENTRIES.pkl"
python3 tests/support/make_flight_recorder.py big "$dump" --entries "$ENTRIES" --protocol 2
cmake --build "$BUILD" --target ff_bench_flight_recorder >/dev/null
"$BUILD/bench/ff_bench_flight_recorder" "$dump" 9
python3 - "$dump" <<'PY'
import pickle, sys, time
data = open(sys.argv[1], "rb").read()
times = []
for _ in range(9):
    t0 = time.perf_counter()
    d = pickle.loads(data)
    times.append((time.perf_counter() - t0) * 1000)
times.sort()
print(f"python3 pickle.loads: {len(data)} bytes, {len(d['entries'])} entries, "
      f"median {times[4]:.2f} ms, fastest {times[0]:.2f} ms (9 runs)")
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
