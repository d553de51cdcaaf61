#!/usr/bin/env bash
# build_packages.sh BUILD_DIR OUT_DIR WORK_DIR RPM_BUILD_DIR: the ctest fixture
# packing the already built BUILD_DIR into .debs with scripts/package.sh
# --no-build; the RPMs come from RPM_BUILD_DIR, which package.sh configures
# and builds (the shipped programs only, incrementally) with
# FIRSTFAULT_PORTABLE_RPM; --srpm adds the source RPM. Exit 77 (skip) when a
# tool is missing: scripts/install-deps.sh installs them all.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build_dir=$1 out_dir=$2 work_dir=$3 rpm_build_dir=$4
rm -rf "$out_dir"  # never let a later test check an earlier run's packages

for tool in dpkg-buildpackage dh rpmbuild lintian; do
  command -v "$tool" >/dev/null || { echo "$tool not installed: skipped"; exit 77; }
done
[[ -f $build_dir/spank/spank_firstfault.so ]] ||
  { echo "no spank_firstfault.so in $build_dir (libslurm-dev missing?): skipped"; exit 77; }

# The source tarball is a git archive: only from a git checkout.
srpm=()
git -C "$here" rev-parse --git-dir >/dev/null 2>&1 && srpm=(--srpm)
exec "$here/../../scripts/package.sh" --build-dir "$build_dir" --no-build \
  --rpm-build-dir "$rpm_build_dir" --out "$out_dir" --work "$work_dir" "${srpm[@]}"
