#!/usr/bin/env bash
# README command 2: build, then run every test.
#   1. ctest: unit, behaviour, component and packaging tests, and the
#      end-to-end tests on a real Slurm cluster against this build.
#   2. As root: the .deb packages ctest built are installed and the end-to-end
#      tests labelled `installed` (tests/slurm/CMakeLists.txt) run again
#      against the installed files (plugin from Slurm's plugin directory,
#      Epilog and collector from /usr/libexec/firstfault, agent from its
#      unit's command line); then the packages are removed again.
#   3. The project's scorer on the bundled examples.
#   4. Hardening: the tests of what the sanitizers protect (parsers, engine,
#      agent intake, collector, plugin parts: scripts/sanitize.sh) again under
#      ASan and UBSan (clang), then a fuzz smoke run of every libFuzzer target
#      (fuzz/run.sh, FF_FUZZ_SECONDS per target, default 10, two at a time),
#      both in build-hardening/. Its build starts in the background at the
#      lowest CPU priority as soon as build/ is done, so it compiles while
#      the tests of step 1 wait for Slurm; its log is build-hardening/background-build.log.
#      A sanitizer report, a failed test or a fuzz finding fails the run.
#      FF_SKIP_HARDENING=1 skips this step (quick local runs; CI runs it).
# Every build compiles through ccache (scripts/ccache.sh), its cache outside
# the clone: a machine that has run this before rebuilds from it.
#   0. The format check (scripts/check-format.sh) comes first: it takes seconds.
# At the end (or at the failure) it prints how long each stage took.
set -euo pipefail
cd "$(dirname "$0")/.."

stage_names=()
stage_seconds=()
stage_started=$SECONDS
current_stage=""
begin_stage() {
  end_stage
  current_stage="$1"
  stage_started=$SECONDS
  echo "test.sh: == $current_stage"
}
end_stage() {
  if [ -n "$current_stage" ]; then
    stage_names+=("$current_stage")
    stage_seconds+=($((SECONDS - stage_started)))
    current_stage=""
  fi
}
print_stage_times() {
  local rc=$?
  end_stage
  echo "test.sh: stage times (exit $rc)"
  local i
  for i in "${!stage_names[@]}"; do
    printf 'test.sh:   %6ss  %s\n' "${stage_seconds[$i]}" "${stage_names[$i]}"
  done
  printf 'test.sh:   %6ss  total\n' "$SECONDS"
}
hardening_pid=""
stop_hardening_build() {
  if [ -n "$hardening_pid" ]; then kill -- "-$hardening_pid" 2>/dev/null || kill "$hardening_pid" 2>/dev/null || true; fi
}
trap 'stop_hardening_build; print_stage_times' EXIT

begin_stage "Debian packages, format check (clang-format)"
scripts/install-deps.sh
scripts/check-format.sh
. scripts/ccache.sh
command -v ccache >/dev/null && ccache --zero-stats >/dev/null
begin_stage "build"
scripts/build.sh

# The hardening build, in the background at nice 19: it takes only the CPU the
# tests leave (set -m: its own process group, so the trap stops all of it).
if [ "${FF_SKIP_HARDENING:-0}" != 1 ]; then
  mkdir -p build-hardening
  set -m
  (
    start=$SECONDS
    # One build for both: the fuzz configuration instruments every library
    # with the same sanitizers, so the fuzz targets share the tests' objects.
    # shellcheck disable=SC2046
    FF_SANITIZE_FUZZ=1 nice -n 19 scripts/sanitize.sh --build-only build-hardening default $(fuzz/run.sh --list)
    echo "test.sh: hardening build took $((SECONDS - start))s in the background"
  ) >build-hardening/background-build.log 2>&1 &
  hardening_pid=$!
  set +m
fi
begin_stage "ctest (unit, behaviour, component, Slurm end to end, packaging)"
ctest --test-dir build --output-on-failure -j"$(nproc)"

debs=(build/tests/packaging/dist/firstfault-node_*.deb build/tests/packaging/dist/firstfault-agent_*.deb)
if [ "$(id -u)" -eq 0 ] && [ -f "${debs[0]}" ] && [ -f "${debs[1]}" ]; then
  if dpkg-query -W -f='${Status}' firstfault-agent 2>/dev/null | grep -q "install ok installed"; then
    echo "test.sh: firstfault is installed on this machine already: not testing the packages end to end"
  else
    begin_stage "installed packages, Slurm end to end"
    remove_packages() { dpkg -r firstfault-node firstfault-agent >/dev/null 2>&1 || true; }
    trap 'remove_packages; stop_hardening_build; print_stage_times' EXIT
    dpkg -i "${debs[@]}" >/dev/null
    FF_E2E_DEPLOY=--installed ctest --test-dir build --output-on-failure -L installed
    remove_packages
    trap 'stop_hardening_build; print_stage_times' EXIT
  fi
fi

# The scorer of the project, on the bundled examples, when python3 is present.
if command -v python3 >/dev/null && [ -f tools/score.py ]; then
  begin_stage "scorer on examples/incidents"
  python3 tools/score.py --root examples/incidents --cmd "build/agent/firstfault analyze {dir} --format json" --quiet
fi

# 4. Sanitizers and fuzz smoke run. The munge-backed tests need munged: the
# ctest fixture above leaves it running; cluster.sh munge starts it otherwise.
if [ "${FF_SKIP_HARDENING:-0}" = 1 ]; then
  echo "test.sh: FF_SKIP_HARDENING=1: sanitizer and fuzz smoke runs skipped"
else
  if [ "$(id -u)" -eq 0 ]; then tests/slurm/cluster.sh munge; fi
  begin_stage "sanitizers (ASan, UBSan): rest of the build, then the tests"
  if ! wait "$hardening_pid"; then
    hardening_pid=""
    tail -n 60 build-hardening/background-build.log
    echo "test.sh: the hardening build failed (build-hardening/background-build.log)"
    exit 1
  fi
  hardening_pid=""
  tail -n 1 build-hardening/background-build.log
  FF_SANITIZE_FUZZ=1 scripts/sanitize.sh --test-only build-hardening
  begin_stage "fuzz smoke run"
  fuzz/run.sh "${FF_FUZZ_SECONDS:-10}" build-hardening
fi
if command -v ccache >/dev/null; then ccache --show-stats | grep -E 'Hits|Misses|Cache size' || true; fi
