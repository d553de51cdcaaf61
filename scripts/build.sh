#!/usr/bin/env bash
# Installs the Debian build dependencies (when missing) and builds into build/,
# through ccache when installed (scripts/ccache.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
. scripts/ccache.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Release}" >/dev/null
cmake --build build -j"$(nproc)"
