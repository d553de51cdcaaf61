#!/usr/bin/env bash
# README command 2: build, then run every test (ctest: unit and behaviour
# tests, the bundled examples, determinism, bad input).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
# The scorer of the project, on the bundled examples, when python3 is present.
if command -v python3 >/dev/null && [ -f tools/score.py ]; then
  python3 tools/score.py --root examples/incidents --cmd "build/agent/firstfault analyze {dir} --format json" --quiet
fi
