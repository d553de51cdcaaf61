#!/usr/bin/env bash
# Builds tests with AddressSanitizer and UndefinedBehaviorSanitizer in a
# separate build directory and runs them with ctest. The default build
# (build/) is not touched.
#
#   scripts/sanitize.sh [--build-only|--test-only] [BUILD_DIR=build-asan] [TARGET...|all]
#
# Without TARGET (or with the TARGET `default`) it builds what the sanitizers protect (FF_SANITIZE_TARGETS
# below): the parsers and the engine (unit and behaviour tests over every
# example), the agent's intake (its unit and HTTP tests: uploads, limits,
# credentials, path tricks), the collector, which reads user files as root, and
# the plugin's parts that run inside slurmstepd; the fuzz targets (fuzz/run.sh)
# cover the parsers besides. The store, the central sources, the spec check and
# the fake Slurm host read no hostile input of their own and run under ctest
# in build/ only. `all` builds every target; TARGETs only those, e.g.
# `scripts/sanitize.sh build-asan ff_unit_tests ff_behaviour_tests` for the
# engine alone. ctest then runs the tests of what was built.
# --build-only builds and stops (scripts/test.sh builds in the background
# while the ordinary tests run); --test-only runs ctest on what is built.
# Excluded: labels slurm and packaging (they need the test cluster or package
# tools). The munge-backed tests need munged running (tests/slurm/cluster.sh munge).
# FF_SANITIZE_FUZZ=1 configures with -DFIRSTFAULT_FUZZ=ON instead (the same
# sanitizers, plus libFuzzer's coverage, which changes nothing a test sees):
# fuzz/run.sh can then use the same BUILD_DIR and builds only the fuzz
# targets' own files, as scripts/test.sh does.
# Environment: CXX (default clang++), JOBS (default nproc), BUILD_TYPE
# (default RelWithDebInfo, here -O1 -gline-tables-only: what the
# sanitizers' documentation recommends, and stack traces with file and line,
# at about two thirds of the compile time of -O2 -g). Links with mold when it
# is installed (the instrumented test binaries are the largest links).
set -euo pipefail
cd "$(dirname "$0")/.."
step=all
case ${1:-} in --build-only) step=build; shift ;; --test-only) step=test; shift ;; esac
BUILD_DIR=${1:-build-asan}
shift || true
CXX=${CXX:-clang++}
JOBS=${JOBS:-$(nproc)}
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

FF_SANITIZE_TARGETS=(ff_unit_tests ff_behaviour_tests ff_agent_unit_tests ff_agent_http_tests
  ff_collector_tests ff_collector_munge_tests ff_spank_tests)
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(default)
expanded=()
for t in "${TARGETS[@]}"; do
  if [ "$t" = default ]; then expanded+=("${FF_SANITIZE_TARGETS[@]}"); else expanded+=("$t"); fi
done
TARGETS=("${expanded[@]}")
[ "${TARGETS[*]}" != all ] || TARGETS=()
LINK=""
command -v mold >/dev/null && LINK=" -fuse-ld=mold"

FLAGS=("-DCMAKE_CXX_FLAGS=$SAN" "-DCMAKE_EXE_LINKER_FLAGS=$SAN$LINK" "-DCMAKE_SHARED_LINKER_FLAGS=$SAN$LINK"
  "-DCMAKE_MODULE_LINKER_FLAGS=$SAN$LINK" -DFIRSTFAULT_FUZZ=OFF)
if [ "${FF_SANITIZE_FUZZ:-0}" = 1 ]; then
  FLAGS=(-DCMAKE_CXX_FLAGS= "-DCMAKE_EXE_LINKER_FLAGS=$LINK" "-DCMAKE_SHARED_LINKER_FLAGS=$LINK"
    "-DCMAKE_MODULE_LINKER_FLAGS=$LINK" -DFIRSTFAULT_FUZZ=ON)
fi
if [ $step != test ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
    -DFIRSTFAULT_BUILD_TESTS=ON "${FLAGS[@]}" >/dev/null

  # `all`: everything (the tests also run firstfault, firstfault-collect,
  # firstfault-epilog and the SPANK plugin). Otherwise only TARGETS, and what
  # they depend on.
  if [ ${#TARGETS[@]} -eq 0 ]; then
    cmake --build "$BUILD_DIR" -j "$JOBS"
  else
    available=$(cmake --build "$BUILD_DIR" --target help)
    build=()
    for t in "${TARGETS[@]}"; do
      if grep -q "^$t:" <<<"$available"; then build+=("$t"); else echo "sanitize: no target $t here, skipped"; fi
    done
    cmake --build "$BUILD_DIR" -j "$JOBS" --target "${build[@]}"
  fi
fi
[ $step != build ] || exit 0

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# A test binary that was not built shows up as one "<binary>_NOT_BUILT" test;
# those (and the plugin's symbol check without the plugin) are excluded. The
# munge fixture's setup is a slurm-labelled test and is left out (-FS): the
# munge-backed tests (ff_agent_http_tests, ff_collector_munge_tests) need a
# running munged (`tests/slurm/cluster.sh munge`).
exclude='_NOT_BUILT$'
[ -n "$(find "$BUILD_DIR" -name 'spank_firstfault.so' -print -quit)" ] || exclude+='|^spank_exported_symbols$'
if ! (munge -n 2>/dev/null | unmunge >/dev/null 2>&1); then
  echo "sanitize: munged is not answering: the munge-backed tests will fail; start it with tests/slurm/cluster.sh munge"
fi
args=(--test-dir "$BUILD_DIR" --output-on-failure -LE 'slurm|packaging' -FS ff_munge -E "$exclude" -j "$JOBS")
echo "sanitize: running ctest ${args[*]}"
ctest "${args[@]}" ${CTEST_EXTRA:-}
