#!/usr/bin/env bash
# check_contents.sh DIST_DIR EXPECTED_DIR: each package's contents, listed as
#   <mode> <owner/group> <path>        every file and directory
#   conffile <path>                     (deb: DEBIAN/conffiles; rpm: %config(noreplace))
# compared with EXPECTED_DIR/<package>.<deb|rpm>.txt. Also checks the Slurm
# dependency of the node package, and that no maintainer script touches
# slurmd, slurmctld or slurm.conf. A new rule file means a new expected line.
set -euo pipefail
dist=$1 expected=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
command -v rpm >/dev/null || { echo "rpm not installed: skipped"; exit 77; }
eval "$("$top/packaging/versions.sh")"
# packaging_build skipped (a tool or the plugin missing): nothing to check.
compgen -G "$dist/firstfault-*.deb" >/dev/null || { echo "no packages in $dist: skipped"; exit 77; }
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# shellcheck disable=SC2317  # called as ${kind}_listing
deb_listing() {
  dpkg-deb -c "$1" | awk '{ p = $6; sub(/^\./, "", p); print $1, $2, p }'
  dpkg-deb --info "$1" conffiles 2>/dev/null | sed 's/^/conffile /' || true
}
# shellcheck disable=SC2317  # called as ${kind}_listing
rpm_listing() {
  rpm -qp --qf '[%{FILEMODES:perms} %{FILEUSERNAME}/%{FILEGROUPNAME} %{FILENAMES}\n]' "$1"
  rpm -qp --qf '[%{FILEFLAGS:fflags}|%{FILENAMES}\n]' "$1" |
    awk -F'|' '$1 ~ /c/ && $1 ~ /n/ { print "conffile", $2 }'
}

for pkg in firstfault-node firstfault-agent; do
  deb=$(ls "$dist/${pkg}_${FF_VERSION}-1+slurm${SLURM_SERIES}_amd64.deb")
  rpmf=$(ls "$dist/${pkg}-${FF_VERSION}-1.slurm${SLURM_SERIES}.x86_64.rpm")
  for kind in deb rpm; do
    file=$deb; [[ $kind == rpm ]] && file=$rpmf
    if ! diff -u "$expected/$pkg.$kind.txt" <(${kind}_listing "$file" | LC_ALL=C sort); then
      fail "$(basename "$file"): contents differ from $expected/$pkg.$kind.txt"
    fi
  done
  # Maintainer scripts: nothing that restarts Slurm or edits its configuration.
  scripts=$(mktemp -d)
  dpkg-deb -e "$deb" "$scripts/DEBIAN"
  rpm -qp --scripts "$rpmf" >"$scripts/rpm-scripts"
  if grep -rEn 'slurmd|slurmctld|slurm\.conf' "$scripts" --exclude=conffiles --exclude=md5sums --exclude=control; then
    fail "$pkg: a maintainer script mentions slurmd, slurmctld or slurm.conf"
  fi
  if [[ $pkg == firstfault-agent ]]; then  # removal stops the agent (when systemd runs)
    grep -q 'deb-systemd-invoke stop firstfault-agent.service' "$scripts/DEBIAN/prerm" ||
      fail "$pkg.deb: prerm does not stop the agent"
    grep -q 'disable --now firstfault-agent.service' "$scripts/rpm-scripts" ||
      fail "$pkg.rpm: %preun does not stop the agent"
  fi
  rm -rf "$scripts"
done

# The plugin loads only into the Slurm release it was built against.
depends=$(dpkg-deb -f "$dist/firstfault-node_${FF_VERSION}-1+slurm${SLURM_SERIES}_amd64.deb" Depends)
[[ $depends == *"slurm-client (>= $SLURM_SERIES), slurm-client (<< $SLURM_NEXT)"* ]] ||
  fail "firstfault-node.deb Depends lacks the Slurm $SLURM_SERIES bounds: $depends"
requires=$(rpm -qp --requires "$dist/firstfault-node-${FF_VERSION}-1.slurm${SLURM_SERIES}.x86_64.rpm")
if ! grep -qx "slurm >= $SLURM_SERIES" <<<"$requires" || ! grep -qx "slurm < $SLURM_NEXT" <<<"$requires"; then
  fail "firstfault-node.rpm Requires lacks the Slurm $SLURM_SERIES bounds"
fi

((failed == 0)) && echo "package contents as expected"
exit "$failed"
