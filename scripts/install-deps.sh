#!/usr/bin/env bash
# Installs the Debian packages firstfault builds and tests with.
#   scripts/install-deps.sh [--build-only]   (--build-only: what `firstfault` needs)
# Idempotent: a package already installed costs nothing. Needs root (or sudo).
set -euo pipefail

# What `firstfault` itself needs to configure and build (scripts/demo.sh).
build_packages=(
  build-essential cmake pkg-config ninja-build
  libre2-dev nlohmann-json3-dev libspdlog-dev libyaml-cpp-dev libcli11-dev
  zlib1g-dev libgtest-dev libgmock-dev libhowardhinnant-date-dev tzdata
  libsqlite3-dev libcurl4-openssl-dev libcpp-httplib-dev libmunge-dev
  libssl-dev  # SHA-256 (libcrypto) of what a munge credential vouches for
  libsystemd-dev  # the collector's journal source
  prometheus-cpp-dev  # the agent's GET /metrics (core library: registry and text format)
)
# What the whole test suite needs besides (scripts/test.sh).
test_packages=(
  python3 gzip sqlite3 munge clang-format
  libslurm-dev slurm-wlm slurmctld slurmd slurm-client bats curl procps
  # tests/slurm/cluster.sh: accounting as sites run it, slurmdbd on MariaDB
  slurmdbd slurm-wlm-mysql-plugin mariadb-server
  rsyslog inotify-tools  # tests/slurm/hostile_user.bats: real `logger` lines, no open of a target
  debhelper dpkg-dev fakeroot lintian rpm file binutils
  rpm2cpio cpio rpmlint  # tests/packaging/check_rpm_requires.sh: RPM payloads, rpmlint
  systemd-journal-remote  # tests of the collector's journal source
  prometheus  # tests/central/prometheus_real_server_test.cpp runs a real Prometheus
  chromium  # tests/agent/http_dashboard_test.cpp renders the dashboard headless
  # scripts/sanitize.sh and fuzz/run.sh (scripts/test.sh runs both): clang, its
  # ASan/UBSan/libFuzzer runtimes (libclang_rt.*, only recommended by clang-14,
  # and this script installs no recommends) and llvm-symbolizer for stack traces.
  clang libclang-rt-14-dev llvm
  # scripts/ccache.sh: every build of test.sh through ccache (cache outside the
  # clone); mold links the instrumented test binaries; stress-ng loads the
  # cores for scripts/test-under-load.sh
  ccache mold stress-ng
)
packages=("${build_packages[@]}")
[ "${1:-}" = --build-only ] || packages+=("${test_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
