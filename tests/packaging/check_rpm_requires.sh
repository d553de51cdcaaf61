#!/usr/bin/env bash
# check_rpm_requires.sh DIST_DIR: the RPMs install on EL9 (Rocky/Alma/RHEL 9:
# glibc 2.34, GCC 11's libgcc_s, no GCC 12 libstdc++). For every RPM in DIST_DIR
#   - `rpm -qpR` lists only requirements of the allow-list below, each with its
#     reason (a library outside it is a library EL9 may not ship, or not under
#     that soname or symbol version);
#   - every ELF file of the payload needs no GLIBC_ version above 2.34, no
#     GCC_ version above GCC 11's libgcc_s, and no GLIBCXX_/CXXABI_ version at
#     all (libstdc++ is linked statically: cmake/portable_rpm.cmake), and has
#     no run path;
#   - rpmlint passes on them and on the source RPM (scripts/package.sh
#     --srpm), with packaging/rpm/firstfault.rpmlintrc; the spec parses for
#     the source build (rpmspec -P, no staged tree).
set -euo pipefail
dist=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
for tool in rpm rpm2cpio cpio readelf rpmlint; do
  command -v "$tool" >/dev/null || { echo "$tool not installed: skipped"; exit 77; }
done
compgen -G "$dist/*.x86_64.rpm" >/dev/null || { echo "no RPMs in $dist: skipped"; exit 77; }
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# The allow-list: one extended regex per line, then its reason.
allowed=(
  '^rpmlib\(.*\) <= [0-9.-]+$'                 "rpm's own features, added by rpmbuild"
  '^config\(firstfault-(node|agent)\) = [^ ]+$' "rpm's own, for the package's %config files"
  '^/bin/sh$'                                  "the scriptlets (%post, %preun, %postun)"
  '^rtld\(GNU_HASH\)$'                         "the dynamic loader's hash style, EL9's ld.so has it"
  '^slurm( [<>]=? [0-9.]+)?$'                  "the plugin's Slurm release (packaging/rpm/firstfault.spec)"
  '^munge$'                                    "munged authenticates the evidence uploads"
  '^ld-linux-x86-64\.so\.2\((GLIBC_[0-9.]+)?\)\(64bit\)$' "glibc's loader (versions checked below)"
  '^lib(c|m)\.so\.6\((GLIBC_[0-9.]+)?\)\(64bit\)$' "glibc: libc, libm (libpthread, libdl are in libc since 2.34; versions checked below)"
  '^libgcc_s\.so\.1\((GCC_[0-9.]+)?\)\(64bit\)$' "libgcc_s, dynamic: GCC 12's static unwinder needs glibc 2.35 (versions checked below)"
  '^libcurl\.so\.4\(\)\(64bit\)$'              "EL9 libcurl (unversioned there: the programs link a stub, cmake/portable_rpm.cmake)"
  '^libsqlite3\.so\.0\(\)\(64bit\)$'           "EL9 sqlite-libs"
  '^libmunge\.so\.2\(\)\(64bit\)$'             "EL9/EPEL munge-libs"
  '^libz\.so\.1(\(\)|\(ZLIB_1\.2\.([0-9]|1[01])(\.[0-9]+)?\))\(64bit\)$' "EL9 zlib 1.2.11: its symbol versions up to ZLIB_1.2.11"
  '^libcrypto\.so\.3(\(\)|\(OPENSSL_3\.0\.[0-9]+\))\(64bit\)$' "EL9 openssl-libs 3.0: the SHA-256 of uploads"
  '^libsystemd\.so\.0(\(\)|\(LIBSYSTEMD_(2[0-4][0-9]|250)\))\(64bit\)$' "EL9 systemd-libs (250 in 9.0): the collector's journal source"
  '^libslurm\.so\.[0-9]+\(\)\(64bit\)$'        "the Slurm release's libslurm (firstfault-slurm-job), from the slurm package"
)
# The highest versions EL9 provides.
glibc_max=2.34   # glibc 2.34
gcc_max=11       # libgcc_s of GCC 11: GCC_3.0 .. GCC_7.0.0, never GCC_12.0.0

version_le() { [[ $(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1) == "$1" ]]; }

for rpmf in "$dist"/*.x86_64.rpm; do
  name=$(basename "$rpmf")
  while IFS= read -r req; do
    ok=0
    for ((i = 0; i < ${#allowed[@]}; i += 2)); do
      [[ $req =~ ${allowed[i]} ]] && { ok=1; break; }
    done
    ((ok)) || fail "$name requires '$req', not in the allow-list of $0"
    if [[ $req =~ \(GLIBC_([0-9.]+)\) ]] && ! version_le "${BASH_REMATCH[1]}" "$glibc_max"; then
      fail "$name requires '$req': EL9's glibc is $glibc_max"
    fi
  done < <(rpm -qpR "$rpmf" 2>/dev/null | sed 's/[[:space:]]*$//')

  payload=$(mktemp -d)
  (cd "$payload" && rpm2cpio "$rpmf" | cpio -idm --quiet)
  while IFS= read -r -d '' f; do
    [[ $(head -c4 "$f" | od -An -c | tr -d ' ') == 177ELF ]] || continue
    rel=${f#"$payload"}
    needs=$(readelf --version-info --wide "$f" | sed -n 's/.*Name: \([A-Z_]*_[0-9][0-9.]*\).*/\1/p' | sort -uV)
    glibc=$(grep '^GLIBC_[0-9]' <<<"$needs" | sed 's/^GLIBC_//' | sort -V | tail -1 || true)
    [[ -z $glibc ]] || version_le "$glibc" "$glibc_max" ||
      fail "$name: $rel needs GLIBC_$glibc (EL9 has $glibc_max)"
    gcc=$(grep '^GCC_[0-9]' <<<"$needs" | sed 's/^GCC_//' | sort -V | tail -1 || true)
    [[ -z $gcc ]] || version_le "${gcc%%.*}" "$gcc_max" ||
      fail "$name: $rel needs GCC_$gcc (EL9's libgcc_s is GCC $gcc_max's)"
    cxx=$(grep -E '^(GLIBCXX|CXXABI)_' <<<"$needs" | tr '\n' ' ' || true)
    [[ -z $cxx ]] || fail "$name: $rel needs libstdc++ versions ($cxx): libstdc++ must be static"
    # A run path could load a library from the build host's tree (the libcurl stub).
    if readelf -d "$f" | grep -Eq '\((RPATH|RUNPATH)\)'; then
      fail "$name: $rel has a run path: $(readelf -d "$f" | grep -E 'RPATH|RUNPATH')"
    fi
    echo "$name: $rel: GLIBC_${glibc:-none}, GCC_${gcc:-none}, needs $(readelf -d "$f" |
      sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
  done < <(find "$payload" -type f -print0)
  rm -rf "$payload"
done

# rpmlint: clean, or an override with its reason in the rpmlintrc; a filter
# nothing matches is an error too, unless the source RPM (whose filters those
# are) is missing.
rpmlintrc=$top/packaging/rpm/firstfault.rpmlintrc
unused=()
if ! compgen -G "$dist/*.src.rpm" >/dev/null; then
  echo "note: no source RPM in $dist (made only from a git checkout: scripts/package.sh --srpm)"
  unused=(--ignore-unused-rpmlintrc)
fi
rpmlint "${unused[@]}" -r "$rpmlintrc" "$dist"/*.rpm || fail "rpmlint (overrides: $rpmlintrc)"
# The spec itself, as the source RPM carries it (the repository's, with its version).
for srpm in "$dist"/*.src.rpm; do
  [[ -f $srpm ]] || continue
  specdir=$(mktemp -d)
  (cd "$specdir" && rpm2cpio "$srpm" | cpio -idm --quiet firstfault.spec)
  # (most filters are for the packages, not the spec: unused here)
  rpmlint --ignore-unused-rpmlintrc -r "$rpmlintrc" "$specdir/firstfault.spec" || fail "rpmlint on the spec of $(basename "$srpm")"
  rm -rf "$specdir"
done
eval "$("$top/packaging/versions.sh")"
rpmspec -P --define "ff_version $FF_VERSION" "$top/packaging/rpm/firstfault.spec" >/dev/null ||
  fail "rpmspec -P: the spec does not parse for the source build"

((failed == 0)) && echo "RPM requirements EL9 can satisfy"
exit "$failed"
