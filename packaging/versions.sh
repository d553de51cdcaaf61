#!/usr/bin/env bash
# Prints the versions the packages are made of, as shell assignments:
#   FF_VERSION=0.1.0        from project(firstfault VERSION ...) in the top-level
#                           CMakeLists.txt, the one place the version is written
#   SLURM_SERIES=22.05      the Slurm release the plugin is built against
#   SLURM_NEXT=22.06        the exclusive upper bound of the dependency
# from slurm/slurm_version.h (libslurm-dev). Usage: eval "$(packaging/versions.sh)"
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

ff_version=$(sed -n 's/^project(firstfault VERSION \([0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
[[ $ff_version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || {
  echo "versions.sh: no project(firstfault VERSION x.y.z) in $top/CMakeLists.txt" >&2; exit 1; }

header=${SLURM_VERSION_HEADER:-/usr/include/slurm/slurm_version.h}
number=$(sed -n 's/^#define SLURM_VERSION_NUMBER \(0x[0-9a-fA-F]*\).*/\1/p' "$header" 2>/dev/null || true)
[[ -n $number ]] || { echo "versions.sh: no SLURM_VERSION_NUMBER in $header (libslurm-dev)" >&2; exit 1; }
major=$(((number >> 16) & 0xff))
minor=$(((number >> 8) & 0xff))

printf 'FF_VERSION=%s\n' "$ff_version"
printf 'SLURM_SERIES=%d.%02d\n' "$major" "$minor"
printf 'SLURM_NEXT=%d.%02d\n' "$major" "$((minor + 1))"
