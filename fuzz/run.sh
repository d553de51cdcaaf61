#!/usr/bin/env bash
# Builds the libFuzzer targets, makes their seed corpora and runs each one for
# a fixed time. Prints the executions per target and any crash, leak, timeout
# or out-of-memory input; exits non-zero when one was found.
#
#   fuzz/run.sh [SECONDS_PER_TARGET=60] [BUILD_DIR=build-fuzz]
#   fuzz/run.sh --list            (the targets it runs)
#   FUZZ_TARGETS="fuzz_event_extractor fuzz_timestamp_parser" fuzz/run.sh 600
#
# Environment: FUZZ_TARGETS (default: all), JOBS (build parallelism, default
# nproc), FUZZ_PARALLEL (targets run at once, default nproc), FUZZ_FLAGS (extra
# libFuzzer flags). The corpus grows in
# BUILD_DIR/corpus/<target>; findings go to BUILD_DIR/artifacts/<target>/ and
# the libFuzzer output to BUILD_DIR/logs/<target>.log.
set -uo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-60}
BUILD_DIR=${2:-build-fuzz}
JOBS=${JOBS:-$(nproc)}
ALL="fuzz_timestamp_parser fuzz_event_extractor fuzz_job_json fuzz_rule_file fuzz_gzip_lines fuzz_flight_recorder
     fuzz_scontrol_parser fuzz_bundle_paths fuzz_hostlist fuzz_bundle_upload fuzz_http_request"
TARGETS=${FUZZ_TARGETS:-$ALL}
# --list: the targets, one line (scripts/test.sh builds them ahead).
if [ "$SECONDS_PER_TARGET" = --list ]; then
  echo $TARGETS
  exit 0
fi

# -O1 -gline-tables-only: as scripts/sanitize.sh, for the same reasons.
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DFIRSTFAULT_FUZZ=ON \
  -DFIRSTFAULT_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" >/dev/null || exit 2
# shellcheck disable=SC2086
cmake --build "$BUILD_DIR" -j "$JOBS" --target $TARGETS || exit 2
fuzz/make_corpus.sh "$BUILD_DIR/corpus" >/dev/null || exit 2

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# fuzz_one TARGET: runs it and writes its result line to logs/TARGET.result.
fuzz_one() {
  local t=$1 art="$BUILD_DIR/artifacts/$1/" log="$BUILD_DIR/logs/$1.log" before rc execs seeds
  mkdir -p "$art" "$BUILD_DIR/logs"
  before=$(find "$art" -type f | wc -l)
  # The recorded findings (fuzz/crashes/<target>) are read as a second corpus:
  # every run replays them first, so a regression stops the run.
  seeds=("$BUILD_DIR/corpus/$t")
  [ -d "fuzz/crashes/$t" ] && seeds+=("fuzz/crashes/$t")
  # shellcheck disable=SC2086
  "$BUILD_DIR/fuzz/$t" -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 \
    -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$art" ${FUZZ_FLAGS:-} \
    "${seeds[@]}" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  # -fork mode has no stat:: line; its "#N: cov: ..." lines count all jobs.
  [ -n "$execs" ] || execs=$(grep -o '#[0-9]*: cov' "$log" | tail -n 1 | tr -dc '0-9')
  {
    if [ "$rc" -ne 0 ] || [ "$(find "$art" -type f | wc -l)" -gt "$before" ]; then
      printf '%-24s %12s  FOUND (exit %s)\n' "$t" "${execs:-?}" "$rc"
      find "$art" -type f -printf '    %p\n' | tail -n 5
      grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY' "$log" | sed 's/^/    /'
    else
      printf '%-24s %12s  ok\n' "$t" "${execs:-?}"
    fi
  } >"$BUILD_DIR/logs/$t.result"
}

# Each target is one single-threaded process: FUZZ_PARALLEL (default nproc) of
# them at a time, each for its full SECONDS_PER_TARGET.
parallel=${FUZZ_PARALLEL:-$(nproc)}
running=0
for t in $TARGETS; do
  rm -f "$BUILD_DIR/logs/$t.result"
  fuzz_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$parallel" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait
found=0
printf '%-24s %12s  %s\n' target executions result
for t in $TARGETS; do
  if [ -f "$BUILD_DIR/logs/$t.result" ]; then
    cat "$BUILD_DIR/logs/$t.result"
    grep -q ' FOUND ' "$BUILD_DIR/logs/$t.result" && found=1
  else
    printf '%-24s %12s  FOUND (no result)\n' "$t" "?"
    found=1
  fi
done
exit $found
