#!/usr/bin/env bash
# README command 1: build, then diagnose a bundled example incident.
#   scripts/demo.sh [INCIDENT_DIR] [--format json]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >&2
incident="${1:-examples/incidents/01-xid79-fallen-off-bus}"
shift || true
exec build/agent/firstfault analyze "$incident" "$@"
