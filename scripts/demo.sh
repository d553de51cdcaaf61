#!/usr/bin/env bash
# README command 1: build `firstfault` (only it: no test, plugin or collector
# target), then diagnose a bundled example incident.
#   scripts/demo.sh [INCIDENT_DIR] [--format json]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --build-only >&2
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Release}" >/dev/null
cmake --build build -j"$(nproc)" --target firstfault >&2
incident="${1:-examples/incidents/01-xid79-fallen-off-bus}"
shift || true
exec build/agent/firstfault analyze "$incident" "$@"
