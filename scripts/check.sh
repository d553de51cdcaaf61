#!/usr/bin/env bash
# The contributor's loop: rebuilds build/ incrementally (through ccache,
# scripts/ccache.sh) and runs the unit and behaviour tests, the engine's, on
# every core. After a one-file change it takes a minute or two on 2 cores.
#
#   scripts/check.sh [LABEL...]     default: unit behaviour
#   scripts/check.sh unit behaviour agent store
#
# Labels (ctest -L): unit, behaviour, agent, store, spank, central, slurm
# (root, the test cluster), packaging. Before a commit: the labels of what you
# touched. Before a stop: scripts/test.sh, as CI runs it (CONTRIBUTING.md).
# Installs nothing: run scripts/install-deps.sh once on a new machine.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/ccache.sh
labels=("$@")
[ ${#labels[@]} -gt 0 ] || labels=(unit behaviour)
[ -f build/CMakeCache.txt ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
# Only the targets those tests need when they are the engine's; else all.
if [ "${labels[*]}" = "unit behaviour" ] || [ "${labels[*]}" = unit ] || [ "${labels[*]}" = behaviour ]; then
  cmake --build build -j"$(nproc)" --target ff_unit_tests ff_behaviour_tests firstfault
else
  cmake --build build -j"$(nproc)"
fi
pattern=$(IFS='|'; echo "${labels[*]}")
ctest --test-dir build --output-on-failure -j"$(nproc)" -L "^($pattern)\$"
