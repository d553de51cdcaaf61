#!/usr/bin/env bash
# install_test.sh DIST_DIR: installs both .debs on this machine with dpkg,
# checks what an operator relies on, removes them again:
#   - files, owners and modes; conffiles; the unit's ExecStart line
#   - `firstfault --version` says the packaged version
#   - the plugin exports plugin_name/type/version and slurm_spank_* only
#   - the shipped configs are accepted by the collector and the agent
#   - installing again keeps a changed conffile
#   - `dpkg -r` keeps /var/lib/firstfault (the database), leaves no process
#     running from the removed files; `dpkg -P` keeps the database too.
# Needs root and dpkg. Skipped (77) when a firstfault package is already
# installed: the test must not remove an operator's installation.
set -euo pipefail
dist=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
[[ $(id -u) -eq 0 ]] || { echo "not root: skipped"; exit 77; }
command -v dpkg >/dev/null || { echo "no dpkg: skipped"; exit 77; }
for pkg in firstfault-node firstfault-agent; do
  if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -qv "not-installed"; then
    echo "$pkg is already installed on this machine: skipped"; exit 77
  fi
done
eval "$("$top/packaging/versions.sh")"
# packaging_build skipped (a tool or the plugin missing): nothing to check.
compgen -G "$dist/firstfault-*.deb" >/dev/null || { echo "no packages in $dist: skipped"; exit 77; }
deb_version="${FF_VERSION}-1+slurm${SLURM_SERIES}"
plugin=/usr/lib/x86_64-linux-gnu/slurm-wlm/spank_firstfault.so
state_dir=/var/lib/firstfault
# The agent runs as SlurmUser `slurm` (the unit's User=): the postinst gives
# it the state directory when that user exists.
state_owner=root:root
getent passwd slurm >/dev/null && state_owner=slurm:slurm

failed=0
fail() { echo "FAIL: $*"; failed=1; }
scratch=$(mktemp -d)
state_dir_existed=0
[[ -e $state_dir ]] && state_dir_existed=1
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {  # leaves the machine as it was, even after a failed check
  dpkg -P firstfault-node firstfault-agent >/dev/null 2>&1 || true
  ((state_dir_existed)) || rm -rf "$state_dir"
  rm -rf "$scratch"
}
trap cleanup EXIT

echo "# dpkg -i"
dpkg -i "$dist/firstfault-node_${deb_version}_amd64.deb" "$dist/firstfault-agent_${deb_version}_amd64.deb"

echo "# files, owners, modes"
expect_stat() {  # PATH MODE OWNER:GROUP
  local got
  got=$(stat -c '%a %U:%G' "$1" 2>/dev/null) || { fail "$1 missing"; return; }
  [[ $got == "$2 $3" ]] || fail "$1 is $got, expected $2 $3"
}
expect_stat /usr/bin/firstfault 755 root:root
expect_stat /usr/libexec/firstfault/firstfault-collect 755 root:root
expect_stat /usr/libexec/firstfault/firstfault-epilog 755 root:root
expect_stat /usr/libexec/firstfault/firstfault-slurm-job 755 root:root
expect_stat "$plugin" 644 root:root
expect_stat /etc/firstfault/node.yaml 644 root:root
expect_stat /etc/firstfault/agent.yaml 644 root:root
expect_stat /etc/slurm/plugstack.conf.d/firstfault.conf 644 root:root
expect_stat /lib/systemd/system/firstfault-agent.service 644 root:root
expect_stat "$state_dir" 750 "$state_owner"
for f in /usr/share/firstfault/rules/kinds.yaml /usr/share/firstfault/sql/migrations/001_initial.sql; do
  expect_stat "$f" 644 root:root
done
for conffile in /etc/firstfault/node.yaml /etc/firstfault/agent.yaml /etc/slurm/plugstack.conf.d/firstfault.conf; do
  dpkg-query -W -f='${Conffiles}\n' firstfault-node firstfault-agent | grep -q " $conffile " ||
    fail "$conffile is not a conffile"
done
grep -qx 'ExecStart=/usr/bin/firstfault agent --config /etc/firstfault/agent.yaml' \
  /lib/systemd/system/firstfault-agent.service || fail "unexpected ExecStart in the unit"
grep -qx 'User=slurm' /lib/systemd/system/firstfault-agent.service ||
  fail "the unit does not run the agent as SlurmUser slurm"
grep -q '^#optional spank_firstfault.so ' /etc/slurm/plugstack.conf.d/firstfault.conf ||
  fail "the plugstack drop-in is not shipped commented out"

echo "# firstfault --version"
version_line=$(/usr/bin/firstfault --version)
echo "$version_line"
[[ $version_line == "firstfault $FF_VERSION "* ]] ||
  fail "firstfault --version does not say $FF_VERSION (CMakeLists.txt project version)"

echo "# plugin symbols"
symbols=$(nm -D --defined-only "$plugin" | awk '{print $3}' | LC_ALL=C sort)
echo "$symbols" | tr '\n' ' '; echo
for required in plugin_name plugin_type plugin_version slurm_spank_init; do
  grep -qx "$required" <<<"$symbols" || fail "$plugin does not export $required"
done
unexpected=$(grep -Evx 'plugin_name|plugin_type|plugin_version|slurm_spank_[a-z_]+' <<<"$symbols" || true)
[[ -z $unexpected ]] || fail "$plugin exports more than the SPANK interface: $unexpected"

echo "# the shipped configs are accepted"
# The node config with a scratch spool: flush of an empty outbox exits 0.
sed "s|^spool:.*|spool: $scratch/spool|" /etc/firstfault/node.yaml >"$scratch/node.yaml"
/usr/libexec/firstfault/firstfault-collect flush --config "$scratch/node.yaml" ||
  fail "firstfault-collect rejects the shipped node.yaml"
# The agent's Slurm helper loads (libslurm resolves) and refuses what is not
# a job id with its usage status, 2, before asking slurmctld anything.
rc=0
/usr/libexec/firstfault/firstfault-slurm-job 'not-a-job' >/dev/null 2>&1 || rc=$?
((rc == 2)) || fail "firstfault-slurm-job exited $rc for a bad job id, expected 2"
# The agent config on a free port and a scratch state dir: a config error
# exits 64 at once; anything else (running until timeout, no munge) is fine.
sed -e "s|^listen:.*|listen: 127.0.0.1:0|" -e "s|/var/lib/firstfault|$scratch/state|" \
  /etc/firstfault/agent.yaml >"$scratch/agent.yaml"
rc=0
timeout 3 /usr/bin/firstfault agent --config "$scratch/agent.yaml" >"$scratch/agent.log" 2>&1 || rc=$?
echo "agent exited $rc (124: ran until the timeout)"
if ((rc == 64)); then
  cat "$scratch/agent.log"
  fail "firstfault agent rejects the shipped agent.yaml"
fi
# As the unit runs it: SlurmUser `slurm`, not root. It starts, creates its
# database, and nothing it writes is readable by others.
if getent passwd slurm >/dev/null; then
  mkdir -p "$scratch/slurm-state"
  chown slurm:slurm "$scratch/slurm-state"
  chmod 755 "$scratch"
  sed -e "s|^listen:.*|listen: 127.0.0.1:0|" -e "s|/var/lib/firstfault|$scratch/slurm-state|" \
    /etc/firstfault/agent.yaml >"$scratch/agent-slurm.yaml"
  chmod 644 "$scratch/agent-slurm.yaml"
  rc=0
  timeout 3 runuser -u slurm -- /usr/bin/firstfault agent --config "$scratch/agent-slurm.yaml" \
    >"$scratch/agent-slurm.log" 2>&1 || rc=$?
  echo "agent as slurm exited $rc (124: ran until the timeout)"
  if ((rc != 124)); then
    cat "$scratch/agent-slurm.log"
    fail "firstfault agent does not run as SlurmUser slurm"
  fi
  expect_stat "$scratch/slurm-state/firstfault.db" 640 slurm:slurm
  expect_stat "$scratch/slurm-state/jobs" 750 slurm:slurm
fi

echo "# dpkg -i again (as an upgrade does): a changed conffile is kept, nothing asks"
echo "# changed by install_test.sh" >>/etc/firstfault/agent.yaml
dpkg -i "$dist/firstfault-node_${deb_version}_amd64.deb" "$dist/firstfault-agent_${deb_version}_amd64.deb" </dev/null
grep -q '^# changed by install_test.sh$' /etc/firstfault/agent.yaml || fail "reinstalling replaced a changed conffile"
expect_stat "$state_dir" 750 "$state_owner"

echo "# dpkg -r: the database stays, nothing runs"
echo "test database" >"$state_dir/firstfault.db"
dpkg -r firstfault-node firstfault-agent
[[ -f $state_dir/firstfault.db ]] || fail "dpkg -r removed $state_dir/firstfault.db"
for gone in /usr/bin/firstfault "$plugin" /usr/libexec/firstfault/firstfault-collect; do
  [[ ! -e $gone ]] || fail "$gone still there after dpkg -r"
done
[[ -f /etc/firstfault/node.yaml ]] || fail "dpkg -r removed a conffile (only purge should)"
for exe in /proc/[0-9]*/exe; do
  target=$(readlink "$exe" 2>/dev/null) || continue
  case $target in
    /usr/bin/firstfault* | /usr/libexec/firstfault/*) fail "still running after dpkg -r: $exe -> $target" ;;
  esac
done

echo "# dpkg -P: conffiles go, the database stays"
dpkg -P firstfault-node firstfault-agent
[[ ! -e /etc/firstfault/node.yaml && ! -e /etc/slurm/plugstack.conf.d/firstfault.conf ]] ||
  fail "dpkg -P left a conffile"
[[ -f $state_dir/firstfault.db ]] || fail "dpkg -P removed $state_dir/firstfault.db"

((failed == 0)) && echo "install/remove as expected"
exit "$failed"
