#!/usr/bin/env bash
# Builds the firstfault packages, both formats, from one compile:
#   dist/firstfault-node_<v>-1+slurm<S>_amd64.deb   dist/firstfault-node-<v>-1.slurm<S>.x86_64.rpm
#   dist/firstfault-agent_<v>-1+slurm<S>_amd64.deb  dist/firstfault-agent-<v>-1.slurm<S>.x86_64.rpm
#
#   scripts/package.sh [--build-dir DIR] [--no-build] [--out DIR] [--work DIR] [--no-lintian]
#
# 1. compiles once with CMake (Release, dpkg-buildflags' hardening) into
#    build-package/ (or --build-dir; --no-build packs that tree as it is),
# 2. installs it twice with `cmake --install` into staging trees, one per
#    layout (Slurm's plugin directory and the systemd unit directory differ),
#    and adds the config files of packaging/common/,
# 3. packs the Debian tree with debhelper (packaging/deb) and the RPM tree
#    with rpmbuild (packaging/rpm/firstfault.spec), then runs lintian.
# The version is project(firstfault VERSION ...) of the top-level CMakeLists.txt
# and the Slurm release is libslurm-dev's (packaging/versions.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

build_dir=$top/build-package
out_dir=$top/dist
work_dir=""
do_build=1
do_lintian=1
while (($#)); do
  case $1 in
    --build-dir) build_dir=$(realpath -m "$2"); shift 2 ;;
    --out) out_dir=$(realpath -m "$2"); shift 2 ;;
    --work) work_dir=$(realpath -m "$2"); shift 2 ;;
    --no-build) do_build=0; shift ;;
    --no-lintian) do_lintian=0; shift ;;
    *) echo "usage: $0 [--build-dir DIR] [--no-build] [--out DIR] [--work DIR] [--no-lintian]" >&2; exit 64 ;;
  esac
done
work_dir=${work_dir:-$build_dir/packaging}

log() { printf 'package: %s\n' "$*" >&2; }

eval "$("$top/packaging/versions.sh")"
deb_version="${FF_VERSION}-1+slurm${SLURM_SERIES}"
log "firstfault $FF_VERSION, Slurm $SLURM_SERIES: deb $deb_version, rpm ${FF_VERSION}-1.slurm${SLURM_SERIES}"

deb_plugin_dir=usr/lib/x86_64-linux-gnu/slurm-wlm   # Debian's PluginDir
deb_unit_dir=lib/systemd/system
rpm_plugin_dir=$(rpm --eval '%{_libdir}')/slurm       # /usr/lib64/slurm
rpm_plugin_dir=${rpm_plugin_dir#/}
rpm_unit_dir=usr/lib/systemd/system

# --- 1. compile once ---------------------------------------------------------
if ((do_build)); then
  # Debian's default hardening (no bindnow: the plugin's spank_* symbols come
  # from the process that loads it, and Slurm's own plugins bind lazily too).
  cxxflags="$(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CXXFLAGS)"
  ldflags=$(dpkg-buildflags --get LDFLAGS)
  cmake -S "$top" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DFIRSTFAULT_BUILD_TESTS=OFF \
    -DFIRSTFAULT_SPANK_INSTALL_DIR="${deb_plugin_dir#usr/}" \
    -DCMAKE_CXX_FLAGS="$cxxflags" \
    -DCMAKE_EXE_LINKER_FLAGS="$ldflags" -DCMAKE_MODULE_LINKER_FLAGS="$ldflags" \
    -DCMAKE_SHARED_LINKER_FLAGS="$ldflags" >/dev/null
  cmake --build "$build_dir" -j"$(nproc)" --target firstfault firstfault-slurm-job firstfault-collect firstfault-epilog spank_firstfault
fi
[[ -f $build_dir/CMakeCache.txt ]] || { log "no CMake build in $build_dir"; exit 1; }
# Where that build's install() puts the plugin (FIRSTFAULT_SPANK_INSTALL_DIR).
built_plugin_dir=usr/$(sed -n 's/^FIRSTFAULT_SPANK_INSTALL_DIR:[A-Z]*=//p' "$build_dir/CMakeCache.txt")

# --- 2. staging trees ----------------------------------------------------------
# stage DEST PLUGIN_DIR UNIT_DIR: cmake --install, plugin moved into Slurm's
# plugin directory, configs and the unit from packaging/common/ added.
stage() {
  local dest=$1 plugin_dir=$2 unit_dir=$3 common=$top/packaging/common
  rm -rf "$dest"
  DESTDIR=$dest cmake --install "$build_dir" --prefix /usr >/dev/null
  if [[ $built_plugin_dir != "$plugin_dir" ]]; then
    mkdir -p "$dest/$plugin_dir"
    mv "$dest/$built_plugin_dir/spank_firstfault.so" "$dest/$plugin_dir/"
    rmdir -p --ignore-fail-on-non-empty "$dest/$built_plugin_dir"
  fi
  install -D -m 0644 "$common/node.yaml" "$dest/etc/firstfault/node.yaml"
  install -D -m 0644 "$common/agent.yaml" "$dest/etc/firstfault/agent.yaml"
  install -D -m 0644 "$common/plugstack-firstfault.conf" "$dest/etc/slurm/plugstack.conf.d/firstfault.conf"
  install -D -m 0644 "$common/firstfault-agent.service" "$dest/$unit_dir/firstfault-agent.service"
  install -d -m 0750 "$dest/var/lib/firstfault"
}

# --- 3a. Debian ----------------------------------------------------------------
rm -rf "$work_dir"
mkdir -p "$work_dir" "$out_dir"
stage "$work_dir/stage-deb" "$deb_plugin_dir" "$deb_unit_dir"
rmdir "$work_dir/stage-deb/var/lib/firstfault"   # made by firstfault-agent.dirs

src=$work_dir/deb/firstfault-$FF_VERSION
mkdir -p "$src/debian"
cp -a "$top/packaging/deb/." "$src/debian/"
rm -f "$src/debian/README.md" "$src/debian/changelog.in"
sed -e "s/@DEB_VERSION@/$deb_version/" -e "s/@FF_VERSION@/$FF_VERSION/" \
    -e "s/@SLURM_SERIES@/$SLURM_SERIES/" -e "s/@DATE@/$(date -R)/" \
    "$top/packaging/deb/changelog.in" >"$src/debian/changelog"
log "dpkg-buildpackage (log: $work_dir/deb/build.log)"
(cd "$src" && FF_STAGE="$work_dir/stage-deb" FF_SLURM_SERIES=$SLURM_SERIES FF_SLURM_NEXT=$SLURM_NEXT \
  dpkg-buildpackage -b -us -uc) >"$work_dir/deb/build.log" 2>&1 ||
  { tail -30 "$work_dir/deb/build.log" >&2; exit 1; }
rm -f "$out_dir"/firstfault-*.deb "$out_dir"/firstfault-*.rpm
cp "$work_dir"/deb/firstfault-{node,agent}_"${deb_version}"_amd64.deb "$out_dir/"

# --- 3b. RPM -------------------------------------------------------------------
stage "$work_dir/stage-rpm" "$rpm_plugin_dir" "$rpm_unit_dir"
# The spec turns debuginfo off: strip here, as dh_strip does for the .debs.
find "$work_dir/stage-rpm/usr" -type f \( -name '*.so' -o -perm -0100 \) \
  -exec sh -c 'file -b "$1" | grep -q ELF && strip --strip-unneeded "$1"' _ {} \;
log "rpmbuild (log: $work_dir/rpmbuild/build.log)"
mkdir -p "$work_dir/rpmbuild"
rpmbuild -bb --nodeps \
  --define "_topdir $work_dir/rpmbuild" \
  --define "ff_version $FF_VERSION" --define "ff_stage $work_dir/stage-rpm" \
  --define "slurm_series $SLURM_SERIES" --define "slurm_next $SLURM_NEXT" \
  "$top/packaging/rpm/firstfault.spec" >"$work_dir/rpmbuild/build.log" 2>&1 ||
  { tail -30 "$work_dir/rpmbuild/build.log" >&2; exit 1; }
cp "$work_dir"/rpmbuild/RPMS/x86_64/firstfault-{node,agent}-*.rpm "$out_dir/"

# --- 4. lintian ----------------------------------------------------------------
if ((do_lintian)) && command -v lintian >/dev/null; then
  log "lintian (overrides in packaging/deb/*.lintian-overrides)"
  lintian --fail-on error "$out_dir"/firstfault-*.deb >&2
fi
ls -1 "$out_dir"/firstfault-*
