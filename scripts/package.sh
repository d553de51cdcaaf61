#!/usr/bin/env bash
# Builds the firstfault packages, both formats:
#   dist/firstfault-node_<v>-1+slurm<S>_amd64.deb   dist/firstfault-node-<v>-1.slurm<S>.x86_64.rpm
#   dist/firstfault-agent_<v>-1+slurm<S>_amd64.deb  dist/firstfault-agent-<v>-1.slurm<S>.x86_64.rpm
#   dist/firstfault-<v>-1.slurm<S>.src.rpm and dist/firstfault-<v>.tar.gz (--srpm)
#
#   scripts/package.sh [--build-dir DIR] [--rpm-build-dir DIR] [--no-build] [--no-rpm-build]
#                      [--out DIR] [--work DIR] [--no-lintian] [--srpm] [--no-deb]
#
# 1. compiles with CMake (Release, dpkg-buildflags' hardening) into
#    build-package/ (or --build-dir; --no-build packs that tree as it is) for
#    the .debs, and, for the RPMs, the shipped programs only into build-rpm/
#    (or --rpm-build-dir) with FIRSTFAULT_PORTABLE_RPM (cmake/portable_rpm.cmake:
#    C++ libraries and libstdc++ static, so that the RPMs install on EL9); that
#    build is incremental, --no-rpm-build packs it as it is,
# 2. installs each with `cmake --install` into a staging tree per layout
#    (Slurm's plugin directory and the systemd unit directory differ), and
#    adds the files of packaging/common/ (packaging/common/install.sh),
# 3. packs the Debian tree with debhelper (packaging/deb) and the RPM tree
#    with rpmbuild (packaging/rpm/firstfault.spec), then runs lintian.
# --srpm also writes the source tarball (git archive of HEAD) and a source
# RPM whose spec builds from it on an EL9 host (packaging/rpm/README.md).
# --no-deb: the RPMs only (no Debian build, no .debs).
# The version is project(firstfault VERSION ...) of the top-level CMakeLists.txt
# and the Slurm release is libslurm-dev's (packaging/versions.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

build_dir=$top/build-package
rpm_build_dir=$top/build-rpm
out_dir=$top/dist
work_dir=""
do_build=1
do_rpm_build=1
do_lintian=1
do_srpm=0
do_deb=1
while (($#)); do
  case $1 in
    --build-dir) build_dir=$(realpath -m "$2"); shift 2 ;;
    --rpm-build-dir) rpm_build_dir=$(realpath -m "$2"); shift 2 ;;
    --out) out_dir=$(realpath -m "$2"); shift 2 ;;
    --work) work_dir=$(realpath -m "$2"); shift 2 ;;
    --no-build) do_build=0; shift ;;
    --no-rpm-build) do_rpm_build=0; shift ;;
    --no-lintian) do_lintian=0; shift ;;
    --srpm) do_srpm=1; shift ;;
    --no-deb) do_deb=0; shift ;;
    *) echo "usage: $0 [--build-dir DIR] [--rpm-build-dir DIR] [--no-build] [--no-rpm-build]" \
         "[--out DIR] [--work DIR] [--no-lintian] [--srpm] [--no-deb]" >&2; exit 64 ;;
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

# --- 1. compile -----------------------------------------------------------------
# The programs the packages ship: nothing else is built.
shipped_targets=(firstfault firstfault-slurm-job firstfault-collect firstfault-epilog spank_firstfault)
# Debian's default hardening (no bindnow: the plugin's spank_* symbols come
# from the process that loads it, and Slurm's own plugins bind lazily too).
# From the top directory: -ffile-prefix-map names the current one, and a flag
# that changes with it would make each build start over.
cxxflags=$(cd "$top" && echo "$(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CXXFLAGS)")
ldflags=$(cd "$top" && dpkg-buildflags --get LDFLAGS)
# The RPMs ship stripped programs and no debuginfo package (the spec): no -g,
# which saves compile time.
rpm_cxxflags=$(sed -E 's/(^| )-g( |$)/ /' <<<"$cxxflags")
# compile DIR PLUGIN_DIR CXXFLAGS [CMAKE_ARGS...]: configures DIR, builds the shipped programs.
compile() {
  local dir=$1 plugin_dir=$2 flags=$3
  shift 3
  cmake -S "$top" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DFIRSTFAULT_BUILD_TESTS=OFF \
    -DFIRSTFAULT_SPANK_INSTALL_DIR="${plugin_dir#usr/}" \
    -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$ldflags" -DCMAKE_MODULE_LINKER_FLAGS="$ldflags" \
    -DCMAKE_SHARED_LINKER_FLAGS="$ldflags" "$@" >/dev/null
  cmake --build "$dir" -j"$(nproc)" --target "${shipped_targets[@]}"
}
((do_build && do_deb)) && compile "$build_dir" "$deb_plugin_dir" "$cxxflags"
if ((do_rpm_build)); then
  log "RPM build, portable to EL9 (cmake/portable_rpm.cmake) in $rpm_build_dir"
  compile "$rpm_build_dir" "$rpm_plugin_dir" "$rpm_cxxflags" -DFIRSTFAULT_PORTABLE_RPM=ON
fi
build_dirs=("$rpm_build_dir")
((do_deb)) && build_dirs+=("$build_dir")
for dir in "${build_dirs[@]}"; do
  [[ -f $dir/CMakeCache.txt ]] || { log "no CMake build in $dir"; exit 1; }
done
grep -q '^FIRSTFAULT_PORTABLE_RPM:BOOL=ON' "$rpm_build_dir/CMakeCache.txt" ||
  { log "$rpm_build_dir is not a FIRSTFAULT_PORTABLE_RPM build: its RPMs would not install on EL9"; exit 1; }

# --- 2. staging trees ----------------------------------------------------------
# stage BUILD_DIR DEST PLUGIN_DIR UNIT_DIR: cmake --install, plugin moved into
# Slurm's plugin directory, the files of packaging/common/ added.
stage() {
  local build=$1 dest=$2 plugin_dir=$3 unit_dir=$4 built_plugin_dir
  # Where that build's install() puts the plugin (FIRSTFAULT_SPANK_INSTALL_DIR).
  built_plugin_dir=usr/$(sed -n 's/^FIRSTFAULT_SPANK_INSTALL_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
  rm -rf "$dest"
  DESTDIR=$dest cmake --install "$build" --prefix /usr >/dev/null
  if [[ $built_plugin_dir != "$plugin_dir" ]]; then
    mkdir -p "$dest/$plugin_dir"
    mv "$dest/$built_plugin_dir/spank_firstfault.so" "$dest/$plugin_dir/"
    rmdir -p --ignore-fail-on-non-empty "$dest/$built_plugin_dir"
  fi
  "$top/packaging/common/install.sh" "$dest" "$unit_dir"
}

# --- 3a. Debian ----------------------------------------------------------------
rm -rf "$work_dir"
mkdir -p "$work_dir" "$out_dir"
rm -f "$out_dir"/firstfault-*.deb "$out_dir"/firstfault-*.rpm "$out_dir"/firstfault-*.tar.gz
if ((do_deb)); then
  stage "$build_dir" "$work_dir/stage-deb" "$deb_plugin_dir" "$deb_unit_dir"
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
  cp "$work_dir"/deb/firstfault-{node,agent}_"${deb_version}"_amd64.deb "$out_dir/"
fi

# --- 3b. RPM -------------------------------------------------------------------
stage "$rpm_build_dir" "$work_dir/stage-rpm" "$rpm_plugin_dir" "$rpm_unit_dir"
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

# --- 3c. source tarball and source RPM -------------------------------------------
if ((do_srpm)); then
  # The committed tree (git archive HEAD), as a site builds it on EL9. The
  # spec in the source RPM carries the version; the Slurm release is the
  # building host's (the spec reads its slurm/slurm_version.h).
  tarball=$out_dir/firstfault-$FF_VERSION.tar.gz
  git -C "$top" archive --format=tar.gz --prefix="firstfault-$FF_VERSION/" -o "$tarball" HEAD
  srpm_dir=$work_dir/rpmbuild-srpm
  mkdir -p "$srpm_dir/SOURCES" "$srpm_dir/SPECS"
  cp "$tarball" "$srpm_dir/SOURCES/"
  { printf '%%global ff_version %s\n' "$FF_VERSION"; cat "$top/packaging/rpm/firstfault.spec"; } \
    >"$srpm_dir/SPECS/firstfault.spec"
  log "rpmbuild -bs (log: $srpm_dir/build.log)"
  rpmbuild -bs --nodeps --define "_topdir $srpm_dir" "$srpm_dir/SPECS/firstfault.spec" \
    >"$srpm_dir/build.log" 2>&1 || { tail -30 "$srpm_dir/build.log" >&2; exit 1; }
  cp "$srpm_dir"/SRPMS/firstfault-*.src.rpm "$out_dir/"
fi

# --- 4. lintian ----------------------------------------------------------------
if ((do_deb && do_lintian)) && command -v lintian >/dev/null; then
  log "lintian (overrides in packaging/deb/*.lintian-overrides)"
  lintian --fail-on error "$out_dir"/firstfault-*.deb >&2
fi
ls -1 "$out_dir"/firstfault-*
